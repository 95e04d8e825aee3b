/**
 * The simulator's cache of prompt token ids (the lessons resend the same long prompts many
 * times), least recently used first out, bounded by an estimate of the bytes it holds rather
 * than by a count of entries: 256 entries of 1 M characters held 620 MB of heap.
 */

/** Default bound of the whole cache, bytes (estimated): 32 MiB. */
export const PROMPT_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Estimated bytes one entry holds: the key at 2 bytes a character (V8's two-byte strings; a
 * one-byte string holds half), 8 bytes a token id (an array of small integers on 64-bit V8),
 * and ~100 bytes of map entry and array header.
 */
export function entryBytes(text: string, ids: readonly number[]): number {
  return 2 * text.length + 8 * ids.length + 100;
}

/** An LRU map from prompt text to token ids, bounded in bytes. */
export class PromptCache {
  private readonly map = new Map<string, number[]>();
  private held = 0;

  /**
   * `maxBytes`: bound of the whole cache (default `PROMPT_CACHE_BYTES`); `maxEntryBytes`:
   * entries bigger than this are never kept (default an eighth of `maxBytes`).
   */
  constructor(
    readonly maxBytes = PROMPT_CACHE_BYTES,
    readonly maxEntryBytes = Math.floor(maxBytes / 8),
  ) {}

  /** Bytes held now (estimated, see `entryBytes`). */
  get bytes(): number {
    return this.held;
  }

  /** Entries held now. */
  get size(): number {
    return this.map.size;
  }

  /** The ids of `text`, marking it most recently used; undefined when not held. */
  get(text: string): number[] | undefined {
    const hit = this.map.get(text);
    if (hit) {
      this.map.delete(text);
      this.map.set(text, hit);
    }
    return hit;
  }

  /** Keeps `ids` for `text` unless the entry alone is over `maxEntryBytes`; evicts the oldest to fit. True if kept. */
  set(text: string, ids: number[]): boolean {
    const size = entryBytes(text, ids);
    if (size > this.maxEntryBytes) return false;
    const old = this.map.get(text);
    if (old) {
      this.map.delete(text);
      this.held -= entryBytes(text, old);
    }
    while (this.held + size > this.maxBytes && this.map.size > 0) {
      const [k, v] = this.map.entries().next().value!;
      this.map.delete(k);
      this.held -= entryBytes(k, v);
    }
    this.map.set(text, ids);
    this.held += size;
    return true;
  }
}
