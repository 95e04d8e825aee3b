/**
 * The text summary `loadlab run` prints at the end: one row per latency metric (TTFT, TPOT,
 * ITL, E2E) with n, mean, p50, p95, p99 in ms, then throughput, failures by code, and where
 * the run was saved. Pure: summary in, string out.
 */

import type { Distribution, ErrorCode, RunSummary } from '../types';
import { ERROR_CODES } from '../types';
import { formatGoodput } from '../stats/goodput';
import { formatTurnTable } from './turn-table';

const ROWS: Array<[string, keyof RunSummary]> = [
  ['TTFT', 'ttftMs'],
  ['TPOT', 'tpotMs'],
  ['ITL', 'itlMs'],
  ['E2E', 'e2eMs'],
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

/** The latency table (ms) as aligned text. */
export function formatLatencyTable(summary: RunSummary): string {
  const header = ['metric (ms)', 'n', 'mean', 'p50', 'p95', 'p99'];
  const rows = ROWS.map(([label, key]) => {
    const d = summary[key] as Distribution;
    return [label, String(d.n), num(d.mean), num(d.p50), num(d.p95), num(d.p99)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
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
  for (const w of r.warnings ?? []) out.push(`warning   ${w}`);
  if (r.status !== 'complete') out.push(`status    ${r.status}`);
  out.push(r.dir ? `saved to  ${r.dir}` : 'not saved');
  return `${out.join('\n')}\n`;
}
