/**
 * The pure stream timer: raw bytes (or text) plus their arrival times in, a {@link RequestRecord}
 * out. No sockets, no timers: the caller stamps each network chunk when it arrives, before any
 * parsing, and hands over the stamp, so tests can script arrival times exactly.
 *
 * Every SSE event gets the arrival time of the network chunk that completed it. Parsing is
 * incremental (eventsource-parser), then one `JSON.parse` per event; a network chunk that is one
 * plain chat token chunk of vLLM's exact shape skips both (`./fast-chunk.ts`).
 *
 * What counts (vLLM fact sheet §1, §7):
 * - a *chunk* is an event whose `choices` is non-empty; the first one sets `firstChunkMs`
 *   (for chat that is the role-only chunk);
 * - a *token chunk* is a chunk whose text is non-empty (chat `delta.content`, or
 *   `reasoning_content`/`reasoning`/`tool_calls`; completions `text`), or whose continuous-usage
 *   `completion_tokens` rose. It carries that rise in tokens, else 1;
 * - `usage: null` and a missing `usage` mean the same; the last `usage` seen gives
 *   `promptTokens`, `outputTokens` and `cachedTokens` (the `choices: []` usage chunk is last);
 * - `finish_reason` is read from any chunk, including the one with the last delta;
 * - `data: [DONE]` ends the stream; an `{"error": ...}` event is `stream_error`; bad SSE or
 *   JSON is `parse`; the body ending without `[DONE]` is `incomplete`. The first error wins.
 *
 * The derived metrics (TTFT, TPOT, ITL, E2E, queue) and how they differ from `vllm bench serve`
 * are defined in `./metrics.ts` ({@link deriveMetrics}).
 */

import { createParser, type EventSourceMessage, type EventSourceParser, type ParseError } from 'eventsource-parser';
import { StringDecoder } from 'node:string_decoder';
import type { Api, ErrorCode, RequestError, RequestRecord } from '../types';
import { choiceContent, choiceHasText, isObj, preview, readUsage, type ChunkUsage } from './chunk';
import { tokenChunkEvent, type TokenChunkFields } from './fast-chunk';
import { describeStreamError } from './errors';
import { timerRecord, type RecordMeta } from './timer-record';

export type { RecordMeta } from './timer-record';

/** Largest SSE event the parser buffers, in characters (16 Mi); beyond it the stream is `parse`. */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/**
 * Accumulates one streamed response. Methods take an optional arrival time `t` in ms;
 * when omitted they stamp `now()`. Once finished (`[DONE]`, an error, or {@link end}) further
 * input is ignored.
 */
export class StreamTimer {
  // State so far; the fields mean what the RequestRecord fields of the same name mean (ms stamps).
  /** `[DONE]` was seen. */
  done = false;
  /** `[DONE]`, an error, or the end of the body was seen; later input is ignored. */
  finished = false;
  /** The first failure, if any. */
  error: RequestError | undefined;
  /** HTTP status, once headers arrived. */
  status: number | undefined;
  /** Request handed to the socket; NaN until {@link sent}. */
  startMs = NaN;
  headersMs: number | undefined;
  firstChunkMs: number | undefined;
  firstTokenMs: number | undefined;
  readonly chunkMs: number[] = [];
  readonly chunkTokens: number[] = [];
  endMs: number | undefined;
  promptTokens: number | undefined;
  /** `usage.completion_tokens` as last reported (see {@link outputTokens} for the fallback). */
  usageOutputTokens: number | undefined;
  cachedTokens: number | undefined;
  finishReason: string | undefined;

  private lastCompletionTokens = 0;
  private t = 0;
  /** The parser buffers nothing (its last text ended with a blank line); false until its first feed (BOM handling). */
  private atBoundary = false;
  private decoder: StringDecoder | undefined;
  private readonly parser: EventSourceParser;

  /**
   * @param api which endpoint's chunk shape to expect.
   * @param now clock in ms; default `() => performance.now()`.
   * @param textParts when given, the answer text of each chunk is appended to it (multi-turn runs only).
   */
  constructor(
    readonly api: Api,
    private readonly now: () => number = () => performance.now(),
    private readonly textParts?: string[],
  ) {
    this.parser = createParser({
      onEvent: (ev) => this.onEvent(ev),
      onError: (err) => this.onParseError(err),
      maxBufferSize: MAX_EVENT_CHARS,
    });
  }

  /** The request was handed to the socket (`startMs`). */
  sent(t: number = this.now()): void {
    this.startMs = t;
  }

  /** Response headers arrived with this HTTP status. */
  headers(status: number, t: number = this.now()): void {
    this.status = status;
    this.headersMs = t;
  }

  /**
   * A network chunk of the body arrived at `t`. Bytes are decoded as UTF-8 across chunk
   * boundaries; strings are taken as already decoded.
   */
  feed(chunk: string | Uint8Array, t: number = this.now()): void {
    if (this.finished) return;
    this.t = t;
    let text: string;
    if (typeof chunk === 'string') text = chunk;
    else {
      this.decoder ??= new StringDecoder('utf8');
      text = this.decoder.write(chunk as Buffer);
    }
    if (text.length === 0) return;
    // Fast path (./fast-chunk.ts): the parser buffers nothing and the text is one plain token chunk.
    const f = this.atBoundary && this.textParts === undefined ? tokenChunkEvent(text) : undefined;
    if (f !== undefined) {
      this.onTokenChunk(f);
      return;
    }
    this.parser.feed(text);
    // After text that ends with a blank line the parser has dispatched or dropped every event and buffers nothing.
    this.atBoundary = text.endsWith('\n\n');
  }

  /** The body ended (cleanly) at `t`; without `[DONE]` that is `incomplete`. */
  end(t: number = this.now()): void {
    if (this.finished) return;
    const n = this.chunkMs.length;
    this.fail('incomplete', `stream ended without 'data: [DONE]' after ${n} token chunk${n === 1 ? '' : 's'}`, t);
  }

  /** Record a failure at `t` (the first failure wins) and finish. */
  fail(code: ErrorCode, message: string, t: number = this.now()): void {
    if (this.finished) return;
    this.error = { code, message };
    this.finish(t);
  }

  /** Output tokens: the server's `usage.completion_tokens`, else the sum of `chunkTokens`. */
  get outputTokens(): number | undefined {
    if (this.usageOutputTokens !== undefined) return this.usageOutputTokens;
    if (this.chunkTokens.length > 0) return this.chunkTokens.reduce((a, b) => a + b, 0);
    return this.done ? 0 : undefined;
  }

  /** The finished record, derived metrics included. `ok` means `[DONE]` and no error. Unknown fields are left out. */
  toRecord(meta: RecordMeta): RequestRecord {
    return timerRecord(this, meta, this.endMs ?? this.now());
  }

  private finish(t: number): void {
    this.finished = true;
    this.endMs = t;
  }

  private onParseError(err: ParseError): void {
    if (err.type === 'invalid-retry') return; // harmless; vLLM never sends `retry:`
    const line = err.line !== undefined ? `: '${preview(err.line)}'` : '';
    this.fail('parse', `malformed SSE (${err.message})${line}; expected 'data: {json}' lines from a streaming endpoint`, this.t);
  }

  private onEvent(ev: EventSourceMessage): void {
    if (this.finished) return;
    const t = this.t;
    const data = ev.data;
    if (data === '[DONE]') {
      this.done = true;
      this.finish(t);
      return;
    }
    let obj: unknown;
    try {
      obj = JSON.parse(data);
    } catch {
      this.fail('parse', `malformed JSON in SSE event: '${preview(data)}'`, t);
      return;
    }
    if (!isObj(obj)) {
      this.fail('parse', `SSE event is not a JSON object: '${preview(data)}'`, t);
      return;
    }
    if (obj.error !== undefined && obj.error !== null) {
      this.fail('stream_error', describeStreamError(obj), t);
      return;
    }
    const choices = obj.choices;
    const hasChoices = Array.isArray(choices) && choices.length > 0;
    const usage = readUsage(obj.usage);
    this.usage(usage);
    if (!hasChoices) {
      if (usage.completionTokens !== undefined) this.usageOutputTokens = usage.completionTokens;
      return;
    }
    const c = (choices as unknown[])[0];
    if (isObj(c)) {
      if (typeof c.finish_reason === 'string') this.finishReason = c.finish_reason;
      this.textParts?.push(choiceContent(c, this.api));
    }
    this.choiceChunk(t, usage.completionTokens, isObj(c) && choiceHasText(c, this.api), isObj(c));
  }

  /** A token chunk read by the fast path (finish_reason null, first choice an object; see ./fast-chunk.ts). */
  private onTokenChunk(f: TokenChunkFields): void {
    this.usage(f);
    this.choiceChunk(this.t, f.completionTokens, f.hasText, true);
  }

  private usage(u: ChunkUsage): void {
    if (u.promptTokens !== undefined) this.promptTokens = u.promptTokens;
    if (u.cachedTokens !== undefined) this.cachedTokens = u.cachedTokens;
  }

  /** A chunk with choices at `t`; continuous usage (`completion`) counts only here, the `choices: []` chunk repeats the total. */
  private choiceChunk(t: number, completion: number | undefined, hasText: boolean, isChoice: boolean): void {
    let rise = 0;
    const counted = completion !== undefined;
    if (counted) {
      this.usageOutputTokens = completion;
      rise = completion - this.lastCompletionTokens;
      this.lastCompletionTokens = completion;
    }
    if (this.firstChunkMs === undefined) this.firstChunkMs = t;
    if (!isChoice) return;
    if (rise > 0 || hasText) {
      if (this.firstTokenMs === undefined) this.firstTokenMs = t;
      this.chunkMs.push(t);
      this.chunkTokens.push(counted ? Math.max(rise, 0) : 1);
    }
  }
}

/**
 * A {@link StreamTimer} for one request.
 * @param api `'chat'` (default) or `'completions'`.
 * @param now clock in ms, default `() => performance.now()`; inject a scripted one in tests.
 */
export function createStreamTimer(api: Api = 'chat', now?: () => number): StreamTimer {
  return new StreamTimer(api, now);
}
