/**
 * HTML tables for notebooks: rows (plain objects or a danfojs DataFrame) → `<table>`, with
 * numbers at fixed digits and missing values (NaN, null, undefined) shown as '—', and warnings
 * as a full-width banner above the table. The run tables (summary, comparison) are in `tables-runs.ts`; `tables.ts` exports both.
 */
import { bannerHtml } from './banner';
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
  /** Warnings shown as a full-width banner above the table (see `bannerHtml`), one line each. */
  banner?: string | string[];
  /** Written to the table's `data-loadlab-table` attribute (e.g. `'summary'`), so a page check can find it. */
  kind?: string;
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
  const kind = opts.kind ? ` data-loadlab-table="${escapeHtml(opts.kind)}"` : '';
  return `${bannerHtml(opts.banner)}<table class="loadlab-table"${kind}>${caption}<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody></table>`;
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
