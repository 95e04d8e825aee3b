/**
 * The one stop signal of a run: every in-flight request and the pacer listen on it. It fires on
 * the caller's `signal` and, unless turned off, on SIGINT (Ctrl-C, or a notebook's "interrupt
 * kernel", which tslab delivers to the process as SIGINT): stop sending, cancel what is in
 * flight, keep and summarise what was measured.
 */

import { setMaxListeners } from 'node:events';

/** A run's stop signal and how to let go of the listeners it added. */
export interface RunStop {
  /** Aborted on the caller's abort or on SIGINT; its `reason` is the caller's reason or an `interrupted (SIGINT)` error. */
  signal: AbortSignal;
  /** Remove the caller-signal and SIGINT listeners (idempotent). */
  detach(): void;
}

/**
 * Start watching for a stop. `listeners` is how many listeners the signal may get without a
 * warning (one per request that can be in flight, plus slack).
 * @param signal the caller's abort signal, if any (already aborted → the run stops at once).
 * @param abortOnSigint listen for SIGINT while the run goes; default true.
 */
export function watchRunStop(signal: AbortSignal | undefined, abortOnSigint: boolean | undefined, listeners: number): RunStop {
  const stop = new AbortController();
  setMaxListeners(listeners, stop.signal);
  const onUserAbort = () => stop.abort(signal?.reason);
  if (signal?.aborted) stop.abort(signal.reason);
  else signal?.addEventListener('abort', onUserAbort, { once: true });
  const onSigint = () => stop.abort(new Error('interrupted (SIGINT)'));
  if (abortOnSigint !== false) process.on('SIGINT', onSigint);
  return {
    signal: stop.signal,
    detach: () => {
      signal?.removeEventListener('abort', onUserAbort);
      process.removeListener('SIGINT', onSigint);
    },
  };
}

/**
 * The duration stop rule of a run, as its manifest records it (`load.options.stopRule`): issuing
 * stops `durationMs` after the measured load starts (warm-up not counted); requests issued before
 * the deadline run to completion (within the request timeout) and are all recorded; requests
 * intended at or after it are never sent. `--num-prompts` / `requests` is the upper bound.
 */
export interface DurationStopRule {
  rule: 'duration';
  durationMs: number;
  /** Run-clock ms when issuing stopped (measured load start + durationMs). */
  deadlineMs: number;
  /** What happens to requests in flight at the deadline: they finish and are recorded. */
  inFlight: 'finish';
  /** The upper bound on measured requests. */
  maxRequests: number;
  /** Measured requests issued (intended before the deadline). */
  issued: number;
  /** What ended the issuing: the deadline, the count (all `maxRequests` issued first) or an interrupt. */
  stoppedBy: 'duration' | 'count' | 'interrupt';
}

/** Throws a TypeError naming the fix unless `durationMs` is undefined or a finite number > 0. */
export function checkDurationMs(durationMs: unknown): void {
  if (durationMs === undefined) return;
  if (typeof durationMs !== 'number' || !Number.isFinite(durationMs) || durationMs <= 0) {
    throw new TypeError(
      `durationMs must be a finite number of ms > 0 (stop issuing requests that long after the load starts), got ${String(durationMs)}`,
    );
  }
}

/** The stop rule a finished run records. */
export function durationStopRule(
  durationMs: number,
  deadlineMs: number,
  maxRequests: number,
  issued: number,
  interrupted: boolean,
): DurationStopRule {
  const stoppedBy = interrupted ? 'interrupt' : issued < maxRequests ? 'duration' : 'count';
  return { rule: 'duration', durationMs, deadlineMs, inFlight: 'finish', maxRequests, issued, stoppedBy };
}
