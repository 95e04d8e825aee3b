/**
 * One clock for every process on this machine: CLOCK_MONOTONIC in ms. `performance.now()` counts from
 * this thread's own start (libuv's `uv_hrtime`, CLOCK_MONOTONIC on Linux), so two processes' readings
 * cannot be compared; `process.hrtime` reads the same clock without the per-thread origin. The offset
 * between the two is read once per thread, so each stamp stays one `performance.now()` call.
 * Used to compare the simulator's send times with the client's arrival stamps (src/runner/stamp-lag.ts).
 */

/** CLOCK_MONOTONIC ms minus `performance.now()` for this thread: the closest of a few back-to-back readings. */
export function monoOffsetMs(): number {
  let best = Number.POSITIVE_INFINITY;
  let offset = 0;
  for (let i = 0; i < 5; i++) {
    const a = performance.now();
    const h = Number(process.hrtime.bigint()) / 1e6;
    const b = performance.now();
    if (b - a < best) {
      best = b - a;
      offset = h - (a + b) / 2;
    }
  }
  return offset;
}

let cached: number | undefined;

/** CLOCK_MONOTONIC now, ms (comparable across processes and threads on one machine). */
export function monoNowMs(): number {
  cached ??= monoOffsetMs();
  return performance.now() + cached;
}
