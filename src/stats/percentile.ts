/**
 * Percentiles and distribution summaries of plain `number[]` samples.
 *
 * Method: numpy's default, `np.percentile(x, p)` with `method='linear'` (Hyndman & Fan type 7):
 * sort, take the virtual index h = (n − 1)·p/100 and interpolate linearly between the two
 * neighbouring order statistics. This is also what `vllm bench serve` and tinybench report,
 * so numbers from LoadLab, vLLM's benchmark and a Python notebook agree.
 */

import type { Distribution } from '../types';

/** `{ n, mean, p50, p95, p99 }` of a latency sample (the seed course's `LatencySummary`). */
export interface LatencySummary {
  n: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
}

/** Throws unless p is a finite number from 0 to 100. */
export function checkPercentile(p: number): void {
  if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p > 100) {
    throw new RangeError(`percentile p must be a number from 0 to 100 (e.g. 99 for p99, not 0.99), got ${String(p)}`);
  }
}

/**
 * Sorted copy of `values` as a Float64Array (numeric order; the input is not touched).
 * Returns `undefined` when any value is NaN, because numpy then answers NaN too.
 */
export function sortedCopy(values: ArrayLike<number>): Float64Array | undefined {
  return sortedInPlace(Float64Array.from(values));
}

/** `values` sorted in place (numeric order), or `undefined` when any value is NaN (left unsorted). */
function sortedInPlace(values: Float64Array): Float64Array | undefined {
  for (let i = 0; i < values.length; i++) if (Number.isNaN(values[i])) return undefined;
  return values.sort();
}

/**
 * Percentile p (0..100) of an ALREADY SORTED ascending array, by numpy's linear method.
 * No validation and no copy: the building block for `percentile`, `describe` and the bootstrap.
 * Empty → NaN.
 */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  // Same operations, in the same order, as numpy 1.24 `_quantile` + `_lerp`, so results match to the bit.
  const h = (p / 100) * (n - 1);
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  const t = h - lo;
  const a = sorted[lo];
  const b = sorted[hi];
  const diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

/**
 * The p-th percentile (p from 0 to 100) of `values`, numpy's default linear interpolation at
 * (n − 1)·p/100 (`np.percentile(values, p)`). `[1..6]` → p50 3.5, p75 4.75, p99 5.95.
 *
 * Empty input → NaN; any NaN in the input → NaN (as numpy). Does not mutate `values`.
 * Cost: one copy and sort, O(n log n); for several percentiles of one sample use `describe`
 * or `percentiles`, which sort once.
 * @throws RangeError when p is outside 0..100 or not finite.
 */
export function percentile(values: ArrayLike<number>, p: number): number {
  checkPercentile(p);
  if (values.length === 0) return NaN;
  const sorted = sortedCopy(values);
  return sorted ? percentileOfSorted(sorted, p) : NaN;
}

/** Several percentiles of one sample with a single sort. Same method and rules as `percentile`. */
export function percentiles(values: ArrayLike<number>, ps: readonly number[]): number[] {
  ps.forEach(checkPercentile);
  const sorted = values.length === 0 ? undefined : sortedCopy(values);
  return ps.map((p) => (sorted ? percentileOfSorted(sorted, p) : NaN));
}

/** Arithmetic mean; empty → NaN. */
export function mean(values: ArrayLike<number>): number {
  if (values.length === 0) return NaN;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i];
  return sum / values.length;
}

/**
 * `{ n, mean, p50, p95, p99 }` of a latency sample (ms in, ms out), the seed course's
 * `summarizeLatency`. Empty → n 0 and NaN elsewhere. One sort.
 */
export function summarizeLatency(values: ArrayLike<number>): LatencySummary {
  const d = describe(values);
  return { n: d.n, mean: d.mean, p50: d.p50, p95: d.p95, p99: d.p99 };
}

/**
 * Full `Distribution` of a sample: n, mean, population std (ddof = 0, like `np.std`), min,
 * p50, p90, p95, p99, max. Units are those of the input. Sorts once.
 * Empty → n 0 and NaN elsewhere (written as null in JSON). A NaN in the input makes every
 * statistic NaN except n.
 */
export function describe(values: ArrayLike<number>): Distribution {
  return describeSorted(values.length, sortedCopy(values));
}

/** `describe` of an array the caller gives up: sorted in place, no copy. Same figures, to the bit. */
export function describeOwned(values: Float64Array): Distribution {
  return describeSorted(values.length, sortedInPlace(values));
}

/** The `Distribution` of `n` values, `sorted` ascending; `sorted` undefined (a NaN among them) or empty → NaN. */
function describeSorted(n: number, sorted: Float64Array | undefined): Distribution {
  if (!sorted || n === 0) {
    return { n, mean: NaN, std: NaN, min: NaN, p50: NaN, p90: NaN, p95: NaN, p99: NaN, max: NaN };
  }
  const m = mean(sorted);
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (sorted[i] - m) * (sorted[i] - m);
  return {
    n,
    mean: m,
    std: Math.sqrt(ss / n),
    min: sorted[0],
    p50: percentileOfSorted(sorted, 50),
    p90: percentileOfSorted(sorted, 90),
    p95: percentileOfSorted(sorted, 95),
    p99: percentileOfSorted(sorted, 99),
    max: sorted[n - 1],
  };
}
