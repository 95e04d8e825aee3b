/**
 * One streamed request: send, stamp bytes as they arrive, feed the pure {@link StreamTimer},
 * enforce the two timeouts, and always resolve with a record.
 *
 * It speaks undici's low-level `dispatch()` with a handler, to the lean pool (./h1-pool.ts) or to
 * undici's `Pool`, for two stamps:
 * - `startMs` in `onRequestStart`, which either pool calls right before it writes the request to a
 *   connected socket. Waiting for a free connection, connecting, and undici's idle-socket check
 *   (one event-loop turn on a reused keep-alive socket) happen before it, so they show up in
 *   `queueMs`, not in TTFT. A request that never reached a socket keeps the time of the call.
 * - every body chunk in `onResponseData`, stamped first thing, before UTF-8 decoding, SSE or
 *   JSON parsing; no stream object sits between the socket parser and the clock.
 *
 * Timeouts use one timer per request, re-armed only when it fires (not per chunk): it fires at
 * min(deadline, lastByte + idle) and checks the `lastByteMs` stamp the data callback keeps. The
 * whole-request deadline counts from the call, the idle clock from the last byte (or the send).
 *
 * Cleanup: every exit path either reads the response to its end or aborts it, clears the timer
 * and removes the caller's abort listener. After `[DONE]` the record is final (`endMs` is the
 * `[DONE]` stamp) and the promise resolves once the response has ended and the pool has freed the
 * connection (at most {@link DRAIN_GRACE_MS} later), so the caller's next request reuses it.
 */

import type { Dispatcher } from 'undici';
import type { Api, ErrorCode, RequestRecord } from '../types';
import type { StreamDispatcher } from './h1-pool';
import { classifyNetworkError, describeHttpError, httpErrorCode, redact } from './errors';
import type { ArrivalClock } from './chunk-stamp';
import { StreamTimer, type RecordMeta } from './timing';

/** After `[DONE]` (or a stream error event), wait at most this long for the response to end before aborting it, ms. */
export const DRAIN_GRACE_MS = 1_000;
/** Longest non-2xx body read for the error message, bytes. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Everything {@link streamRequest} needs; the client fills it in. */
export interface StreamRequestInput {
  /** A pool for `origin`, sized to the concurrency: the lean one (./h1-pool.ts) or undici's. */
  dispatcher: StreamDispatcher;
  /** `http://host:port`, named in connection error messages. */
  origin: string;
  /** Request path, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  /** JSON text of the body. */
  body: string;
  api: Api;
  /** Clock in ms. */
  now: () => number;
  /** Clock for arriving response bytes (headers and body), ms; default `now` (./chunk-stamp). */
  dataNow?: ArrivalClock;
  /** Whole-request timeout, ms. */
  timeoutMs: number;
  /** No bytes for this long is `idle_timeout`, ms. */
  idleTimeoutMs: number;
  /** Aborting it ends the request with code `aborted`. */
  signal?: AbortSignal;
  /** Removed from any error message (the API key). */
  secret?: string;
  meta: RecordMeta;
  /**
   * Called once, just before the record resolves, with the answer text received (chat
   * `delta.content` / completions `text`, joined). Only multi-turn runs ask: the text is never
   * kept otherwise, and never written to a record.
   */
  onText?: (text: string) => void;
}

/** Reason given to the pool when we cancel a request ourselves (never surfaces in a record). */
class Cancelled extends Error {}

/** Send one streamed request. Never rejects: failures are records with `ok: false`. */
export function streamRequest(input: StreamRequestInput): Promise<RequestRecord> {
  return new Promise<RequestRecord>((resolve) => new StreamingRequest(input, resolve).start());
}

/** The state of one request in flight, from the call until its record resolves (once). */
class StreamingRequest {
  private readonly timer: StreamTimer;
  private readonly textParts: string[] | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private responded = false; // headers arrived
  private completed = false; // the pool finished the request (end or error)
  private settled = false;
  private draining = false;
  private errorStatus = 0; // non-2xx: collecting the error body
  private errorParts: Buffer[] = [];
  private errorBytes = 0;
  private tm: ReturnType<typeof setTimeout> | undefined;
  private readonly calledMs: number;
  private lastByteMs: number;
  private readonly deadlineMs: number;

  constructor(
    private readonly input: StreamRequestInput,
    private readonly resolve: (r: RequestRecord) => void,
  ) {
    this.textParts = input.onText ? [] : undefined;
    this.timer = new StreamTimer(input.api, input.now, this.textParts);
    this.calledMs = input.now();
    this.timer.sent(this.calledMs); // replaced when the request reaches a socket
    this.lastByteMs = this.calledMs;
    this.deadlineMs = this.calledMs + input.timeoutMs;
  }

  /** Dispatch the request and arm the timeout timer (or settle at once when already aborted). */
  start(): void {
    const { signal, timeoutMs, idleTimeoutMs } = this.input;
    if (signal?.aborted) {
      this.settle('aborted', 'aborted by the caller before it was sent (AbortSignal)', this.calledMs);
      return;
    }
    signal?.addEventListener('abort', this.onAbort, { once: true });
    try {
      const { path, headers, body } = this.input;
      this.input.dispatcher.dispatch({ path, method: 'POST', headers, body }, this.handler());
    } catch (err) {
      this.completed = true;
      this.settle(classifyNetworkError(err, this.input.origin, false).code, `could not send: ${String(err)}`); // e.g. a closed pool
    }
    if (!this.settled && this.tm === undefined) this.tm = setTimeout(this.check, Math.min(timeoutMs, idleTimeoutMs));
  }

  private readonly onAbort = (): void => {
    this.settle('aborted', 'aborted by the caller (AbortSignal)');
  };

  private clearTimer(): void {
    if (this.tm !== undefined) clearTimeout(this.tm);
    this.tm = undefined;
  }

  /** Resolve once; `code` set means a failure detected here (not by the timer). */
  private settle(code?: ErrorCode, message?: string, t: number = this.input.now()): void {
    if (this.settled) return;
    this.settled = true;
    const timer = this.timer;
    if (code !== undefined) timer.fail(code, message ?? code, t);
    else if (!timer.finished) timer.end(t);
    this.input.signal?.removeEventListener('abort', this.onAbort);
    this.clearTimer();
    const err = timer.error;
    if (err !== undefined) err.message = redact(err.message, this.input.secret); // server text may echo the key
    // Not finished by the pool: abort it (frees the connection; a queued request is aborted
    // in onRequestStart, before anything is written).
    if (!this.completed && this.controller !== undefined) this.controller.abort(new Cancelled('cancelled by loadlab'));
    if (this.textParts) this.input.onText?.(this.textParts.join(''));
    this.resolve(timer.toRecord(this.input.meta));
  }

  /**
   * The response ended. Right after this callback undici schedules the setImmediate that frees the
   * connection (the lean pool frees it before); resolve after it (a microtask runs once undici's callback
   * returns, and queues behind it), so a caller that sends at once reuses the connection.
   */
  private afterEnd(fn: () => void): void {
    this.clearTimer();
    queueMicrotask(() => setImmediate(fn));
  }

  /** `[DONE]` (or vLLM's error event, which `[DONE]` follows) was read: the record is final; wait for the end. */
  private drain(): void {
    this.draining = true;
    this.clearTimer();
    this.tm = setTimeout(() => this.settle(), DRAIN_GRACE_MS);
  }

  private readonly check = (): void => {
    this.tm = undefined;
    if (this.settled) return;
    const { timeoutMs, idleTimeoutMs } = this.input;
    const t = this.input.now();
    if (t >= this.deadlineMs) {
      this.settle('timeout', `no complete response within timeoutMs=${timeoutMs} ms; raise timeoutMs or lower the load`, t);
    } else if (t - this.lastByteMs >= idleTimeoutMs) {
      this.settle('idle_timeout', `no bytes for idleTimeoutMs=${idleTimeoutMs} ms; the server stalled or is overloaded`, t);
    } else {
      this.tm = setTimeout(this.check, Math.max(1, Math.min(this.deadlineMs, this.lastByteMs + idleTimeoutMs) - t));
    }
  };

  private errorMessage(): string {
    return describeHttpError(this.errorStatus, Buffer.concat(this.errorParts).toString('utf8'));
  }

  /** The pool's callbacks (undici's handler API), each stamping the clock first. */
  private handler(): Dispatcher.DispatchHandler {
    return {
      onRequestStart: (c) => {
        this.controller = c;
        if (this.settled) {
          c.abort(new Cancelled('cancelled by loadlab before it was sent'));
          return;
        }
        const t = this.input.now(); // the request is about to be written to a connected socket
        this.timer.sent(t);
        this.lastByteMs = t;
      },
      onResponseStart: (_c, statusCode) => {
        if (statusCode < 200) return; // informational (1xx); the real status follows
        const t = this.input.dataNow?.(this) ?? this.input.now();
        this.lastByteMs = t;
        this.responded = true;
        if (this.settled) return;
        this.timer.headers(statusCode, t);
        if (statusCode < 200 || statusCode >= 300) this.errorStatus = statusCode;
      },
      onResponseData: (_c, chunk) => this.onData(chunk),
      onResponseEnd: () => this.onEnd(),
      onResponseError: (_c, err) => {
        this.completed = true;
        if (this.settled || err instanceof Cancelled) return;
        if (this.errorStatus !== 0) return this.settle(httpErrorCode(this.errorStatus), this.errorMessage()); // keep what was read
        const e = classifyNetworkError(err, this.input.origin, this.responded);
        this.settle(e.code, e.message);
      },
    };
  }

  private onData(chunk: Buffer): void {
    const t = this.input.dataNow?.(this) ?? this.input.now(); // stamp first: before decoding and parsing
    this.lastByteMs = t;
    if (this.settled || this.draining) return;
    if (this.errorStatus !== 0) {
      if (this.errorBytes < MAX_ERROR_BODY_BYTES) this.errorParts.push(Buffer.from(chunk)); // the lean pool reuses its buffer
      this.errorBytes += chunk.length;
      if (this.errorBytes >= MAX_ERROR_BODY_BYTES) this.settle(httpErrorCode(this.errorStatus), this.errorMessage(), t);
      return;
    }
    this.timer.feed(chunk, t);
    if (!this.timer.finished) return;
    if (this.timer.done || this.timer.error?.code === 'stream_error') this.drain();
    else this.settle(undefined, undefined, t); // parse error: stop reading, abort
  }

  private onEnd(): void {
    this.completed = true;
    if (this.settled) return;
    const t = this.input.now();
    if (this.errorStatus !== 0) {
      const m = this.errorMessage();
      this.errorParts = [];
      const status = this.errorStatus;
      this.afterEnd(() => this.settle(httpErrorCode(status), m, t));
      return;
    }
    if (!this.timer.finished) this.timer.end(t); // no [DONE]: incomplete
    this.afterEnd(() => this.settle());
  }
}
