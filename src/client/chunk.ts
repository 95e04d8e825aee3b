/**
 * Reading one parsed SSE chunk of vLLM's OpenAI-compatible streaming responses
 * (`vllm/entrypoints/openai/protocol.py`: `ChatCompletionStreamResponse` with `DeltaMessage`
 * `content`/`reasoning_content`/`tool_calls`, `CompletionStreamResponse` with `text`, and
 * `UsageInfo` with `prompt_tokens_details.cached_tokens`). Pure helpers of the stream timer.
 */

import type { Api } from '../types';
import { MAX_MESSAGE_CHARS } from './errors';

/** A parsed JSON object. */
export type Obj = Record<string, unknown>;

/** Is `x` a non-null object? */
export const isObj = (x: unknown): x is Obj => x !== null && typeof x === 'object';
const nonEmpty = (x: unknown): boolean => typeof x === 'string' && x.length > 0;

/**
 * Does this choice carry generated text? Chat: non-empty `delta.content`, `reasoning_content`,
 * `reasoning`, or any `tool_calls`; completions: non-empty `text`.
 */
export function choiceHasText(c: Obj, api: Api): boolean {
  if (api === 'completions') return nonEmpty(c.text);
  const d = c.delta;
  if (!isObj(d)) return false;
  return (
    nonEmpty(d.content) ||
    nonEmpty(d.reasoning_content) ||
    nonEmpty(d.reasoning) ||
    (Array.isArray(d.tool_calls) && d.tool_calls.length > 0)
  );
}

/**
 * The answer text a choice adds: chat `delta.content`, completions `text` ('' when none). Reasoning
 * and tool calls are left out, as vLLM's multi-turn benchmark keeps only `delta.content` for the
 * history (benchmarks/multi_turn/benchmark_serving_multi_turn.py, `send_request`).
 */
export function choiceContent(c: Obj, api: Api): string {
  const x = api === 'completions' ? c.text : isObj(c.delta) ? c.delta.content : undefined;
  return typeof x === 'string' ? x : '';
}

/** The start of `s` for an error message: at most 120 characters (and `MAX_MESSAGE_CHARS`), `…` when cut. */
export function preview(s: string): string {
  const max = Math.min(120, MAX_MESSAGE_CHARS);
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** The token counts a chunk's `usage` reports; a field is absent when not a number (`usage: null` → `{}`). */
export interface ChunkUsage {
  promptTokens?: number;
  cachedTokens?: number;
  completionTokens?: number;
}

/** Read `usage.prompt_tokens`, `usage.prompt_tokens_details.cached_tokens` and `usage.completion_tokens`. */
export function readUsage(usage: unknown): ChunkUsage {
  const out: ChunkUsage = {};
  if (!isObj(usage)) return out;
  if (typeof usage.prompt_tokens === 'number') out.promptTokens = usage.prompt_tokens;
  const details = usage.prompt_tokens_details;
  if (isObj(details) && typeof details.cached_tokens === 'number') out.cachedTokens = details.cached_tokens;
  if (typeof usage.completion_tokens === 'number') out.completionTokens = usage.completion_tokens;
  return out;
}
