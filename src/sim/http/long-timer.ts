/**
 * Timers of any length. Node holds a timer delay in a 32-bit signed int: a delay above
 * 2³¹−1 ms (about 24.8 days) is replaced by 1 ms with a `TimeoutOverflowWarning`, so a
 * 30-day fault would fire at once. `setLongTimeout` chains timers of at most that length.
 */

/** The longest delay Node's `setTimeout` holds, ms (2³¹−1, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A pending long timer. */
export interface LongTimer {
  /** Cancel it (safe to call twice, or after it fired). */
  clear(): void;
}

/**
 * Calls `fn` once after `ms` milliseconds, however large `ms` is (a finite number ≥ 0;
 * throws otherwise), by chaining timers of at most `MAX_TIMER_MS`. With `unref`, the timer
 * does not keep the process alive.
 */
export function setLongTimeout(fn: () => void, ms: number, opts: { unref?: boolean } = {}): LongTimer {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`timer delay must be a finite number of ms ≥ 0, got ${String(ms)}`);
  }
  let handle: NodeJS.Timeout | undefined;
  let cleared = false;
  const due = performance.now() + ms;
  const arm = (left: number) => {
    handle = setTimeout(
      () => {
        if (cleared) return;
        const rest = due - performance.now();
        if (rest > 1) arm(rest);
        else fn();
      },
      Math.min(Math.max(0, left), MAX_TIMER_MS),
    );
    if (opts.unref) handle.unref();
  };
  arm(ms);
  return {
    clear() {
      cleared = true;
      if (handle) clearTimeout(handle);
      handle = undefined;
    },
  };
}
