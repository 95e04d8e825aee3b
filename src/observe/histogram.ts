/**
 * Prometheus histograms read from a scrape: cumulative buckets, the difference between two
 * scrapes (what happened during the interval), and quantiles estimated the way PromQL's
 * `histogram_quantile` does (linear interpolation inside the bucket that holds the rank).
 * A histogram only knows bucket counts, so a quantile is an estimate whose resolution is the
 * bucket width: vLLM's TTFT buckets jump from 0.1 s to 0.25 s, for example.
 */
import { pickSamples, type MetricFamily } from './prometheus';

/** A cumulative histogram: `counts[i]` observations were ≤ `le[i]`; the last `le` is `+Inf`. */
export interface HistogramSnapshot {
  /** Upper bounds, ascending, in the metric's unit (seconds for vLLM latencies), ending with Infinity. */
  le: number[];
  /** Cumulative counts per bound. */
  counts: number[];
  /** Number of observations (`_count`). */
  count: number;
  /** Sum of observations (`_sum`), in the metric's unit. */
  sum: number;
}

/**
 * The histogram `name` (family name, without `_bucket`) from a scrape, summed over every label
 * set that includes `labels` (so several `engine`s add up). Undefined when the scrape lacks it.
 */
export function readHistogram(
  families: readonly MetricFamily[],
  name: string,
  labels?: Record<string, string>,
): HistogramSnapshot | undefined {
  const buckets = pickSamples(families, `${name}_bucket`, labels);
  if (buckets.length === 0) return undefined;
  const byLe = new Map<number, number>();
  for (const b of buckets) {
    const le = b.labels.le === undefined ? NaN : b.labels.le === '+Inf' ? Infinity : Number(b.labels.le);
    if (Number.isNaN(le)) continue;
    byLe.set(le, (byLe.get(le) ?? 0) + b.value);
  }
  const le = [...byLe.keys()].sort((a, b) => a - b);
  const counts = le.map((x) => byLe.get(x)!);
  const sumOf = (suffix: string) => pickSamples(families, `${name}${suffix}`, labels).reduce((a, s) => a + s.value, 0);
  const count = pickSamples(families, `${name}_count`, labels).length > 0 ? sumOf('_count') : (counts[counts.length - 1] ?? 0);
  return { le, counts, count, sum: sumOf('_sum') };
}

/**
 * Observations between two scrapes: `later − earlier` bucket by bucket. When any count went
 * down (the server restarted, so its counters reset), the later snapshot is returned as is,
 * like PromQL's `increase` after a reset. Bounds missing from `earlier` count as 0.
 */
export function histogramDelta(later: HistogramSnapshot, earlier: HistogramSnapshot | undefined): HistogramSnapshot {
  if (!earlier) return later;
  const before = new Map(earlier.le.map((x, i) => [x, earlier.counts[i]] as const));
  const counts = later.le.map((x, i) => later.counts[i] - (before.get(x) ?? 0));
  const count = later.count - earlier.count;
  if (count < 0 || counts.some((c) => c < 0)) return later;
  return { le: later.le, counts, count, sum: later.sum - earlier.sum };
}

/**
 * Quantile `q` (0..1) of a histogram, as PromQL `histogram_quantile`: find the bucket whose
 * cumulative count reaches `q·count` and interpolate linearly inside it (the first bucket
 * starts at 0, or at its bound if that is ≤ 0). A rank in the `+Inf` bucket returns the largest
 * finite bound (the histogram cannot say more). NaN when there are no observations.
 */
export function histogramQuantile(h: HistogramSnapshot, q: number): number {
  if (!(q >= 0 && q <= 1)) throw new Error(`quantile must be in [0, 1], got ${q}`);
  const n = h.counts[h.counts.length - 1] ?? 0;
  if (n <= 0 || h.le.length === 0) return NaN;
  const rank = q * n;
  let i = 0;
  while (i < h.counts.length - 1 && h.counts[i] < rank) i++;
  const upper = h.le[i];
  if (upper === Infinity) return h.le.length > 1 ? h.le[h.le.length - 2] : NaN;
  const lower = i === 0 ? Math.min(upper, 0) : h.le[i - 1];
  const below = i === 0 ? 0 : h.counts[i - 1];
  const inBucket = h.counts[i] - below;
  if (inBucket <= 0) return upper;
  return lower + (upper - lower) * ((rank - below) / inBucket);
}

/** Mean of the observations (`sum/count`); NaN when empty. */
export function histogramMean(h: HistogramSnapshot): number {
  return h.count > 0 ? h.sum / h.count : NaN;
}
