/**
 * One run clock across worker threads. `performance.timeOrigin` is per thread, and `timeOrigin +
 * performance.now()` of two threads may differ by how the wall clock and the monotonic clock were read
 * at each thread's start. Aligning each thread's epoch clock to the system clock (the same method as
 * src/calibrate/epoch-clock.ts, which sits in a layer above this one) puts every thread's stamps on
 * one clock, to about a microsecond.
 */

/**
 * This thread's `performance.timeOrigin + performance.now()` minus the system clock, ms: read at the
 * instant `Date.now()` ticks (spin until it changes), median of `ticks` readings (≈ 1 ms each).
 */
export function threadEpochMinusRealtimeMs(ticks = 11): number {
  const diffs: number[] = [];
  for (let i = 0; i < ticks; i++) {
    const d0 = Date.now();
    let d = d0;
    let t = 0;
    while (d === d0) {
      t = performance.timeOrigin + performance.now();
      d = Date.now();
    }
    diffs.push(t - d);
  }
  diffs.sort((a, b) => a - b);
  return diffs[diffs.length >> 1];
}

/** The run's origin (`performance.now()` ms of this thread) on the realtime-aligned epoch clock, ms. */
export function originRealtimeMs(originPerfMs: number): number {
  return performance.timeOrigin + originPerfMs - threadEpochMinusRealtimeMs();
}

/** A run clock in this thread (ms since the run's origin) from {@link originRealtimeMs} taken in the main thread. */
export function threadRunClock(originRealtime: number): () => number {
  const shift = performance.timeOrigin - threadEpochMinusRealtimeMs() - originRealtime;
  return () => performance.now() + shift;
}
