/**
 * Prompt text: the course's prompts, and prompts of a target token length.
 *
 * A prompt's length in tokens depends on the model's tokenizer, so `promptOfTokens` asks the
 * server (`POST /tokenize`, which vLLM and the simulator have) and adjusts the text until the
 * count matches. Without a server it estimates (≈0.62 tokens per Chinese character, ≈1.3 per
 * English word) and says so: `estimated: true`.
 */

import { resolveApiKey, serverRoot, targetHeaders } from '../client/url';

/** Course prompt (seed 003 happy path, max_tokens 128): "list 5 key challenges of AI's future". */
export const CHALLENGES_PROMPT = '请列举 5 个关于人工智能未来发展的关键挑战，并简要说明原因。';
/** One sentence of the course's long prompt. */
export const LONG_PROMPT_SENTENCE = '在人工智能领域，显存带宽与计算能力的平衡是至关重要的。';
/** Course long prompt (seed 003 chunked-prefill experiment): the sentence ×300, ≈4k tokens. */
export const LONG_PROMPT = LONG_PROMPT_SENTENCE.repeat(300);
/** Course short prompt ("hello"). */
export const HELLO_PROMPT = '你好';
/** One sentence of the course's lithography prompt. */
export const LITHOGRAPHY_SENTENCE = '详细阐述半导体制造工艺中光刻机的原理及其在制程微缩中的作用。';
/** Course KV-pressure prompt (seed 003, 60 requests × 200 output tokens): the sentence ×15, ≈1500 tokens (per the course). */
export const LITHOGRAPHY_PROMPT = LITHOGRAPHY_SENTENCE.repeat(15);

/** The course prompts by name. */
export const COURSE_PROMPTS = {
  challenges: CHALLENGES_PROMPT,
  long: LONG_PROMPT,
  hello: HELLO_PROMPT,
  lithography: LITHOGRAPHY_PROMPT,
} as const;

/** Tokens per Chinese (CJK) character, for estimates. */
export const TOKENS_PER_CJK_CHAR = 0.62;
/** Tokens per English word (run of letters/digits), for estimates. */
export const TOKENS_PER_EN_WORD = 1.3;

const CJK = /[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]/g;
const WORD = /[A-Za-z0-9]+/g;
const SYMBOL = /[!-/:-@[-`{-~]/g;

/**
 * Estimated token count of `text` without a tokenizer: 0.62 per CJK character (CJK
 * punctuation included), 1.3 per English word, 1 per ASCII punctuation mark. Rounded.
 */
export function estimateTokens(text: string): number {
  const cjk = text.match(CJK)?.length ?? 0;
  const words = text.match(WORD)?.length ?? 0;
  const symbols = text.match(SYMBOL)?.length ?? 0;
  return Math.round(cjk * TOKENS_PER_CJK_CHAR + words * TOKENS_PER_EN_WORD + symbols);
}

/** A prompt built to a token target. */
export interface SizedPrompt {
  text: string;
  /** Tokens of `text`: counted by the server's tokenizer, or estimated. */
  tokens: number;
  /** True when `tokens` is an estimate (no `/tokenize` was available). */
  estimated: boolean;
  method: 'tokenize' | 'estimate';
  /** Why the estimate was used, when it was. */
  note?: string;
}

/** Options of `promptOfTokens`. */
export interface PromptOfTokensOptions {
  /** Server to count with (`POST {baseUrl}/tokenize`); without it the length is estimated. */
  baseUrl?: string;
  /** Model name for `/tokenize`; optional for a single-model server. */
  model?: string;
  /** Bearer token for `/tokenize`; default `$LOADLAB_API_KEY`, else `$OPENAI_API_KEY` (as the run's client). */
  apiKey?: string;
  /** Extra headers for `/tokenize` (the run's `--header`s, e.g. a gateway's key header). */
  headers?: Record<string, string>;
  /** Text repeated (and cut) to fill the prompt; default the course's long-prompt sentence. */
  unit?: string;
  /** Per-call timeout for `/tokenize`, ms; default 10000. */
  timeoutMs?: number;
}

/**
 * Count tokens of `text` with the server's `POST /tokenize` (completion form, no special
 * tokens: the text's own length). Throws on any HTTP or network failure.
 */
export async function tokenizeCount(text: string, opts: PromptOfTokensOptions & { baseUrl: string }): Promise<number> {
  const body: Record<string, unknown> = { prompt: text, add_special_tokens: false };
  if (opts.model) body.model = opts.model;
  const apiKey = resolveApiKey(opts.apiKey);
  const headers = { 'content-type': 'application/json', ...targetHeaders({ apiKey, headers: opts.headers }) };
  const res = await fetch(`${serverRoot(opts.baseUrl)}/tokenize`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
  });
  const json = (await res.json().catch(() => undefined)) as { count?: unknown } | undefined;
  if (!res.ok || typeof json?.count !== 'number') {
    const hint =
      res.status === 401 || res.status === 403
        ? apiKey
          ? ': the server refused the API key'
          : ': the server wants an API key; pass --api-key (apiKey) or set LOADLAB_API_KEY'
        : '';
    throw new Error(`POST /tokenize answered ${res.status}${hint}`);
  }
  return json.count;
}

function cut(unit: string, chars: number): string {
  const reps = Math.ceil(chars / unit.length);
  return unit.repeat(Math.max(1, reps)).slice(0, Math.max(1, chars));
}

/**
 * A prompt of about `targetTokens` tokens, made of `unit` repeated and cut at a character.
 * With `baseUrl` the server's tokenizer counts it and the length is adjusted (up to 8
 * rounds; usually exact, else the closest found); otherwise, or when `/tokenize` fails, the
 * count is an estimate and `estimated` is true.
 */
export async function promptOfTokens(targetTokens: number, opts: PromptOfTokensOptions = {}): Promise<SizedPrompt> {
  if (!Number.isInteger(targetTokens) || targetTokens < 1) {
    throw new TypeError(`targetTokens must be an integer ≥ 1, got ${targetTokens}`);
  }
  const unit = opts.unit ?? LONG_PROMPT_SENTENCE;
  if (!unit) throw new TypeError('unit must be a non-empty string');
  const unitRate = Math.max(estimateTokens(unit), 1) / unit.length;
  let chars = Math.max(1, Math.round(targetTokens / unitRate));
  const estimate = (note?: string): SizedPrompt => {
    let text = cut(unit, chars);
    // Nudge the cut so the estimate meets the target (the estimate rounds).
    for (let i = 0; i < 50 && estimateTokens(text) < targetTokens; i++) text = cut(unit, ++chars);
    const p: SizedPrompt = { text, tokens: estimateTokens(text), estimated: true, method: 'estimate' };
    if (note) p.note = note;
    return p;
  };
  if (!opts.baseUrl) return estimate('no baseUrl given: length estimated from character/word counts');
  const baseUrl = opts.baseUrl;
  let best: { text: string; tokens: number } | undefined;
  try {
    for (let round = 0; round < 8; round++) {
      const text = cut(unit, chars);
      const tokens = await tokenizeCount(text, { ...opts, baseUrl });
      if (!best || Math.abs(tokens - targetTokens) < Math.abs(best.tokens - targetTokens)) best = { text, tokens };
      if (tokens === targetTokens) break;
      // Secant step on characters; always move at least one character.
      const perChar = tokens / text.length;
      const step = Math.round((targetTokens - tokens) / perChar);
      chars = Math.max(1, chars + (step === 0 ? Math.sign(targetTokens - tokens) : step));
    }
  } catch (err) {
    return estimate(`POST ${serverRoot(baseUrl)}/tokenize unavailable (${(err as Error).message}): length estimated`);
  }
  return { text: best!.text, tokens: best!.tokens, estimated: false, method: 'tokenize' };
}
