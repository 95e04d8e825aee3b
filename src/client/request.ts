/**
 * One streamed request over undici: send, stamp bytes as they arrive, feed the pure
 * {@link StreamTimer}, enforce the two timeouts, and always resolve with a record.
 *
 * It uses undici's low-level `dispatch()` with a handler, not `request()`, for two stamps:
 * - `startMs` in `onRequestStart`, which undici calls right before it writes the request to a
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
 * `[DONE]` stamp) and the promise resolves once the response has ended and undici has freed the
 * connection (at most {@link DRAIN_GRACE_MS} later), so the caller's next request reuses it.
 */

import type { Dispatcher } from 'undici';
import type { Api, ErrorCode, RequestRecord } from '../types';
import { classifyNetworkError, describeHttpError, httpErrorCode, redact } from './errors';
import { StreamTimer, type RecordMeta } from './timing';

/** After `[DONE]` (or a stream error event), wait at most this long for the response to end before aborting it, ms. */
export const DRAIN_GRACE_MS = 1_000;
/** Longest non-2xx body read for the error message, bytes. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Everything {@link streamRequest} needs; the client fills it in. */
export interface StreamRequestInput {
  /** A Pool (or Agent) for `origin`, sized to the concurrency. */
  dispatcher: Dispatcher;
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
  /** Whole-request timeout, ms. */
  timeoutMs: number;
  /** No bytes for this long is `idle_timeout`, ms. */
  idleTimeoutMs: number;
  /** Aborting it ends the request with code `aborted`. */
  signal?: AbortSignal;
  /** Removed from any error message (the API key). */
  secret?: string;
  meta: RecordMeta;
}

/** Reason given to undici when we cancel a request ourselves (never surfaces in a record). */
class Cancelled extends Error {}

/** Send one streamed request. Never rejects: failures are records with `ok: false`. */
export function streamRequest(input: StreamRequestInput): Promise<RequestRecord> {
  return new Promise<RequestRecord>((resolve) => {
    const { now, timeoutMs, idleTimeoutMs, signal } = input;
    const timer = new StreamTimer(input.api, now);
    let controller: Dispatcher.DispatchController | undefined;
    let responded = false; // headers arrived
    let completed = false; // undici finished the request (end or error)
    let settled = false;
    let draining = false;
    let errorStatus = 0; // non-2xx: collecting the error body
    let errorParts: Buffer[] = [];
    let errorBytes = 0;
    let tm: ReturnType<typeof setTimeout> | undefined;

    const calledMs = now();
    timer.sent(calledMs); // replaced when the request reaches a socket
    let lastByteMs = calledMs;
    const deadlineMs = calledMs + timeoutMs;

    const clearTimer = (): void => {
      if (tm !== undefined) clearTimeout(tm);
      tm = undefined;
    };

    /** Resolve once; `code` set means a failure detected here (not by the timer). */
    const settle = (code?: ErrorCode, message?: string, t: number = now()): void => {
      if (settled) return;
      settled = true;
      if (code !== undefined) timer.fail(code, message ?? code, t);
      else if (!timer.finished) timer.end(t);
      signal?.removeEventListener('abort', onAbort);
      clearTimer();
      const err = timer.error;
      if (err !== undefined) err.message = redact(err.message, input.secret); // server text may echo the key
      // Not finished by undici: abort it (frees the connection; a queued request is aborted
      // in onRequestStart, before anything is written).
      if (!completed && controller !== undefined) controller.abort(new Cancelled('cancelled by loadlab'));
      resolve(timer.toRecord(input.meta));
    };

    /**
     * The response ended. Right after this callback undici schedules the setImmediate that frees
     * the connection for the next request; resolve after it (a microtask runs once undici's
     * callback returns, and queues behind it), so a caller that sends at once reuses this
     * connection instead of opening another or waiting in the pool.
     */
    const afterEnd = (fn: () => void): void => {
      clearTimer();
      queueMicrotask(() => setImmediate(fn));
    };

    /** `[DONE]` (or vLLM's error event, which `[DONE]` follows) was read: the record is final; wait for the end. */
    const drain = (): void => {
      draining = true;
      clearTimer();
      tm = setTimeout(() => settle(), DRAIN_GRACE_MS);
    };

    const check = (): void => {
      tm = undefined;
      if (settled) return;
      const t = now();
      if (t >= deadlineMs) {
        settle('timeout', `no complete response within timeoutMs=${timeoutMs} ms; raise timeoutMs or lower the load`, t);
      } else if (t - lastByteMs >= idleTimeoutMs) {
        settle('idle_timeout', `no bytes for idleTimeoutMs=${idleTimeoutMs} ms; the server stalled or is overloaded`, t);
      } else {
        tm = setTimeout(check, Math.max(1, Math.min(deadlineMs, lastByteMs + idleTimeoutMs) - t));
      }
    };

    function onAbort(): void {
      settle('aborted', 'aborted by the caller (AbortSignal)');
    }

    const errorMessage = (): string => describeHttpError(errorStatus, Buffer.concat(errorParts).toString('utf8'));

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (settled) {
          c.abort(new Cancelled('cancelled by loadlab before it was sent'));
          return;
        }
        const t = now(); // the request is about to be written to a connected socket
        timer.sent(t);
        lastByteMs = t;
      },
      onResponseStart(_c, statusCode) {
        if (statusCode < 200) return; // informational (1xx); the real status follows
        const t = now();
        lastByteMs = t;
        responded = true;
        if (settled) return;
        timer.headers(statusCode, t);
        if (statusCode < 200 || statusCode >= 300) errorStatus = statusCode;
      },
      onResponseData(_c, chunk) {
        const t = now(); // stamp first: before decoding and parsing
        lastByteMs = t;
        if (settled || draining) return;
        if (errorStatus !== 0) {
          if (errorBytes < MAX_ERROR_BODY_BYTES) errorParts.push(chunk);
          errorBytes += chunk.length;
          if (errorBytes >= MAX_ERROR_BODY_BYTES) settle(httpErrorCode(errorStatus), errorMessage(), t);
          return;
        }
        timer.feed(chunk, t);
        if (!timer.finished) return;
        if (timer.done || timer.error?.code === 'stream_error') drain();
        else settle(undefined, undefined, t); // parse error: stop reading, abort
      },
      onResponseEnd() {
        completed = true;
        if (settled) return;
        const t = now();
        if (errorStatus !== 0) {
          const m = errorMessage();
          errorParts = [];
          afterEnd(() => settle(httpErrorCode(errorStatus), m, t));
          return;
        }
        if (!timer.finished) timer.end(t); // no [DONE]: incomplete
        afterEnd(() => settle());
      },
      onResponseError(_c, err) {
        completed = true;
        if (settled || err instanceof Cancelled) return;
        if (errorStatus !== 0) return settle(httpErrorCode(errorStatus), errorMessage()); // keep what was read
        const e = classifyNetworkError(err, input.origin, responded);
        settle(e.code, e.message);
      },
    };

    if (signal?.aborted) {
      settle('aborted', 'aborted by the caller before it was sent (AbortSignal)', calledMs);
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      input.dispatcher.dispatch({ path: input.path, method: 'POST', headers: input.headers, body: input.body }, handler);
    } catch (err) {
      completed = true;
      settle(classifyNetworkError(err, input.origin, false).code, `could not send: ${String(err)}`); // e.g. a closed pool
    }
    if (!settled && tm === undefined) tm = setTimeout(check, Math.min(timeoutMs, idleTimeoutMs));
  });
}
