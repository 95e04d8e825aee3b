/**
 * The latency table `--percentile-metrics` / `--metric-percentiles` ask for, as `vllm bench serve`
 * prints it (vllm/benchmarks/serve.py `process_one_metric`): per metric the mean, the median and
 * each chosen percentile, in ms, over successful measured requests (ITL: over every chunk gap).
 * Percentiles are numpy's linear method (src/stats/percentile.ts). Two rows vLLM's table lacks are
 * always added: the client-side queue time and TTFT from the intended send time, so coordinated
 * omission shows. With `ci`, each percentile carries a bootstrap interval (ci-cells.ts).
 * Pure: records in, text out.
 */

import { mean, percentiles } from '../stats/percentile';
import type { RequestRecord } from '../types';
import { CI_NOTE, ciCell } from './ci-cells';
import type { PercentileMetric } from './run-dataset-args';

/** A row of the latency tables: a vLLM metric, the client queue time, or TTFT from the intended send time. */
export type LatencyRow = PercentileMetric | 'queue' | 'ttft_intended';

/** Row labels of the latency tables. */
export const ROW_LABELS: Record<LatencyRow, string> = {
  ttft: 'TTFT',
  tpot: 'TPOT',
  itl: 'ITL',
  e2el: 'E2EL',
  queue: 'queue (client)',
  ttft_intended: 'TTFT from intended',
};

/** The rows every latency table ends with. */
export const ALWAYS_ROWS: readonly LatencyRow[] = ['queue', 'ttft_intended'];

/** The samples (ms) of one row over successful measured records. */
export function metricSamples(records: readonly RequestRecord[], metric: LatencyRow): number[] {
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
    case 'queue':
      return defined(ok.map((r) => r.queueMs));
    case 'ttft_intended':
      return defined(ok.map((r) => r.ttftFromIntendedMs));
  }
}

const num = (x: number): string => (Number.isNaN(x) ? '–' : x.toFixed(1));

/** Rows of cells as aligned text (first column left, the rest right). */
export function alignRows(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

/** Aligned text: one row per metric (then queue and TTFT from intended) with n, mean, median and P<p> (ms). */
export function formatPercentileTable(
  records: readonly RequestRecord[],
  choice: { metrics: readonly PercentileMetric[]; percentiles: readonly number[] },
  opts: { ci?: boolean } = {},
): string {
  const header = ['metric (ms)', 'n', 'mean', 'median', ...choice.percentiles.map((p) => `P${p}`)];
  const rows = [...choice.metrics, ...ALWAYS_ROWS].map((m) => {
    const xs = metricSamples(records, m);
    const ps = [50, ...choice.percentiles];
    const points = percentiles(xs, ps);
    const boot = opts.ci && m !== 'itl' ? xs : undefined;
    const cells = opts.ci ? points.map((x, i) => ciCell(boot, ps[i], x)) : points.map(num);
    return [ROW_LABELS[m], String(xs.length), num(mean(xs)), ...cells];
  });
  const table = alignRows(header, rows);
  return opts.ci ? `${CI_NOTE}\n${table}` : table;
}
