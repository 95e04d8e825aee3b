/**
 * `RunsComparison` as terminal text (English): which runs, what measured them (simulated, real,
 * or mixed), the side-by-side table (a column per run; latencies as `p [lo, hi]`), then for each
 * later run its differences against the first with the interval of the difference and the verdict.
 * Pure: comparison in, string out.
 */
import { fmtInterval, fmtNumber } from '../lesson/verdict';
import type { CompareCell, CompareDiff, CompareRow, RunsComparison } from './compare';

/** Aligned text columns: the first left-aligned, the others right-aligned; two spaces apart. */
export function alignColumns(rows: readonly string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function signed(x: number): string {
  return Number.isFinite(x) ? `${x > 0 ? '+' : ''}${fmtNumber(x)}` : '—';
}

function verdictText(d: CompareDiff): string {
  if (d.verdict === 'real') return `real (${d.run} ${d.direction})`;
  return d.verdict;
}

/** The difference section of one later run against the first. */
function diffSection(c: RunsComparison, run: string): string {
  const ds = c.diffs.filter((d) => d.run === run);
  const conf = `${Math.round(c.confidence * 100)}%`;
  const head = ['metric', 'diff', 'unit', `${conf} interval of diff`, 'verdict'];
  const rows = ds.map((d) => [
    d.comparedAtPct !== undefined ? `${d.row} → p${d.comparedAtPct}` : d.row,
    signed(d.diff),
    d.unit,
    d.interval ? fmtInterval(d.interval) : '—',
    verdictText(d),
  ]);
  const byNote = new Map<string, string[]>();
  for (const d of ds) if (d.note) byNote.set(d.note, [...(byNote.get(d.note) ?? []), d.row]);
  const notes = [...byNote].map(([note, rs]) => `  ${rs.join(', ')}: ${note}`);
  const real = ds.filter((d) => d.verdict === 'real').map((d) => d.row);
  const sum = real.length
    ? `Real differences (interval of the difference excludes 0): ${real.join(', ')}.`
    : 'No difference is real at this confidence: every interval of a difference includes 0, or there is none.';
  return [
    `${run} vs ${ds[0]?.against ?? '?'} (${run} − ${ds[0]?.against ?? '?'}):`,
    alignColumns([head, ...rows]),
    ...notes,
    sum,
  ].join('\n');
}

/** One cell: `value [lo, hi]`, a count as an integer, or `— (n = 0)` when there is no value. */
function cellText(cell: CompareCell, unit: CompareRow['unit']): string {
  if (!Number.isFinite(cell.value)) return `— (n = ${cell.n ?? 0})`;
  if (unit === 'requests') return String(cell.value);
  return cell.interval ? `${fmtNumber(cell.value)} ${fmtInterval(cell.interval)}` : fmtNumber(cell.value);
}

/** The whole comparison as text, ending with a newline. */
export function formatComparison(c: RunsComparison): string {
  const labels = c.runs.map((r) => r.label);
  const runLines = c.runs.map(
    (r, i) => `  ${i === 0 ? 'baseline ' : ''}${r.label}: ${r.dir} — ${r.server}, ${r.load}, ${r.status}`,
  );
  const head = ['metric', ...labels];
  const rows = c.rows.map((row) => [`${row.label} (${row.unit})`, ...row.cells.map((cell) => cellText(cell, row.unit))]);
  const conf = `${Math.round(c.confidence * 100)}%`;
  const later = labels.slice(1);
  return `${[
    `Runs compared (${c.provenance}):`,
    ...runLines,
    '',
    `Side by side (latencies: percentile [${conf} bootstrap interval, ${c.iterations} resamples, seed ${c.seed}]):`,
    alignColumns([head, ...rows]),
    '',
    ...later.flatMap((l) => [diffSection(c, l), '']),
    ...(c.notes.length ? ['Notes:', ...c.notes.map((n) => `  - ${n}`)] : []),
  ].join('\n')}\n`;
}
