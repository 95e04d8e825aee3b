/**
 * `compareRuns`: runs A, B, … side by side, and for each later run against the first, which
 * differences are real. A latency row (TTFT, TPOT, ITL, E2E at p50 and p99; client queue time;
 * TTFT from the intended send time) shows each run's percentile with its seeded bootstrap interval
 * (`bootstrapPercentileCI`), and its difference comes from `compareValues` (src/lesson/verdict.ts):
 * "real" only when the bootstrap interval of the difference excludes 0, "negligible" when a stated
 * threshold holds the whole interval, otherwise "cannot tell". A run flagged disturbed (client-bound,
 * simulator behind) is compared on p50 instead of a tail, as the lessons do, and the row says so.
 * Rates (req/s, output tok/s, goodput) are one number per run: shown, never called real.
 *
 * ITL: the gaps of one request are not independent draws, so ITL intervals resample requests with
 * all their gaps (src/stats/cluster-bootstrap.ts); the percentile itself is over every gap, as vLLM's.
 */
import { compareValues, metricValues, type VerdictMetric, type VerdictSample } from '../lesson/verdict';
import type { BootstrapOptions } from '../stats/bootstrap';
import { bootstrapSampleCI, itlByRequest } from '../stats/cluster-bootstrap';
import { provenanceOf, runServerLabel } from '../view/provenance';
import type { RunSummary } from '../types';
import { manifestOf, type ReportRun } from './report-input';

/** A per-request latency a comparison row reads (ms); `itlMs` means every inter-token gap. */
export type CompareMetricKey = VerdictMetric | 'itlMs';

/** The latency rows of `compareRuns`, in order: metric, percentile, label. */
export const LATENCY_ROWS: readonly { metric: CompareMetricKey; pct: number; label: string }[] = [
  { metric: 'ttftMs', pct: 50, label: 'TTFT p50' },
  { metric: 'ttftMs', pct: 99, label: 'TTFT p99' },
  { metric: 'tpotMs', pct: 50, label: 'TPOT p50' },
  { metric: 'tpotMs', pct: 99, label: 'TPOT p99' },
  { metric: 'itlMs', pct: 50, label: 'ITL p50' },
  { metric: 'itlMs', pct: 99, label: 'ITL p99' },
  { metric: 'e2eMs', pct: 50, label: 'E2E p50' },
  { metric: 'e2eMs', pct: 99, label: 'E2E p99' },
  { metric: 'queueMs', pct: 50, label: 'queue p50' },
  { metric: 'queueMs', pct: 99, label: 'queue p99' },
  { metric: 'ttftFromIntendedMs', pct: 99, label: 'TTFT from intended send p99' },
];

/** One cell of the side-by-side table: a value and, for latencies, its bootstrap interval. */
export interface CompareCell {
  value: number;
  /** Bootstrap interval of the percentile (latency rows only), same unit. */
  interval?: [number, number];
  /** Sample size behind the value (latency rows). */
  n?: number;
}

/** One row of the side-by-side table: a cell per run, in the order given. */
export interface CompareRow {
  label: string;
  unit: 'ms' | 'req/s' | 'tok/s' | 'requests';
  cells: CompareCell[];
}

/** What a difference means: the interval excludes 0, lies within the stated threshold, or neither. */
export type DiffVerdict = 'real' | 'negligible' | 'cannot tell';

/** One difference `run − first run` on one row. */
export interface CompareDiff {
  row: string;
  /** The later run's label and the first run's. */
  run: string;
  against: string;
  unit: CompareRow['unit'];
  /** The percentile compared, when it differs from the row's (a disturbed run: p50). */
  comparedAtPct?: number;
  diff: number;
  /** Bootstrap interval of the difference; absent for rates (one number per run). */
  interval?: [number, number];
  verdict: DiffVerdict;
  /** `higher`/`lower` only when the verdict is real. */
  direction?: 'higher' | 'lower';
  /** Why, in English (disturbed runs, no interval). */
  note?: string;
}

/** The result of `compareRuns`. */
export interface RunsComparison {
  runs: { label: string; dir: string; server: string; load: string; status: string }[];
  /** From the runs' own manifests: every run simulated, none, mixed, or unknown (damaged manifests). */
  provenance: 'simulated' | 'real' | 'simulated and real mixed' | 'unknown';
  /** Coverage of every interval, e.g. 0.95. */
  confidence: number;
  /** Bootstrap resamples and seed behind every interval. */
  iterations: number;
  seed: number;
  rows: CompareRow[];
  /** For each later run, one entry per row. */
  diffs: CompareDiff[];
  /** What a reader must know: disturbed runs, differing loads, mixed provenance, damage (English). */
  notes: string[];
}

/** Options of `compareRuns`. */
export interface CompareRunsOptions {
  /** Bootstrap settings; default 2000 resamples, 95 % confidence, seed 1 (as the lessons' verdicts). */
  bootstrap?: BootstrapOptions;
  /** A stated threshold, percent of the first run's value: a difference within it is "negligible". Default none. */
  thresholdPct?: number;
}

const BOOT: Required<BootstrapOptions> = { iterations: 2000, confidence: 0.95, seed: 1 };

/**
 * One run's side of a latency row: the values in its measured, successful requests (ms). ITL is every
 * gap of every request pooled, as `vllm bench serve` pools them (`vllm/benchmarks/serve.py`,
 * `calculate_metrics`: `itls += outputs[i].itl`), with the same gaps by request as `groups`.
 */
function sideOf(r: ReportRun, metric: CompareMetricKey): VerdictSample {
  const base = { label: r.label, health: r.summary.health };
  if (metric !== 'itlMs') return { ...base, values: metricValues(r.records, metric) };
  const groups = itlByRequest(r.records);
  return { ...base, values: groups.flat(), groups };
}

function healthWords(label: string, s: RunSummary): string | undefined {
  const h = s.health;
  const what = [h?.clientBound ? 'client-bound' : '', h?.simBehind ? 'simulator behind real time' : ''].filter(Boolean);
  return what.length ? `${label} was ${what.join(' and ')}` : undefined;
}

function rateRows(runs: readonly ReportRun[]): CompareRow[] {
  const rows: CompareRow[] = [
    { label: 'request throughput', unit: 'req/s', cells: runs.map((r) => ({ value: r.summary.requestsPerSec })) },
    { label: 'output throughput', unit: 'tok/s', cells: runs.map((r) => ({ value: r.summary.outputTokensPerSec })) },
  ];
  if (runs.some((r) => r.summary.goodput)) {
    rows.push({ label: 'goodput', unit: 'req/s', cells: runs.map((r) => ({ value: r.summary.goodput?.requestsPerSec ?? NaN })) });
  }
  return rows;
}

/** Differences of one later run against the first, one per latency row, then one per rate row. */
function diffsOf(a: ReportRun, b: ReportRun, rates: CompareRow[], bi: number, opts: CompareRunsOptions): CompareDiff[] {
  const boot = { ...BOOT, ...opts.bootstrap };
  const lat = LATENCY_ROWS.map(({ metric, pct, label }): CompareDiff => {
    const c = compareValues(sideOf(a, metric), sideOf(b, metric), pct, {
      bootstrap: boot,
      thresholdPct: opts.thresholdPct,
      name: label,
    });
    const real = c.direction !== 'undecided' && !c.negligible;
    const disturbed = [healthWords(a.label, a.summary), healthWords(b.label, b.summary)].filter(Boolean).join('; ');
    const n = Math.min(c.a.n, c.b.n);
    const notes = [
      c.pct !== c.requestedPct
        ? `compared at p${c.pct}, not p${c.requestedPct}: ${disturbed}, so its tail includes the measurer's own delay`
        : '',
      !Number.isFinite(c.diff) ? `no usable values (n = ${c.a.n} / ${c.b.n})` : '',
      // Fewer than one value beyond the percentile: it sits at the sample's extreme, which a bootstrap cannot vary much.
      Number.isFinite(c.diff) && c.pct > 50 && n * (1 - c.pct / 100) < 1
        ? `p${c.pct} of ${n} values is about the largest value; its interval understates the uncertainty (measure ≥ ${Math.ceil(100 / (100 - c.pct))} requests)`
        : '',
    ].filter(Boolean);
    const note = notes.length ? notes.join('; ') : undefined;
    return {
      row: label,
      run: b.label,
      against: a.label,
      unit: 'ms',
      ...(c.pct !== c.requestedPct ? { comparedAtPct: c.pct } : {}),
      diff: c.diff,
      interval: c.interval,
      verdict: real ? 'real' : c.negligible ? 'negligible' : 'cannot tell',
      ...(real ? { direction: c.direction as 'higher' | 'lower' } : {}),
      ...(note ? { note } : {}),
    };
  });
  const rate = rates.map(
    (row): CompareDiff => ({
      row: row.label,
      run: b.label,
      against: a.label,
      unit: row.unit,
      diff: row.cells[bi].value - row.cells[0].value,
      verdict: 'cannot tell',
      note: 'one number per run: no interval, so no claim',
    }),
  );
  return [...lat, ...rate];
}

const STAMPS_DIFFER = 'part of a TTFT or ITL difference can be the stamping (src/client/chunk-stamp.ts)';

function notesOf(runs: readonly ReportRun[], provenance: RunsComparison['provenance']): string[] {
  const notes = runs.flatMap((r) => [healthWords(r.label, r.summary) ?? [], r.notes.map((n) => `${r.label}: ${n}`)].flat());
  if (provenance === 'simulated and real mixed') {
    notes.push('simulated and real runs mixed: a difference between them says the numbers differ, not why');
  }
  const loads = new Set(
    runs.map((r) => (manifestOf(r) ? String(manifestOf(r)!.load.options.label ?? manifestOf(r)!.load.shape) : '?')),
  );
  if (loads.size > 1) notes.push(`the runs had different loads (${[...loads].join(' / ')})`);
  const stamps = [...new Set(runs.map((r) => manifestOf(r)?.clock?.chunkStamp ?? 'callback'))]; // older runs: per callback
  if (stamps.length > 1) notes.push(`the runs stamped token chunks differently (${stamps.join(' / ')}): ${STAMPS_DIFFER}`);
  notes.push('ITL intervals resample single gaps, which are correlated within a request: they are narrower than they should be');
  return notes;
}

/** The runs, with ` #k` (1-based position) added to every label that is not unique. */
function uniqueLabels(runs: readonly ReportRun[]): ReportRun[] {
  const count = new Map<string, number>();
  for (const r of runs) count.set(r.label, (count.get(r.label) ?? 0) + 1);
  return runs.map((r, i) => ((count.get(r.label) ?? 0) > 1 ? { ...r, label: `${r.label} #${i + 1}` } : r));
}

/**
 * Compare runs (at least two; the first is the baseline) on the rows of `LATENCY_ROWS` plus
 * throughput and goodput. See the module comment for the rules. Pure apart from the bootstrap cost
 * (about 2·n·2000 steps per row and run).
 * @throws when fewer than two runs are given, or the threshold is not a percent > 0.
 */
export function compareRuns(given: readonly ReportRun[], opts: CompareRunsOptions = {}): RunsComparison {
  if (given.length < 2)
    throw new Error(`compare needs at least two run folders (the first is the baseline), got ${given.length}`);
  const runs = uniqueLabels(given);
  const boot = { ...BOOT, ...opts.bootstrap };
  const latency: CompareRow[] = LATENCY_ROWS.map(({ metric, pct, label }) => ({
    label,
    unit: 'ms',
    cells: runs.map((r) => {
      const s = sideOf(r, metric);
      const ci = bootstrapSampleCI(s, pct, boot);
      return { value: ci.estimate, interval: [ci.lo, ci.hi] as [number, number], n: s.values.length };
    }),
  }));
  const rates = rateRows(runs);
  const known = runs.flatMap((r) => (manifestOf(r) ? [{ manifest: manifestOf(r)! }] : []));
  const p = known.length < runs.length ? undefined : provenanceOf(known);
  const provenance = p === 'mixed' ? 'simulated and real mixed' : (p ?? 'unknown');
  return {
    runs: runs.map((r) => {
      const m = manifestOf(r);
      return {
        label: r.label,
        dir: r.dir,
        server: m ? runServerLabel(m) : 'unknown (manifest unusable)',
        load: m ? String(m.load.options.label ?? m.load.shape) : 'unknown',
        status: m?.status ?? 'unknown',
      };
    }),
    provenance,
    confidence: boot.confidence,
    iterations: boot.iterations,
    seed: boot.seed,
    rows: [...latency, ...rates, { label: 'failed', unit: 'requests', cells: runs.map((r) => ({ value: r.summary.failed })) }],
    diffs: runs.slice(1).flatMap((b, i) => diffsOf(runs[0], b, rates, i + 1, opts)),
    notes: notesOf(runs, provenance),
  };
}
