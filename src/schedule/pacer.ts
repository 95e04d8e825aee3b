/**
 * Waiting until an absolute time on the monotonic clock, with sub-ms accuracy.
 *
 * Node timers fire late by up to ~1–2 ms (and never early by much), so a plain
 * `setTimeout(target − now)` would deliver open-loop arrivals late and bunched. We sleep with
 * `setTimeout` until ~`spinMs` before the target, then poll with `setImmediate` (which yields
 * to I/O, so in-flight streams keep being read) until the clock passes the target.
 *
 * Pacing against absolute times (schedule start + offset) instead of relative sleeps keeps
 * errors from adding up over a long schedule.
 */

/** Options of `sleepUntil`. */
export interface SleepUntilOptions {
  /** Clock, ms; default `performance.now`. */
  now?: () => number;
  /** Switch from setTimeout to setImmediate polling this many ms before the target; default 2. */
  spinMs?: number;
  /** Stop waiting early when aborted (resolves, does not reject). */
  signal?: AbortSignal;
}

const defaultNow = () => performance.now();

/**
 * Resolve at the first moment `now() ≥ targetMs` (or at once if it already is, or when
 * `signal` aborts). Resolves with the lateness `now() − targetMs` in ms (≥ 0 unless aborted).
 */
export function sleepUntil(targetMs: number, opts: SleepUntilOptions = {}): Promise<number> {
  const now = opts.now ?? defaultNow;
  const spinMs = opts.spinMs ?? 2;
  const signal = opts.signal;
  return new Promise<number>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let imm: ReturnType<typeof setImmediate> | undefined;
    const finish = (t: number) => {
      if (timer !== undefined) clearTimeout(timer);
      if (imm !== undefined) clearImmediate(imm);
      signal?.removeEventListener('abort', onAbort);
      resolve(t - targetMs);
    };
    const onAbort = () => finish(now());
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const poll = () => {
      imm = undefined;
      const t = now();
      const left = targetMs - t;
      if (left <= 0) return finish(t);
      if (left > spinMs + 1) {
        timer = setTimeout(() => {
          timer = undefined;
          poll();
        }, left - spinMs);
      } else {
        imm = setImmediate(poll);
      }
    };
    poll();
  });
}

/** `sleepUntil(now() + ms)`: a relative wait with the same accuracy. */
export function sleepFor(ms: number, opts: SleepUntilOptions = {}): Promise<number> {
  const now = opts.now ?? defaultNow;
  return sleepUntil(now() + ms, opts);
}
