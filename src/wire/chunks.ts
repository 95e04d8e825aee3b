/**
 * vLLM's wire shapes, written once: the streamed `chat.completion.chunk` / `text_completion`
 * chunk JSON, the usage object, the error bodies, and SSE framing. Every model-less
 * vLLM-shaped writer (the simulator, the null server, the test helpers)
 * builds its bytes here, so they agree byte for byte.
 *
 * Field order and presence follow pydantic's `model_dump_json(exclude_unset=True)` of
 * `ChatCompletionStreamResponse` / `CompletionStreamResponse`
 * (`vllm/entrypoints/openai/chat_completion/protocol.py`, `completion/protocol.py`; the
 * serving code in `chat_completion/serving.py` / `completion/serving.py` decides which fields
 * are set): compact JSON, `"usage"` before `"prompt_token_ids"`, `"stop_reason"` only on the
 * finishing chat chunk, `"usage":null` on completions chunks of builds before 2026-04.
 * Error events mid-stream are
 * Python `json.dumps` (spaces after `:` and `,`, non-ASCII escaped).
 */

/** SSE end of stream. */
export const SSE_DONE = 'data: [DONE]\n\n';

/** One SSE event holding `json`. */
export function sseData(json: string): string {
  return `data: ${json}\n\n`;
}

/** What every chunk of one response repeats. */
export interface ChunkHead {
  api: 'chat' | 'completions';
  /** Full response id, e.g. `chatcmpl-<x-request-id>` or `cmpl-…`. */
  id: string;
  /** Unix seconds, computed once per request. */
  created: number;
  /** Served model name. */
  model: string;
}

/** The chunk prefix `{"id":…,"object":…,"created":…,"model":…` (no closing brace); compute once per response. */
export function chunkHead(h: ChunkHead): string {
  const object = h.api === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  return `{"id":${JSON.stringify(h.id)},"object":"${object}","created":${h.created},"model":${JSON.stringify(h.model)}`;
}

/** Token counts of a `usage` object. */
export interface UsageCounts {
  promptTokens: number;
  completionTokens: number;
  /**
   * Adds `prompt_tokens_details: {cached_tokens}` (`--enable-prompt-tokens-details`); `null` writes
   * `"prompt_tokens_details":null` (a `UsageInfo` dumped with `exclude_unset=False`: completions chunks).
   */
  cachedTokens?: number | null;
}

/** vLLM's `UsageInfo` JSON: prompt_tokens, total_tokens, completion_tokens[, prompt_tokens_details]. */
export function usageJson(u: UsageCounts): string {
  const details =
    u.cachedTokens === null
      ? ',"prompt_tokens_details":null'
      : u.cachedTokens !== undefined
        ? `,"prompt_tokens_details":{"cached_tokens":${u.cachedTokens}}`
        : '';
  return `{"prompt_tokens":${u.promptTokens},"total_tokens":${u.promptTokens + u.completionTokens},"completion_tokens":${u.completionTokens}${details}}`;
}

/** One choice of one chunk. */
export interface ChoiceParts {
  /** `choices[].index` (the n-th choice); default 0. */
  index?: number;
  /** Chat only: the role-only chunk (`delta: {role: "assistant", content: ""}`). */
  role?: boolean;
  /** The text this chunk adds. */
  text?: string;
  /** Set on the finishing chunk: `stop`, `length`, `abort`, … */
  finishReason?: string;
  /** With `finishReason`: the stop string or stop-token id that matched; default null. */
  stopReason?: string | number | null;
  /** Raw JSON of `choices[].logprobs`; default `null`. */
  logprobs?: string;
}

/** Optional chunk-level fields. */
export interface ChunkTail {
  /** Raw `usage` JSON (continuous usage); chat: omitted when undefined. Completions: `null` when undefined and `usageNull`. */
  usage?: string;
  /** Completions: write `"usage":null` on chunks without usage (vLLM before 2026-04-27). Default true. */
  usageNull?: boolean;
  /** Raw `,"key":value` pairs appended before the closing brace (a non-vLLM extension, e.g. the null server's send time). */
  extra?: string;
  /**
   * Write `"prompt_token_ids":null` / `"token_ids":null` (vLLM PR #22587, 2025-08, `return_token_ids`); default true.
   * False gives the older chunks (vLLM 0.6: choices of `index`, `delta`/`text`, `logprobs`, `finish_reason`, `stop_reason`).
   */
  tokenIds?: boolean;
  /** Completions: the prompt's token ids instead of `"prompt_token_ids":null` (vLLM 0.10's first chunk of a choice). */
  promptTokenIds?: readonly number[];
}

function finish(p: ChoiceParts): string {
  if (p.finishReason === undefined) return '"finish_reason":null';
  return `"finish_reason":${JSON.stringify(p.finishReason)},"stop_reason":${JSON.stringify(p.stopReason ?? null)}`;
}

/** A streamed chunk with one choice, as vLLM writes it (no `data: ` prefix). `head` is from {@link chunkHead}. */
export function chunkJson(api: 'chat' | 'completions', head: string, p: ChoiceParts, t: ChunkTail = {}): string {
  const index = p.index ?? 0;
  const lp = p.logprobs ?? 'null';
  const extra = t.extra ?? '';
  const ids = t.tokenIds !== false;
  if (api === 'completions') {
    const choice = `{"index":${index},"text":${JSON.stringify(p.text ?? '')},"logprobs":${lp},${p.finishReason === undefined ? '"finish_reason":null,"stop_reason":null' : finish(p)}${ids ? `,"prompt_token_ids":${t.promptTokenIds ? `[${t.promptTokenIds.join(',')}]` : 'null'},"token_ids":null` : ''}}`;
    const usage = t.usage !== undefined ? `,"usage":${t.usage}` : t.usageNull === false ? '' : ',"usage":null';
    return `${head},"choices":[${choice}]${usage}${extra}}`;
  }
  const usage = t.usage !== undefined ? `,"usage":${t.usage}` : '';
  if (p.role) {
    return `${head},"choices":[{"index":${index},"delta":{"role":"assistant","content":""},"logprobs":${lp},"finish_reason":null}]${usage}${ids ? ',"prompt_token_ids":null' : ''}${extra}}`;
  }
  return `${head},"choices":[{"index":${index},"delta":{"content":${JSON.stringify(p.text ?? '')}},"logprobs":${lp},${finish(p)}${ids ? ',"token_ids":null' : ''}}]${usage}${extra}}`;
}

/** The final usage chunk: `choices: []` and the totals (sent when `include_usage`). */
export function usageChunkJson(head: string, usage: string): string {
  return `${head},"choices":[],"usage":${usage}}`;
}

/** vLLM's `error.type` for a status (HTTP phrase for Starlette errors, class name for vLLM's own). */
export const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'BadRequestError',
  401: 'Unauthorized',
  404: 'NotFoundError',
  429: 'Too Many Requests',
  500: 'InternalServerError',
  501: 'NotImplementedError',
  503: 'Service Unavailable',
};

/** The error object `{message, type, param, code}` that vLLM's error bodies carry. */
export interface ErrorInfo {
  message: string;
  type: string;
  param: string | null;
  code: number;
}

/** vLLM's HTTP error body: 'new' `{"error":{…}}` (vLLM ≥ 0.10.1) or 'old' `{"object":"error",…}`. */
export function errorBody(e: ErrorInfo, shape: 'new' | 'old' = 'new'): unknown {
  return shape === 'new' ? { error: { ...e } } : { object: 'error', ...e };
}

/** Python `json.dumps` with default separators and `ensure_ascii` (for in-stream error events). */
export function pyJsonDumps(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string')
    return JSON.stringify(v).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(pyJsonDumps).join(', ')}]`;
  return `{${Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${pyJsonDumps(k)}: ${pyJsonDumps(x)}`)
    .join(', ')}}`;
}

/** vLLM's mid-stream error event JSON: `{"error": {…}}` in `json.dumps` spacing. */
export function errorEventJson(e: ErrorInfo): string {
  return pyJsonDumps({ error: e });
}
