/**
 * Prompt tokenizing for the HTTP server, off the event loop: a cache hit or a short prompt
 * is encoded at once, anything longer in a worker (tokenize-pool.ts). A prompt whose length
 * in characters already proves it too long for `max_model_len` is refused before any
 * tokenizing, and a prompt too long to serve is never cached.
 */
import type { ApiError } from './reply';
import { TokenizePool } from './tokenize-pool';
import { renderChat, type ChatMessageIn, type SimTokenizer } from './tokens';
import { vllmValidationError } from './vllm-errors';

/** Prompts up to this many characters are encoded on the event loop (a few ms at worst). */
export const INLINE_PROMPT_CHARS = 256;

/**
 * How many UTF-16 units of input NFC normalization (Qwen's tokenizer normalizes with NFC)
 * can fold into one unit of output: a composed character decomposes canonically into at
 * most 4 code points (e.g. U+1F82), and each input code point takes at most 2 units.
 */
export const NFC_MAX_SHRINK = 8;

/**
 * A lower bound on the tokens of a prompt of `chars` UTF-16 units: after NFC it has at least
 * `chars / NFC_MAX_SHRINK` units, and no token stands for more than `maxTokenChars` of them.
 * For Qwen2.5 (longest token 128 units) that is one token per 1024 characters.
 */
export function minPromptTokens(chars: number, maxTokenChars: number): number {
  return Math.ceil(chars / (Math.max(1, maxTokenChars) * NFC_MAX_SHRINK));
}

/**
 * vLLM's context-length 400 for a prompt refused by its length in characters. vLLM counts
 * the tokens first and reports the exact number (`vllm/entrypoints/openai/serving_engine.py`,
 * `_validate_input`); the simulator reports the lower bound and says "at least" (a named deviation).
 */
export function contextLengthError(least: number, maxOut: number, maxModelLen: number): ApiError {
  return vllmValidationError(
    `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${maxOut} output tokens and your prompt contains at least ${least} input tokens, for a total of at least ${least + maxOut} tokens. Please reduce the length of the input prompt or the number of requested output tokens.`,
    'input_tokens',
    least,
  );
}

const isContent = (c: unknown) => c == null || typeof c === 'string' || Array.isArray(c);

/** Chat messages that render safely (a string role, content a string, a list of parts or none); else undefined. */
export function renderableMessages(v: unknown): ChatMessageIn[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const ok = v.every((m) => m !== null && typeof m === 'object' && typeof m.role === 'string' && isContent(m.content));
  return ok ? (v as ChatMessageIn[]) : undefined;
}

/**
 * The text a generation body's prompt is tokenized from (the chat template applied), or
 * undefined when the body has none that renders (then the request validation answers it).
 */
export function promptOf(api: 'chat' | 'completions', body: Record<string, unknown>): string | undefined {
  if (api === 'chat') {
    const messages = renderableMessages(body.messages);
    return messages && renderChat(messages);
  }
  const p = body.prompt;
  if (typeof p === 'string') return p;
  return Array.isArray(p) && p.length === 1 && typeof p[0] === 'string' ? p[0] : undefined;
}

/**
 * The output tokens a body asks for (`max_completion_tokens`, else `max_tokens`); unset, the default
 * the context-length check counts (16 for completions, 0 for chat: `checkedOutput` in requests.ts);
 * 0 when not an integer ≥ 0.
 */
export function requestedOutput(api: 'chat' | 'completions', body: Record<string, unknown>): number {
  const v = api === 'chat' && body.max_completion_tokens != null ? body.max_completion_tokens : body.max_tokens;
  if (v === undefined && api === 'completions') return 16;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0;
}

/** Encodes prompts off the event loop for one server; `close()` ends its workers. */
export class OffLoopTokenizer {
  private readonly pool = new TokenizePool();

  constructor(readonly tok: SimTokenizer) {}

  /** Resolves once its early worker (when the engine is pinned) has booted; the server listens after it. */
  booted(): Promise<void> {
    return this.pool.booted();
  }

  /**
   * Throws vLLM's context-length 400 when `text` alone has at least `maxModelLen` tokens by its
   * length in characters (every such prompt is refused, whatever `maxOut`); otherwise the exact
   * checks after tokenizing (requests.ts) decide.
   */
  checkLength(text: string, maxOut: number, maxModelLen: number): void {
    const least = minPromptTokens(text.length, this.tok.maxTokenChars);
    if (least >= maxModelLen) throw contextLengthError(least, maxOut, maxModelLen);
  }

  /**
   * Token ids of `text`, from the cache, on the loop (≤ `INLINE_PROMPT_CHARS`), or from a
   * worker. Cached only when at most `cacheMaxTokens` long (default: always, within the byte bound).
   */
  async encode(text: string, cacheMaxTokens = Infinity): Promise<number[]> {
    const hit = this.tok.cache.get(text);
    if (hit) return hit;
    if (text.length <= INLINE_PROMPT_CHARS) return this.tok.encodePrompt(text);
    const ids = await this.pool.encode(text);
    if (ids.length <= cacheMaxTokens) this.tok.cache.set(text, ids);
    return ids;
  }

  /** The tokenizer as seen by one request: `text`'s ids are already known; everything else as `tok`. */
  knowing(text: string, ids: number[]): SimTokenizer {
    const view = Object.create(this.tok) as SimTokenizer;
    view.encodePrompt = (t: string) => (t === text ? ids : this.tok.encodePrompt(t));
    return view;
  }

  /**
   * `JSON.parse` of a big UTF-8 body in a worker (see body.ts). With `forPrompt`, strings that
   * alone make any prompt too long for `maxModelLen` are left out (see `checkCut`), so they are
   * never copied back to the event loop.
   */
  parseJson(bytes: Buffer, maxModelLen?: number): Promise<{ value: unknown; cutChars: number }> {
    const cut = maxModelLen === undefined ? 0 : maxModelLen * Math.max(1, this.tok.maxTokenChars) * NFC_MAX_SHRINK;
    return this.pool.parseJson(bytes, cut);
  }

  /**
   * Throws vLLM's context-length 400 when the parser left out a string of `cutChars`
   * characters: it is at least `maxModelLen` tokens long. (A deviation: vLLM would parse it and,
   * if it sat in a field the simulator ignores, serve the request.)
   */
  checkCut(cutChars: number, maxOut: number, maxModelLen: number): void {
    if (cutChars > 0) throw contextLengthError(minPromptTokens(cutChars, this.tok.maxTokenChars), maxOut, maxModelLen);
  }

  /** End the worker threads. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
