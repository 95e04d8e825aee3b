/**
 * The two run tables every lesson needs: one run's latency summary, and runs side by side.
 * Captions and headers are Simplified Chinese with the English metric name kept ("首字延迟 TTFT
 * p95 (ms)"). Given runs (with their manifests), they label themselves from each run's own manifest
 * ("(simulated)"), never from the server the notebook talks to now. A run whose measurer was the
 * bottleneck gets a full-width banner above the table, not a note in the caption.
 */
import type { Distribution, RunSummary } from '../types';
import { healthBannerLines } from './banner';
import { provenanceOf, provenanceSuffix, runServerLabel, type Provenance, type RunLike } from './provenance';
import { table } from './table-html';

/** The latency metrics of `RunSummary` that `summaryTable` lists, with their row labels (Chinese, English kept). */
export const SUMMARY_METRICS: readonly { key: 'ttftMs' | 'tpotMs' | 'itlMs' | 'e2eMs'; label: string }[] = [
  { key: 'ttftMs', label: '首字延迟 TTFT' },
  { key: 'tpotMs', label: '每输出 token 时间 TPOT' },
  { key: 'itlMs', label: 'token 间隔 ITL' },
  { key: 'e2eMs', label: '端到端延迟 E2E' },
];

/** Column headers of `summaryRows`, in order. */
export const SUMMARY_COLUMNS = {
  metric: '指标 metric',
  n: '样本数 n',
  mean: '均值 mean (ms)',
  p50: 'p50 (ms)',
  p90: 'p90 (ms)',
  p95: 'p95 (ms)',
  p99: 'p99 (ms)',
  max: '最大 max (ms)',
} as const;

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

/** Rows of `summaryTable`: metric, n, mean, p50, p90, p95, p99, max (ms); keys are `SUMMARY_COLUMNS`. */
export function summaryRows(summary: RunSummary): Record<string, unknown>[] {
  const c = SUMMARY_COLUMNS;
  return SUMMARY_METRICS.map(({ key, label }) => {
    const d: Distribution = summary[key];
    return {
      [c.metric]: label,
      [c.n]: d.n,
      [c.mean]: d.mean,
      [c.p50]: d.p50,
      [c.p90]: d.p90,
      [c.p95]: d.p95,
      [c.p99]: d.p99,
      [c.max]: d.max,
    };
  });
}

function withSim(caption: string, simulated?: Provenance): string {
  return `${caption}${provenanceSuffix(simulated)}`;
}

/** Plain-words flag for a run whose measurer was the bottleneck ('' when healthy or unknown); the banner says more. */
export function healthFlag(summary: RunSummary): string {
  const h = summary.health;
  if (!h || (!h.clientBound && !h.simBehind)) return '';
  const what = [h.clientBound ? 'CLIENT-BOUND' : '', h.simBehind ? 'SIMULATOR BEHIND REAL TIME' : ''].filter(Boolean).join(', ');
  return `⚠ ${what}: ${h.warnings.join(' ')}`;
}

/**
 * Display one run's TTFT/TPOT/ITL/E2E distributions (ms) as a table; returns like `table`.
 * Pass the run (not only its summary) to caption it from its own manifest. Health warnings
 * go to a full-width banner above the table.
 */
export function summaryTable(input: SummaryOrRun, opts: SummaryTableOptions = {}): string | undefined {
  const summary = isRun(input) ? input.summary : input;
  const label: Provenance | undefined = isRun(input) ? input : opts.simulated;
  const caption =
    opts.caption ?? `延迟 latency (ms)：${summary.requests} 个请求中 ${summary.completed} 个完成，${summary.failed} 个失败`;
  const d = opts.digits ?? 1;
  const c = SUMMARY_COLUMNS;
  const digits = { [c.mean]: d, [c.p50]: d, [c.p90]: d, [c.p95]: d, [c.p99]: d, [c.max]: d };
  const banner = healthBannerLines(summary);
  return table(summaryRows(summary), { caption: withSim(caption, label), digits, banner, kind: 'summary' });
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
  { header: '端到端 E2E p50 (ms)', value: (s) => s.e2eMs.p50 },
  { header: '端到端 E2E p95 (ms)', value: (s) => s.e2eMs.p95 },
  { header: '端到端 E2E p99 (ms)', value: (s) => s.e2eMs.p99 },
  { header: '首字延迟 TTFT p50 (ms)', value: (s) => s.ttftMs.p50 },
  { header: '首字延迟 TTFT p95 (ms)', value: (s) => s.ttftMs.p95 },
  { header: '输出吞吐 output (tok/s)', value: (s) => s.outputTokensPerSec },
  { header: '请求速率 (req/s)', value: (s) => s.requestsPerSec },
  { header: '失败数 failed', value: (s) => s.failed, digits: 0 },
];

/** Headers of the columns `compareRows` adds itself. */
export const COMPARE_COLUMNS = { run: '运行 run', server: '服务器 server', measurer: '测量端 measurer' } as const;

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
 * Rows of `compareTable`: one per item, `运行 run` = its label, then one column per metric. When the
 * items' manifests name more than one kind of server, a `服务器 server` column says which measured
 * each row; when any run has a health verdict, a `测量端 measurer` column flags each row.
 */
export function compareRows(
  items: readonly CompareItem[],
  metrics: readonly CompareMetric[] = DEFAULT_COMPARE_METRICS,
): Record<string, unknown>[] {
  const anyHealth = items.some(({ summary }) => summary.health !== undefined);
  const servers = new Set(items.map((i) => (i.manifest ? runServerLabel({ manifest: i.manifest }) : 'unknown')));
  const perRowServer = itemRuns(items).length > 0 && servers.size > 1;
  const c = COMPARE_COLUMNS;
  return items.map(({ label, summary, manifest }) => {
    const row: Record<string, unknown> = { [c.run]: String(label) };
    if (perRowServer) row[c.server] = manifest ? runServerLabel({ manifest }) : 'unknown';
    for (const m of metrics) row[m.header] = m.value(summary);
    // Flag, per row, a run whose own measurer was the bottleneck (the banner says why).
    if (anyHealth) {
      const h = summary.health;
      row[c.measurer] = h?.clientBound ? '⚠ 客户端瓶颈 client-bound' : h?.simBehind ? '⚠ 模拟器落后 sim behind' : '正常 ok';
    }
    return row;
  });
}

/**
 * Display runs side by side (rows = runs, e.g. by concurrency); returns like `table`. Give each
 * item its run's `manifest` to label the caption (and, when they differ, each row) from it.
 * Runs whose measurer was the bottleneck are named in a full-width banner above the table.
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
  const caption = withSim(opts.caption ?? '运行对比 runs compared', label);
  const d = opts.digits ?? 1;
  const digits = Object.fromEntries(metrics.map((m) => [m.header, m.digits ?? d]));
  const banner = items.flatMap((i) => healthBannerLines(i.summary, String(i.label)));
  return table(compareRows(items, metrics), { caption, digits, banner, kind: 'compare' });
}
