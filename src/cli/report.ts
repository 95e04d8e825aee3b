/**
 * The text summary `loadlab run` prints at the end: one row per latency metric (TTFT, TPOT,
 * ITL, E2E, then the client queue time and TTFT from the intended send time, where coordinated
 * omission shows) with n, mean, p50, p95, p99 in ms (with `--ci`, bootstrap intervals beside
 * them), then throughput, failures by code, what the server reported, the stop rule, and where
 * the run was saved. Pure: summary (and records for intervals) in, string out.
 */

import type { Distribution, ErrorCode, RequestRecord, RunSummary } from '../types';
import { ERROR_CODES } from '../types';
import { formatGoodput } from '../stats/goodput';
import { CI_NOTE, ciCell } from './ci-cells';
import { itlByRequest } from '../stats/cluster-bootstrap';
import { alignRows, type LatencyRow, metricSamples, ROW_LABELS } from './percentile-table';
import { formatTurnTable } from './turn-table';

const ROWS: Array<[string, keyof RunSummary, LatencyRow]> = [
  ['TTFT', 'ttftMs', 'ttft'],
  ['TPOT', 'tpotMs', 'tpot'],
  ['ITL', 'itlMs', 'itl'],
  ['E2E', 'e2eMs', 'e2el'],
  [ROW_LABELS.queue, 'queueMs', 'queue'],
  [ROW_LABELS.ttft_intended, 'ttftFromIntendedMs', 'ttft_intended'],
];

function num(x: number | null | undefined, digits = 1): string {
  return x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(digits);
}

/** Failures as `3 (http_5xx 2, connection_reset 1)`, or `0`. */
export function formatFailures(summary: RunSummary): string {
  if (summary.failed === 0) return '0';
  const parts = ERROR_CODES.filter((c: ErrorCode) => (summary.errors[c] ?? 0) > 0).map((c) => `${c} ${summary.errors[c]}`);
  return parts.length > 0 ? `${summary.failed} (${parts.join(', ')})` : String(summary.failed);
}

/**
 * The latency table (ms) as aligned text. With `ci` and the run's `records`, each percentile
 * carries its bootstrap interval over the same samples as the summary (ci-cells.ts).
 */
export function formatLatencyTable(summary: RunSummary, opts: { records?: readonly RequestRecord[]; ci?: boolean } = {}): string {
  const header = ['metric (ms)', 'n', 'mean', 'p50', 'p95', 'p99'];
  const ci = opts.ci === true && opts.records !== undefined;
  const rows = ROWS.map(([label, key, row]) => {
    const d = summary[key] as Distribution | undefined;
    if (d === undefined) return [label, '0', '–', '–', '–', '–']; // a summary saved before the row existed
    const xs = ci ? metricSamples(opts.records!, row) : undefined;
    const groups = ci && row === 'itl' ? itlByRequest(opts.records!) : undefined;
    const cells = ([50, 95, 99] as const).map((p) => (ci ? ciCell(xs, p, d[`p${p}`], groups) : num(d[`p${p}`])));
    return [label, String(d.n), num(d.mean), ...cells];
  });
  const table = alignRows(header, rows);
  return ci ? `${CI_NOTE}\n${table}` : table;
}

/** What a finished run reports on the terminal. */
export interface RunReportInput {
  summary: RunSummary;
  /** Run folder, if saved. */
  dir?: string;
  status: string;
  /** e.g. `closed c=16, 32 requests (+2 warm-up)`. */
  loadLabel?: string;
  /** e.g. `sim http://127.0.0.1:8000 model Qwen/…`. */
  targetLabel?: string;
  /** Caveats printed under the numbers, e.g. the client-health verdict. */
  warnings?: string[];
  /** Replaces the default latency table (e.g. the one `--metric-percentiles` asks for). */
  latencyTable?: string;
  /** What the server's `/metrics` reported during the run (server-line.ts). */
  serverLine?: string;
  /** Against the simulator: how late the client stamped its chunks (run-report.ts). */
  clientLine?: string;
  /** How issuing stopped, with `--duration`. */
  stopLine?: string;
}

/** The whole end-of-run report. */
export function formatRunReport(r: RunReportInput): string {
  const s = r.summary;
  const out: string[] = [];
  if (r.targetLabel) out.push(`target    ${r.targetLabel}`);
  if (r.loadLabel) out.push(`load      ${r.loadLabel}`);
  out.push(
    `requests  ${s.requests} measured, ${s.completed} completed, failed ${formatFailures(s)}  in ${num(s.durationS, 2)} s`,
  );
  out.push('');
  out.push(r.latencyTable ?? formatLatencyTable(s));
  if (s.byTurn) out.push('', formatTurnTable(s.byTurn)); // multi-turn runs
  out.push('');
  out.push(
    `req/s ${num(s.requestsPerSec, 2)}   output tok/s ${num(s.outputTokensPerSec, 1)}   total tok/s ${num(s.totalTokensPerSec, 1)}`,
  );
  if (s.goodput) {
    out.push(
      `goodput ${num(s.goodput.requestsPerSec, 2)} req/s (${s.goodput.good} of ${s.completed} met ${formatGoodput(s.goodput.slo)})`,
    );
  }
  if (r.serverLine) out.push(`server    ${r.serverLine}`);
  if (r.clientLine) out.push(`client    ${r.clientLine}`);
  if (r.stopLine) out.push(`stop      ${r.stopLine}`);
  for (const w of r.warnings ?? []) out.push(`warning   ${w}`);
  if (r.status !== 'complete') out.push(`status    ${r.status}`);
  out.push(r.dir ? `saved to  ${r.dir}` : 'not saved');
  return `${out.join('\n')}\n`;
}
