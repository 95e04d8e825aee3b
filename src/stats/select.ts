/**
 * Percentiles without a full sort: the same numpy linear method as ./percentile, found by selection.
 *
 * `percentile` copies and sorts its sample, O(n log n): 7 ms for the 76,800 chunk stamps of a 128 × 600-token run
 * on this project's VM, per call. Taking one or two percentiles of such a sample needs only the order statistics
 * beside each virtual index h = (n − 1)·p/100, and Hoare's selection (FIND, CACM 1961) finds one in O(n) on
 * average (bench/README.md §21). After at most ~2·log₂n partitioning rounds it sorts what is left instead, so
 * no input costs more than a sort.
 */

/** Places the k-th smallest of `a` (0-based) at `a[k]`, every smaller one before it and every larger one after. */
function select(a: Float64Array, k: number): void {
  let lo = 0;
  let hi = a.length - 1;
  let rounds = 2 * Math.ceil(Math.log2(a.length + 1)) + 8;
  while (hi > lo) {
    if (rounds-- === 0) {
      a.subarray(lo, hi + 1).sort();
      return;
    }
    const mid = lo + ((hi - lo) >> 1);
    // Median of three as the pivot, so sorted and reversed input partition evenly.
    if (a[mid] < a[lo]) swap(a, mid, lo);
    if (a[hi] < a[lo]) swap(a, hi, lo);
    if (a[hi] < a[mid]) swap(a, hi, mid);
    const pivot = a[mid];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) swap(a, i++, j--);
    }
    // Now a[lo..j] <= pivot <= a[i..hi], and anything between j and i equals the pivot.
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return;
  }
}

function swap(a: Float64Array, i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
}

/** The smallest of a[from..] (a[from] when it is the last). */
function minFrom(a: Float64Array, from: number): number {
  let m = a[from];
  for (let i = from + 1; i < a.length; i++) if (a[i] < m) m = a[i];
  return m;
}

/**
 * Percentiles `ps` (0..100) of `values` by numpy's linear method, as `percentiles` in ./percentile gives them, in
 * O(n) per percentile on average instead of one O(n log n) sort. **Reorders `values` in place**: pass an array of
 * your own. Empty → NaN; a NaN anywhere → NaN for every p (as numpy). The p must be valid (not checked here).
 */
export function percentilesInPlace(values: Float64Array, ps: readonly number[]): number[] {
  const n = values.length;
  if (n === 0 || values.some(Number.isNaN)) return ps.map(() => NaN);
  return ps.map((p) => {
    // The same operations, in the same order, as percentileOfSorted (numpy 1.24 `_quantile` + `_lerp`).
    const h = (p / 100) * (n - 1);
    const lo = Math.floor(h);
    const t = h - lo;
    select(values, lo);
    const a = values[lo];
    const b = lo + 1 < n ? minFrom(values, lo + 1) : a;
    const diff = b - a;
    return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
  });
}
