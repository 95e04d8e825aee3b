/**
 * Chained block hashes for prefix caching, as vLLM's `hash_block_tokens(parent, token ids)`:
 * a full block's hash covers its own tokens AND every token before it, so a lookup can only
 * hit a prefix. 53-bit (two mixed 32-bit lanes), non-cryptographic: the simulator only needs
 * distinct prompts not to collide in practice.
 */

/** The token sequence a hash reads: prompt ids, then generated tokens (ids derived from `salt`). */
export interface HashedSeq {
  readonly promptTokenIds: readonly number[];
  /** Seeds the pseudo ids of generated tokens; the engine knows how many there are, not which. */
  readonly salt: number;
}

const TWO21 = 2097152;

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Token id at position `i`: prompt ids, then per-request pseudo ids for generated tokens. */
export function tokenAt(seq: HashedSeq, i: number): number {
  const p = seq.promptTokenIds.length;
  return i < p ? seq.promptTokenIds[i] : fmix(Math.imul(seq.salt, 0x9e3779b1) + (i - p)) & 0x7fffffff;
}

/**
 * Hash of the block of tokens [start, start + blockSize) chained on `parent` (the previous
 * block's hash; 0 for the first block). Returns an integer in [0, 2^53).
 */
export function chainBlockHash(parent: number, seq: HashedSeq, start: number, blockSize: number): number {
  let h1 = Math.floor(parent / TWO21) ^ 0x9e3779b9;
  let h2 = (parent % TWO21) ^ 0x7f4a7c15;
  for (let i = start; i < start + blockSize; i++) {
    const t = tokenAt(seq, i);
    h1 = Math.imul(h1 ^ t, 0xcc9e2d51);
    h1 = (h1 << 15) | (h1 >>> 17);
    h2 = Math.imul(h2 + t, 0x1b873593);
    h2 = (h2 << 13) | (h2 >>> 19);
  }
  return (fmix(h1 ^ h2) >>> 0) * TWO21 + (fmix(h2 + 0x165667b1) >>> 11);
}
