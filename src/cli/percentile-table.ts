/**
 * The latency table `--percentile-metrics` / `--metric-percentiles` ask for, as `vllm bench serve`
 * prints it (vllm/benchmarks/serve.py `process_one_metric`): per metric the mean, the median and
 * each chosen percentile, in ms, over successful measured requests (ITL: over every chunk gap).
 * Percentiles are numpy's linear method (src/stats/percentile.ts). Pure: records in, text out.
 */

import { mean, percentiles } from '../stats/percentile';
import type { RequestRecord } from '../types';
import type { PercentileMetric } from './run-dataset-args';

const LABELS: Record<PercentileMetric, string> = { ttft: 'TTFT', tpot: 'TPOT', itl: 'ITL', e2el: 'E2EL' };

/** The samples (ms) of one metric over successful measured records. */
export function metricSamples(records: readonly RequestRecord[], metric: PercentileMetric): number[] {
  const ok = records.filter((r) => r.ok && !r.warmup);
  const defined = (xs: Array<number | undefined>) => xs.filter((x): x is number => typeof x === 'number');
  switch (metric) {
    case 'ttft':
      return defined(ok.map((r) => r.ttftMs));
    case 'tpot':
      return defined(ok.map((r) => r.tpotMs));
    case 'itl':
      return ok.flatMap((r) => r.itlMs ?? []);
    case 'e2el':
      return defined(ok.map((r) => r.e2eMs));
  }
}

const num = (x: number): string => (Number.isNaN(x) ? '–' : x.toFixed(1));

/** Aligned text: one row per metric with n, mean, median and P<p> for each chosen percentile (ms). */
export function formatPercentileTable(
  records: readonly RequestRecord[],
  choice: { metrics: readonly PercentileMetric[]; percentiles: readonly number[] },
): string {
  const header = ['metric (ms)', 'n', 'mean', 'median', ...choice.percentiles.map((p) => `P${p}`)];
  const rows = choice.metrics.map((m) => {
    const xs = metricSamples(records, m);
    const [median, ...ps] = percentiles(xs, [50, ...choice.percentiles]);
    return [LABELS[m], String(xs.length), num(mean(xs)), num(median), ...ps.map(num)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}
