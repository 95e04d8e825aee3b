/**
 * The epoch clock of the null server and of the client measuring against it: epoch ms on the
 * monotonic clock, and how far it is from the system clock, so that stamps taken in two processes
 * on one host can be compared (stamp error = arrival − send + offset).
 */

/** Epoch ms on the monotonic clock: `performance.timeOrigin + performance.now()`. */
export const epochNow = (): number => performance.timeOrigin + performance.now();

/**
 * How far this process's `performance.timeOrigin + performance.now()` is from the system clock,
 * ms: read at the instant `Date.now()` ticks (spin until it changes), median of `ticks` readings
 * (≈ 1 ms each). Two processes' values differ by the offset between their epoch stamps, to about
 * a microsecond, so stamps taken in different processes can be compared.
 */
export function epochMinusRealtimeMs(ticks = 11): number {
  const diffs: number[] = [];
  for (let i = 0; i < ticks; i++) {
    const d0 = Date.now();
    let d = d0;
    let t = 0;
    while (d === d0) {
      t = epochNow();
      d = Date.now();
    }
    diffs.push(t - d);
  }
  diffs.sort((a, b) => a - b);
  return diffs[diffs.length >> 1];
}
