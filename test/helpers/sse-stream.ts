/**
 * One scripted SSE response over time: the {@link Script} and {@link Failure} types and the
 * writer that turns a script into vLLM-shaped chunks on absolute, drift-free times.
 * Used by `sse-server.ts`; see there for the server and routes.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { SSE_DONE, sseData } from '../../src/wire/chunks';
import { chunkJson, errorEventJson, usageJson, type StreamShape } from './sse-shapes';

/** How a scripted request fails. `afterChunks` counts token chunks sent before the failure (default 2). */
export type Failure =
  /** Read the request, never answer (no headers): for `timeout` / `idle_timeout`. */
  | { mode: 'never' }
  /** Close the socket before any response: `connection_reset`. */
  | { mode: 'hangup' }
  /** Answer `status` with a vLLM error body: `shape` 'new' `{"error":{...}}` (default), 'old' `{"object":"error",...}`, or 'text'. */
  | { mode: 'status'; status: number; message?: string; shape?: 'new' | 'old' | 'text' }
  /** Close the socket mid-stream (FIN; `rst: true` sends a TCP RST instead). */
  | { mode: 'reset'; afterChunks?: number; rst?: boolean }
  /** An `{"error": ...}` event mid-stream (json.dumps spacing), then `data: [DONE]`, as vLLM does. */
  | { mode: 'error-event'; afterChunks?: number; message?: string; code?: number }
  /** One chunk of broken JSON, then the rest of the stream as normal. */
  | { mode: 'malformed'; afterChunks?: number }
  /** End the response cleanly without `data: [DONE]` (default after all chunks and usage). */
  | { mode: 'no-done'; afterChunks?: number }
  /** Stop sending but keep the connection open: for `idle_timeout`. */
  | { mode: 'stall'; afterChunks?: number };

/** What one response looks like. All fields optional; times in ms. */
export interface Script {
  /** Request body received → first token (chat: role chunk + first token chunk, back to back). Default 0. */
  firstTokenDelayMs?: number;
  /** Gap between consecutive token chunks. Default 0. */
  gapMs?: number;
  /** Output tokens. Default the request's `max_tokens`, else 16. */
  tokens?: number;
  /** Tokens per chunk (as with `--stream-interval` or speculative decoding). Default 1. */
  tokensPerChunk?: number;
  /** Delay before the status line and headers. Default 0 (vLLM sends headers at once). */
  headersDelayMs?: number;
  /** `finish_reason` of the last chunk. Default 'length'. With 'stop' the last chunk is the EOS token: `content: ""`. */
  finishReason?: 'length' | 'stop';
  /** 'request' (default) honours `stream_options`; 'none', 'final' (usage chunk only), 'continuous' force it. */
  usage?: 'request' | 'none' | 'final' | 'continuous';
  /** Completions: write `"usage":null` on chunks without usage (vLLM ≤ 2026-04). Default true. */
  usageNull?: boolean;
  /** `usage.prompt_tokens`. Default ⌈characters/4⌉ of the prompt or messages (token-id prompts: their count). */
  promptTokens?: number;
  /** Adds `prompt_tokens_details: {cached_tokens}` to usage. */
  cachedTokens?: number;
  /** Make requests fail this way. */
  fail?: Failure;
  /** Only every n-th request (1-based, counted per route) fails. Default 1: all. */
  failEvery?: number;
}

/** Prompt tokens the script reports by default: ⌈characters/4⌉, or the count of token ids. */
export function estimatePromptTokens(body: Record<string, unknown>): number {
  if (Array.isArray(body.prompt) && typeof body.prompt[0] === 'number') return body.prompt.length;
  let chars = 0;
  if (typeof body.prompt === 'string') chars = body.prompt.length;
  if (Array.isArray(body.messages))
    for (const m of body.messages) chars += String((m as { content?: unknown }).content ?? '').length;
  return Math.max(1, Math.ceil(chars / 4));
}

/** Run `fn` at absolute time `target` (performance.now ms): re-arms if a timer wakes early. */
function at(target: number, fn: () => void, timers: Set<ReturnType<typeof setTimeout>>): void {
  const wait = target - performance.now();
  if (wait <= 0) return fn();
  const h = setTimeout(() => {
    timers.delete(h);
    at(target, fn, timers);
  }, wait);
  timers.add(h);
}

/**
 * Write one scripted 200 stream: headers (after `headersDelayMs`), then chunk k at
 * t0 + firstTokenDelayMs + k·gapMs, usage, `[DONE]`, or the failure the script asks for.
 * @param t0 when the request body was read, performance.now() ms.
 * @param fail the failure for this request, if any (the server applies `failEvery`).
 * @param written receives the epoch time (`performance.timeOrigin + performance.now()`, ms) of
 *   each token chunk write, to compare with a client's stamps across processes.
 */
export function writeScriptedStream(
  req: IncomingMessage,
  res: ServerResponse,
  s: Script,
  body: Record<string, unknown>,
  t0: number,
  fail: Failure | undefined,
  written: number[] = [],
): void {
  const timers = new Set<ReturnType<typeof setTimeout>>();
  res.on('close', () => timers.forEach(clearTimeout));
  const alive = (): boolean => !res.destroyed && !res.writableEnded;
  const write = (line: string): void => {
    if (alive()) res.write(line);
  };
  const so = (body.stream_options ?? {}) as { include_usage?: boolean; continuous_usage_stats?: boolean };
  const mode = s.usage ?? 'request';
  const include = mode === 'final' || mode === 'continuous' || (mode === 'request' && !!so.include_usage);
  const continuous = mode === 'continuous' || (mode === 'request' && include && !!so.continuous_usage_stats);
  const nTokens = Math.max(1, s.tokens ?? (typeof body.max_tokens === 'number' ? body.max_tokens : 16));
  const perChunk = Math.max(1, s.tokensPerChunk ?? 1);
  const nChunks = Math.ceil(nTokens / perChunk);
  const shape: StreamShape = {
    api: /\/v1\/completions$/.test(req.url ?? '') ? 'completions' : 'chat',
    id: String(req.headers['x-request-id'] ?? `${Math.random().toString(16).slice(2, 18)}`),
    created: Math.floor(Date.now() / 1000),
    model: String(body.model ?? 'scripted'),
    promptTokens: s.promptTokens ?? estimatePromptTokens(body),
    cachedTokens: s.cachedTokens,
    usageNull: s.usageNull ?? true,
  };
  const finishReason = s.finishReason ?? 'length';
  // Chunk slot at which a mid-stream failure happens (-1: none); after the last chunk at most.
  const midStream = fail !== undefined && fail.mode !== 'never' && fail.mode !== 'hangup' && fail.mode !== 'status';
  const failAt = midStream ? Math.min(nChunks, Math.max(0, fail.afterChunks ?? (fail.mode === 'no-done' ? nChunks : 2))) : -1;
  const startAt = t0 + (s.firstTokenDelayMs ?? 0);
  const gap = s.gapMs ?? 0;
  let sent = 0; // tokens sent

  const finishStream = (withDone: boolean): void => {
    if (include) write(sseData(usageJson(shape, sent)));
    if (withDone) write(SSE_DONE);
    if (alive()) res.end();
  };
  const step = (k: number): void => {
    if (!alive()) return;
    if (k === failAt && fail) {
      switch (fail.mode) {
        case 'reset':
          // Flush what was written first (destroy() would drop it), then FIN or RST mid-body.
          if (fail.rst) req.socket.write('', () => req.socket.resetAndDestroy());
          else req.socket.end();
          return;
        case 'error-event':
          write(sseData(errorEventJson(fail.message ?? 'Internal server error', fail.code ?? 500)));
          write(SSE_DONE);
          res.end();
          return;
        case 'stall':
          return; // keep the socket open, send nothing more
        case 'no-done':
          return finishStream(false);
        case 'malformed':
          write('data: {"id":"broken","choices":[{"index":0,"delta":{"content":"oops"}\n\n');
          break;
      }
    }
    if (k >= nChunks) return finishStream(true);
    if (k === 0 && shape.api === 'chat') write(sseData(chunkJson(shape, { role: true, usageCount: continuous ? 0 : undefined })));
    const n = Math.min(perChunk, nTokens - sent);
    const last = k === nChunks - 1;
    let text = '';
    for (let i = 0; i < n; i++) text += last && finishReason === 'stop' && i === n - 1 ? '' : ` t${sent + i}`;
    sent += n;
    write(
      sseData(
        chunkJson(shape, { text, finishReason: last ? finishReason : undefined, usageCount: continuous ? sent : undefined }),
      ),
    );
    written.push(performance.timeOrigin + performance.now());
    // A failure scheduled right after the last chunk happens at the next slot.
    if (last && failAt !== nChunks) return finishStream(true);
    at(startAt + (k + 1) * gap, () => step(k + 1), timers);
  };

  const begin = (): void => {
    if (!alive()) return;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
    at(startAt, () => step(0), timers);
  };
  if (s.headersDelayMs) at(t0 + s.headersDelayMs, begin, timers);
  else begin();
}
