/**
 * The latency table `--percentile-metrics` / `--metric-percentiles` ask for, as `vllm bench serve`
 * prints it (vllm/benchmarks/serve.py `process_one_metric`): per metric the mean, the median and
 * each chosen percentile, in ms, over successful measured requests (ITL: over every chunk gap).
 * Percentiles are numpy's linear method (src/stats/percentile.ts). Two rows vLLM's table lacks are
 * always added: the client-side queue time and TTFT from the intended send time, so coordinated
 * omission shows. vLLM's newer `client_queue_time` is that queue row, and
 * `e2el_including_client_queue` is E2EL from the intended send time (see `metricSamples` for how
 * they differ from vLLM's). With `ci`, each percentile carries a bootstrap interval (ci-cells.ts).
 * Pure: records in, text out.
 */

import { itlByRequest } from '../stats/cluster-bootstrap';
import { mean, percentiles } from '../stats/percentile';
import type { RequestRecord } from '../types';
import { CI_NOTE, ciCell } from './ci-cells';
import type { PercentileMetric } from './run-dataset-args';

/** A row of the latency tables: a vLLM metric, the client queue time, or TTFT from the intended send time. */
export type LatencyRow = PercentileMetric | 'queue' | 'ttft_intended';

/** Row labels of the latency tables (`client_queue_time` is the `queue` row under vLLM's name). */
export const ROW_LABELS: Record<LatencyRow, string> = {
  ttft: 'TTFT',
  tpot: 'TPOT',
  itl: 'ITL',
  e2el: 'E2EL',
  client_queue_time: 'queue (client)',
  e2el_including_client_queue: 'E2EL from intended',
  queue: 'queue (client)',
  ttft_intended: 'TTFT from intended',
};

/** Said under a table that shows vLLM's client-queue names: what LoadLab timed, and where it differs. */
export const QUEUE_NOTE =
  'client_queue_time, e2el_including_client_queue: timed from the intended send time to the socket write\n' +
  "(vllm bench serve: from its arrival loop's release to the request's start, only with --max-concurrency);\n" +
  'a closed loop (--max-concurrency with rate inf) intends each request when a slot frees: no wait in line shows.';

/** The rows every latency table ends with. */
export const ALWAYS_ROWS: readonly LatencyRow[] = ['queue', 'ttft_intended'];

/**
 * The samples (ms) of one row over successful measured records (vLLM also keeps successes only).
 * vLLM's client-queue names (vllm/benchmarks/serve.py `benchmark`: `client_queue_time =
 * output.start_time - request_arrival_time`, and `latency + client_queue_time`) map to LoadLab's
 * `queueMs` (startMs − intendedStartMs) and to `e2eMs + queueMs` (last token chunk − intendedStartMs).
 * Deviations: (1) the clock starts at the intended send time, so a late pacer counts; vLLM's
 * `request_arrival_time` is read when its loop releases the request; (2) it stops at the socket
 * write, so waiting for a connection is queue; vLLM's `start_time` is read before the HTTP call
 * (vllm/benchmarks/lib/endpoint_request_func.py), so that wait is in its TTFT and E2EL; (3) LoadLab
 * always computes them; vLLM only with `--max-concurrency`, the second only with a finite
 * `--request-rate`, and its `--request-rate inf --max-concurrency C` puts every arrival at t = 0,
 * while LoadLab's closed loop intends each request when a slot frees (queue ≈ 0).
 */
export function metricSamples(records: readonly RequestRecord[], metric: LatencyRow): number[] {
  const ok = records.filter((r) => r.ok && !r.warmup);
  const defined = (xs: Array<number | undefined>) => xs.filter((x): x is number => typeof x === 'number');
  switch (metric) {
    case 'ttft':
      return defined(ok.map((r) => r.ttftMs));
    case 'tpot':
      return defined(ok.map((r) => r.tpotMs));
    case 'itl':
      return itlByRequest(records).flat();
    case 'e2el':
      return defined(ok.map((r) => r.e2eMs));
    case 'e2el_including_client_queue':
      return defined(ok.map((r) => (r.e2eMs === undefined ? undefined : r.e2eMs + r.queueMs)));
    case 'client_queue_time':
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

/**
 * Aligned text: one row per metric (then queue and TTFT from intended, unless already shown) with n,
 * mean, median and P<p> (ms); {@link QUEUE_NOTE} below when vLLM's client-queue names are chosen.
 */
export function formatPercentileTable(
  records: readonly RequestRecord[],
  choice: { metrics: readonly PercentileMetric[]; percentiles: readonly number[] },
  opts: { ci?: boolean } = {},
): string {
  const header = ['metric (ms)', 'n', 'mean', 'median', ...choice.percentiles.map((p) => `P${p}`)];
  const chosen = choice.metrics.map((m): LatencyRow => (m === 'client_queue_time' ? 'queue' : m));
  const rows = [...new Set([...chosen, ...ALWAYS_ROWS])].map((m) => {
    const xs = metricSamples(records, m);
    const ps = [50, ...choice.percentiles];
    const points = percentiles(xs, ps);
    const groups = opts.ci && m === 'itl' ? itlByRequest(records) : undefined;
    const cells = opts.ci ? points.map((x, i) => ciCell(xs, ps[i], x, groups)) : points.map(num);
    return [ROW_LABELS[m], String(xs.length), num(mean(xs)), ...cells];
  });
  const queueNames = choice.metrics.some((m) => m === 'client_queue_time' || m === 'e2el_including_client_queue');
  const table = alignRows(header, rows) + (queueNames ? `\n${QUEUE_NOTE}` : '');
  return opts.ci ? `${CI_NOTE}\n${table}` : table;
}
