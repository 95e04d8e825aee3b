/**
 * HTML tables for notebooks: rows (plain objects or a danfojs DataFrame) → `<table>`, with
 * numbers at fixed digits and missing values (NaN, null, undefined) shown as '—'.
 * Plus the two tables every lesson needs: one run's latency summary, and runs side by side.
 * Given runs (with their manifests), those two label themselves from each run's own manifest
 * ("(simulated)"), never from the server the notebook talks to now.
 */
import type { Distribution, RunSummary } from '../types';
import { provenanceOf, provenanceSuffix, runServerLabel, type Provenance, type RunLike } from './provenance';
import { displayHtml } from './render';

/** The parts of a danfojs `DataFrame` used here (duck-typed: danfojs is not imported). */
export interface DataFrameLike {
  columns: string[];
  values: unknown[][] | unknown[];
}

/** Options of `table` / `tableHtml`. */
export interface TableOptions {
  caption?: string;
  /**
   * Digits after the point: one number for all columns, or per column (others use 2). Default 2.
   * A column whose numbers are all integers (counts) is shown without decimals, unless it is named
   * in a per-column `digits`.
   */
  digits?: number | Record<string, number>;
  /** Columns to show, in order; default: every key, in first-seen order. */
  columns?: string[];
}

/** Shown for NaN, null and undefined. */
export const MISSING = '—';

function isDataFrame(x: unknown): x is DataFrameLike {
  return (
    !Array.isArray(x) &&
    typeof x === 'object' &&
    x !== null &&
    Array.isArray((x as DataFrameLike).columns) &&
    Array.isArray((x as DataFrameLike).values)
  );
}

/** Rows of a danfojs DataFrame (via `columns` and `values`, so NaN stays NaN), or the rows given. */
export function toRows(input: Record<string, unknown>[] | DataFrameLike): Record<string, unknown>[] {
  if (!isDataFrame(input)) return input;
  const { columns, values } = input;
  return values.map((row) => {
    const cells = Array.isArray(row) ? row : [row]; // a one-column frame may give a flat array
    const out: Record<string, unknown> = {};
    columns.forEach((c, i) => (out[c] = cells[i]));
    return out;
  });
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * One cell as text: numbers with `digits` decimals (none when `integer`), NaN/null/undefined as
 * '—', ±Infinity as '∞'/'-∞', other values via `String`.
 */
export function formatCell(v: unknown, digits = 2, integer = false): string {
  if (v === null || v === undefined) return MISSING;
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return MISSING;
    if (!Number.isFinite(v)) return v > 0 ? '∞' : '-∞';
    return integer ? String(v) : v.toFixed(digits);
  }
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** The `<table>` HTML for `rows` (see `TableOptions`); no display. */
export function tableHtml(input: Record<string, unknown>[] | DataFrameLike, opts: TableOptions = {}): string {
  const rows = toRows(input);
  const columns = opts.columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const digitsOf = (c: string): number => (typeof opts.digits === 'number' ? opts.digits : (opts.digits?.[c] ?? 2));
  const numeric = new Map<string, { integer: boolean }>();
  for (const c of columns) {
    const nums = rows.map((r) => r[c]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    const others = rows.some((r) => r[c] != null && typeof r[c] !== 'number');
    const forced = typeof opts.digits === 'object' && opts.digits[c] !== undefined;
    if (nums.length > 0 && !others) numeric.set(c, { integer: !forced && nums.every(Number.isInteger) });
  }
  const align = (c: string) => (numeric.has(c) ? ' style="text-align:right"' : ' style="text-align:left"');
  const head = columns.map((c) => `<th${align(c)}>${escapeHtml(c)}</th>`).join('');
  const body = rows
    .map((r) => {
      const cells = columns.map((c) => {
        const text = formatCell(r[c], digitsOf(c), numeric.get(c)?.integer ?? false);
        return `<td${align(c)}>${escapeHtml(text)}</td>`;
      });
      return `<tr>${cells.join('')}</tr>`;
    })
    .join('\n');
  const caption = opts.caption ? `<caption>${escapeHtml(opts.caption)}</caption>` : '';
  return `<table class="loadlab-table">${caption}<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody></table>`;
}

/**
 * Display `rows` (plain objects or a danfojs DataFrame) as an HTML table in the notebook.
 * Returns undefined when a kernel displayed it (a cell ending in `table(...)` prints nothing more),
 * else the HTML.
 */
export function table(input: Record<string, unknown>[] | DataFrameLike, opts: TableOptions = {}): string | undefined {
  const html = tableHtml(input, opts);
  return displayHtml(html) ? undefined : html;
}

/** The latency metrics of `RunSummary` that `summaryTable` lists, with their row labels. */
export const SUMMARY_METRICS: readonly { key: 'ttftMs' | 'tpotMs' | 'itlMs' | 'e2eMs'; label: string }[] = [
  { key: 'ttftMs', label: 'TTFT' },
  { key: 'tpotMs', label: 'TPOT' },
  { key: 'itlMs', label: 'ITL' },
  { key: 'e2eMs', label: 'E2E' },
];

/** Options of `summaryTable` / `compareTable`. */
export interface SummaryTableOptions {
  caption?: string;
  /** Default 1. */
  digits?: number;
  /**
   * Append " (simulated)" to the caption: `true`, or the run(s) shown (read from their manifests).
   * Runs given to the table itself (a run to `summaryTable`, `manifest` on a `compareTable` item)
   * take precedence: a simulated run is never captioned as real.
   */
  simulated?: Provenance;
}

/** A run, or just its summary; a run (`RunResult`, `MeasureResult`, `LoadedRun`) carries its manifest. */
export type SummaryOrRun = RunSummary | (RunLike & { summary: RunSummary });

function isRun(x: SummaryOrRun): x is RunLike & { summary: RunSummary } {
  return 'summary' in x && typeof (x as { summary?: unknown }).summary === 'object' && 'manifest' in x;
}

/** Rows of `summaryTable`: metric, n, mean, p50, p90, p95, p99, max (ms). */
export function summaryRows(summary: RunSummary): Record<string, unknown>[] {
  return SUMMARY_METRICS.map(({ key, label }) => {
    const d: Distribution = summary[key];
    return { metric: label, n: d.n, mean: d.mean, p50: d.p50, p90: d.p90, p95: d.p95, p99: d.p99, max: d.max };
  });
}

function withSim(caption: string, simulated?: Provenance): string {
  return `${caption}${provenanceSuffix(simulated)}`;
}

/** Plain-words flag for a run whose measurer was the bottleneck ('' when healthy or unknown). */
export function healthFlag(summary: RunSummary): string {
  const h = summary.health;
  if (!h || (!h.clientBound && !h.simBehind)) return '';
  const what = [h.clientBound ? 'CLIENT-BOUND' : '', h.simBehind ? 'SIMULATOR BEHIND REAL TIME' : ''].filter(Boolean).join(', ');
  return `⚠ ${what}: ${h.warnings.join(' ')}`;
}

/**
 * Display one run's TTFT/TPOT/ITL/E2E distributions (ms) as a table; returns like `table`.
 * Pass the run (not only its summary) to caption it from its own manifest.
 */
export function summaryTable(input: SummaryOrRun, opts: SummaryTableOptions = {}): string | undefined {
  const summary = isRun(input) ? input.summary : input;
  const label: Provenance | undefined = isRun(input) ? input : opts.simulated;
  const caption =
    opts.caption ?? `Latency (ms): ${summary.completed} of ${summary.requests} requests completed, ${summary.failed} failed`;
  const d = opts.digits ?? 1;
  const digits = { mean: d, p50: d, p90: d, p95: d, p99: d, max: d };
  const flag = healthFlag(summary);
  return table(summaryRows(summary), { caption: withSim(caption, label) + (flag ? ` — ${flag}` : ''), digits });
}

/** One column of `compareTable`: header and how to read it from a summary. */
export interface CompareMetric {
  header: string;
  value: (s: RunSummary) => number;
  /** Digits after the point; default the table's `digits`. */
  digits?: number;
}

/** Default `compareTable` columns: E2E p50/p95/p99, TTFT p50/p95, output tok/s, req/s, failed. */
export const DEFAULT_COMPARE_METRICS: readonly CompareMetric[] = [
  { header: 'E2E p50 ms', value: (s) => s.e2eMs.p50 },
  { header: 'E2E p95 ms', value: (s) => s.e2eMs.p95 },
  { header: 'E2E p99 ms', value: (s) => s.e2eMs.p99 },
  { header: 'TTFT p50 ms', value: (s) => s.ttftMs.p50 },
  { header: 'TTFT p95 ms', value: (s) => s.ttftMs.p95 },
  { header: 'output tok/s', value: (s) => s.outputTokensPerSec },
  { header: 'req/s', value: (s) => s.requestsPerSec },
  { header: 'failed', value: (s) => s.failed, digits: 0 },
];

/** One row of `compareTable`: a label and a summary, plus the run's manifest when known. */
export interface CompareItem {
  label: string | number;
  summary: RunSummary;
  /** The run's manifest (`run.manifest`): labels the row and the caption from what measured it. */
  manifest?: { target: { simulated?: boolean; kind?: string; serverVersion?: string } };
}

function itemRuns(items: readonly CompareItem[]): RunLike[] {
  return items.filter((i) => i.manifest !== undefined).map((i) => ({ manifest: i.manifest! }));
}

/**
 * Rows of `compareTable`: one per item, `run` = its label, then one column per metric. When the
 * items' manifests name more than one kind of server, a `server` column says which measured each row.
 */
export function compareRows(
  items: readonly CompareItem[],
  metrics: readonly CompareMetric[] = DEFAULT_COMPARE_METRICS,
): Record<string, unknown>[] {
  const anyHealth = items.some(({ summary }) => summary.health !== undefined);
  const servers = new Set(items.map((i) => (i.manifest ? runServerLabel({ manifest: i.manifest }) : 'unknown')));
  const perRowServer = itemRuns(items).length > 0 && servers.size > 1;
  return items.map(({ label, summary, manifest }) => {
    const row: Record<string, unknown> = { run: String(label) };
    if (perRowServer) row.server = manifest ? runServerLabel({ manifest }) : 'unknown';
    for (const m of metrics) row[m.header] = m.value(summary);
    // Flag, per row, a run whose own measurer was the bottleneck (see healthFlag).
    if (anyHealth) row.measurer = summary.health?.clientBound ? 'client-bound' : summary.health?.simBehind ? 'sim behind' : 'ok';
    return row;
  });
}

/**
 * Display runs side by side (rows = runs, e.g. by concurrency); returns like `table`. Give each
 * item its run's `manifest` to label the caption (and, when they differ, each row) from it.
 */
export function compareTable(
  items: readonly CompareItem[],
  metrics: readonly CompareMetric[] = DEFAULT_COMPARE_METRICS,
  opts: SummaryTableOptions = {},
): string | undefined {
  const runs = itemRuns(items);
  // Items without a manifest fall back on the caller's label; a simulated manifest always shows.
  const label: Provenance | undefined =
    runs.length === items.length
      ? runs
      : provenanceOf(runs) === undefined || provenanceOf(runs) === 'real'
        ? opts.simulated
        : runs;
  const caption = withSim(opts.caption ?? 'Runs compared', label);
  const d = opts.digits ?? 1;
  const digits = Object.fromEntries(metrics.map((m) => [m.header, m.digits ?? d]));
  return table(compareRows(items, metrics), { caption, digits });
}
