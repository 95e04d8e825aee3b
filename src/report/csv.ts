/**
 * CSV files of a report, RFC 4180: comma-separated, CRLF line ends, a header row, and a field
 * quoted (`"`, inner quotes doubled) when it holds a comma, a quote, CR or LF. Missing values
 * (NaN, null, undefined) are empty fields; numbers are written in full (`String(n)`), never
 * rounded. `records.csv` has the columns of `RECORD_COLUMNS` (`src/view/frame.ts`); `points.csv`
 * one row per sweep point with its summary numbers.
 */
import { RECORD_COLUMNS, recordRow } from '../view/frame';
import type { Distribution, RunSummary } from '../types';
import type { ReportRun, SweepPoint } from './report-input';

/** One CSV field (RFC 4180 quoting); NaN, ±Infinity, null and undefined become an empty field. */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** A CSV text: the header `columns`, then one line per row (fields in column order), CRLF after every line. */
export function toCsv(columns: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const lines = [columns.map(csvField).join(','), ...rows.map((r) => columns.map((c) => csvField(r[c])).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * `records.csv`: one row per request (warm-up included, flagged in `warmup`), the columns of
 * `RECORD_COLUMNS` (times in ms on the run's clock). With `point`, a first column `point` names
 * the sweep point each row belongs to.
 */
export function recordsCsv(runs: readonly { run: ReportRun; point?: string }[]): string {
  const cols = Object.keys(RECORD_COLUMNS);
  const withPoint = runs.some((r) => r.point !== undefined);
  const rows = runs.flatMap(({ run, point }) =>
    run.records.map((rec) => ({ ...(withPoint ? { point } : {}), ...recordRow(rec) }) as Record<string, unknown>),
  );
  return toCsv(withPoint ? ['point', ...cols] : cols, rows);
}

const DIST_FIELDS = ['p50', 'p90', 'p95', 'p99', 'mean'] as const;
const DISTS = ['ttftMs', 'tpotMs', 'itlMs', 'e2eMs', 'queueMs', 'ttftFromIntendedMs'] as const;

/** The summary numbers of `points.csv`, flat: counts, rates and `<metric>_<stat>` in ms (e.g. `ttftMs_p99`). */
export function summaryRow(s: RunSummary): Record<string, unknown> {
  const row: Record<string, unknown> = {
    requests: s.requests,
    completed: s.completed,
    failed: s.failed,
    durationS: s.durationS,
    requestsPerSec: s.requestsPerSec,
    outputTokensPerSec: s.outputTokensPerSec,
    totalTokensPerSec: s.totalTokensPerSec,
    goodputRequestsPerSec: s.goodput?.requestsPerSec,
    clientBound: s.health?.clientBound,
    simBehind: s.health?.simBehind,
  };
  for (const d of DISTS) {
    const dist: Distribution = s[d];
    for (const f of DIST_FIELDS) row[`${d}_${f}`] = dist[f];
  }
  return row;
}

const SUMMARY_COUNTS = [
  'requests',
  'completed',
  'failed',
  'durationS',
  'requestsPerSec',
  'outputTokensPerSec',
  'totalTokensPerSec',
  'goodputRequestsPerSec',
  'clientBound',
  'simBehind',
];

/** Columns of `points.csv`, in order. */
export const POINT_COLUMNS: readonly string[] = [
  'point',
  'x',
  'dir',
  'simulated',
  'serverVersion',
  ...SUMMARY_COUNTS,
  ...DISTS.flatMap((d) => DIST_FIELDS.map((f) => `${d}_${f}`)),
];

/** `points.csv`: one row per sweep point (its label, load value `x`, folder, provenance, summary numbers). */
export function pointsCsv(points: readonly SweepPoint[]): string {
  const rows = points.map((p) => {
    const t = p.run.damaged === undefined ? p.run.manifest.target : undefined;
    return {
      point: p.label,
      x: p.x,
      dir: p.run.dir,
      simulated: t?.simulated,
      serverVersion: t?.serverVersion,
      ...summaryRow(p.run.summary),
    };
  });
  return toCsv(POINT_COLUMNS, rows);
}
