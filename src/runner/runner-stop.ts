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
