/**
 * The report of one run: provenance from its manifest, the health banner, the summary tables and
 * the lessons' charts (latency CDFs, percentile bars, request Gantt, ITL over time, the server
 * timeline when `metrics.jsonl` exists, GPU when `gpu.jsonl` exists). The TTFT CDF draws TTFT
 * counted from the intended send time beside TTFT from the actual send, so a client that fell
 * behind its schedule (coordinated omission) shows as a gap between the two lines.
 */
import { healthBannerLines } from '../view/banner';
import { latencyCdf, percentileBars } from '../view/charts-latency';
import { serverTimeline } from '../view/charts-server';
import { itlTimeSeries, requestGantt } from '../view/charts-timeline';
import type { Figure } from '../view/figure';
import { provenanceSuffix, type Provenance } from '../view/provenance';
import { tableHtml } from '../view/table-html';
import { SUMMARY_COLUMNS, summaryRows } from '../view/tables-runs';
import { metricValues } from '../lesson/verdict';
import { ERROR_CODES, type RequestRecord, type RunSummary } from '../types';
import { manifestOf, type ReportRun } from './report-input';
import { FigureIds, para, provenanceTable, reportPage, runSubtitle, type ReportSection } from './report-page';

/** The run as a chart's `simulated` option (labelled from its own manifest), or undefined when damaged. */
export function provenanceOfRun(run: ReportRun): Provenance | undefined {
  const m = manifestOf(run);
  return m ? { manifest: m } : undefined;
}

/** True when some trace of `fig` has at least one point. */
export function figureHasData(fig: Figure): boolean {
  return fig.data.some((t) => Array.isArray(t.x) && t.x.length > 0);
}

/** The measured (non-warm-up) records of a run. */
export function measuredRecords(run: ReportRun): RequestRecord[] {
  return run.records.filter((r) => !r.warmup);
}

/** Banner lines of a run: measurer health, simulated numbers (unless `simulatedLine` is false), damage found while reading. */
export function runBanner(run: ReportRun, label?: string, simulatedLine = true): string[] {
  const m = manifestOf(run);
  const sim =
    simulatedLine && m?.target.simulated
      ? [`${label ? `${label}：` : ''}这些数字来自模拟器 simulated vLLM，不是 GPU 上的测量。`]
      : [];
  const notes = run.notes.map((n) => `${label ? `${label}: ` : ''}${n}`);
  return [...healthBannerLines(run.summary, label), ...sim, ...notes];
}

/** The latency table (TTFT/TPOT/ITL/E2E, ms) of a summary, as HTML (never displayed). */
export function summaryTableHtml(summary: RunSummary, simulated: Provenance | undefined, caption?: string): string {
  const c = SUMMARY_COLUMNS;
  const digits = { [c.mean]: 1, [c.p50]: 1, [c.p90]: 1, [c.p95]: 1, [c.p99]: 1, [c.max]: 1 };
  const cap = caption ?? `延迟 latency (ms)：${summary.requests} 个请求中 ${summary.completed} 个完成，${summary.failed} 个失败`;
  return tableHtml(summaryRows(summary), { caption: `${cap}${provenanceSuffix(simulated)}`, digits, kind: 'summary' });
}

/** Failures as `3 (http_5xx 2, connection_reset 1)`, or `0`. */
function failuresText(s: RunSummary): string {
  const parts = ERROR_CODES.filter((c) => (s.errors[c] ?? 0) > 0).map((c) => `${c} ${s.errors[c]}`);
  return parts.length ? `${s.failed} (${parts.join(', ')})` : String(s.failed);
}

/** Throughput, failures, goodput and client queueing of a summary, as one HTML table. */
export function throughputTableHtml(summary: RunSummary, simulated: Provenance | undefined): string {
  const s = summary;
  const rows: Record<string, unknown>[] = [
    { '指标 metric': '请求速率 request throughput (req/s)', '值 value': s.requestsPerSec },
    { '指标 metric': '输出吞吐 output throughput (tok/s)', '值 value': s.outputTokensPerSec },
    { '指标 metric': '总吞吐 total throughput (tok/s)', '值 value': s.totalTokensPerSec },
    { '指标 metric': '测量时长 duration (s)', '值 value': s.durationS },
    { '指标 metric': '失败数 failed（按错误码 by error code）', '值 value': failuresText(s) },
    { '指标 metric': '客户端排队 queueMs p50 (ms)', '值 value': s.queueMs.p50 },
    { '指标 metric': '客户端排队 queueMs p99 (ms)', '值 value': s.queueMs.p99 },
    { '指标 metric': '从计划时刻算的 TTFT ttftFromIntendedMs p99 (ms)', '值 value': s.ttftFromIntendedMs.p99 },
  ];
  if (s.goodput) {
    const slo = JSON.stringify(s.goodput.slo);
    rows.push({ '指标 metric': `有效吞吐 goodput (req/s) ${slo}`, '值 value': s.goodput.requestsPerSec });
  }
  const caption = `吞吐与排队 throughput and queueing${provenanceSuffix(simulated)}`;
  return tableHtml(rows, { caption, digits: { '值 value': 2 }, kind: 'throughput' });
}

/** Most inter-token gaps drawn as SVG points in one chart; above it every k-th request is drawn, and the chart says so. */
export const MAX_ITL_POINTS = 50_000;

/** The ITL-over-time chart and its note; with more than `MAX_ITL_POINTS` gaps, only every k-th request is drawn. */
function itlFigure(measured: RequestRecord[], sim: Provenance | undefined): [Figure, string] {
  let gaps = 0;
  for (const r of measured) gaps += r.itlMs.length;
  const k = Math.max(1, Math.ceil(gaps / MAX_ITL_POINTS));
  if (k === 1) return [itlTimeSeries(measured, { simulated: sim }), ''];
  const shown = measured.filter((_, i) => i % k === 0);
  const title = `token 间隔随时间 inter-token gaps over time（每 ${k} 个请求画 1 个 1 request in ${k} drawn）`;
  const note = `共 ${gaps} 个间隔 gaps：为了让页面能打开，这里只画每第 ${k} 个请求；完整数据在 requests.jsonl。`;
  return [itlTimeSeries(shown, { simulated: sim, title }), note];
}

/** The lessons' charts of one run, in page order; charts that would be empty are replaced by a note. */
function runCharts(run: ReportRun, ids: FigureIds): ReportSection[] {
  const sim = provenanceOfRun(run);
  const measured = measuredRecords(run);
  const items = [{ label: run.label, summary: run.summary }];
  const figs: [string, Figure | undefined, string][] = [
    [
      '首字延迟分布 TTFT CDF',
      latencyCdf(
        [
          { label: 'TTFT（从实际发出算 from send）', values: metricValues(measured, 'ttftMs') },
          { label: 'TTFT（从计划发出时刻算 from intended send）', values: metricValues(measured, 'ttftFromIntendedMs') },
        ],
        { simulated: sim, title: '首字延迟累积分布 TTFT CDF', xTitle: '首字延迟 TTFT' },
      ),
      '两条线分开时，客户端没有按计划发出请求（coordinated omission）：从计划时刻算的 TTFT 才是用户等到的时间。',
    ],
    [
      '端到端延迟分布 E2E CDF',
      latencyCdf([{ label: 'E2E', values: metricValues(measured, 'e2eMs') }], {
        simulated: sim,
        title: '端到端延迟累积分布 E2E CDF',
        xTitle: '端到端延迟 E2E',
      }),
      '',
    ],
    ['首字延迟分位数 TTFT percentiles', percentileBars(items, 'ttftMs', { simulated: sim, xTitle: '运行 run' }), ''],
    ['端到端延迟分位数 E2E percentiles', percentileBars(items, 'e2eMs', { simulated: sim, xTitle: '运行 run' }), ''],
    ['请求时间线 request timeline', requestGantt(measured, { simulated: sim, ticks: measured.length <= 200 }), ''],
    ['token 间隔随时间 ITL over time', ...itlFigure(measured, sim)],
    [
      '服务器时间线 server timeline (/metrics)',
      run.metrics?.length ? serverTimeline(measured, run.metrics, { simulated: sim, gpu: run.gpu }) : undefined,
      '',
    ],
    [
      'GPU (nvidia-smi)',
      run.gpu?.length
        ? serverTimeline(measured, [], {
            simulated: sim,
            gpu: run.gpu,
            series: ['gpuUtil', 'gpuMem'],
            title: 'GPU 利用率与显存 GPU util and memory',
          })
        : undefined,
      '',
    ],
  ];
  return figs
    .filter(([, fig]) => fig !== undefined)
    .map(([heading, fig, note]) => ({
      heading,
      html: figureHasData(fig!) ? (note ? para(note) : '') + ids.html(fig!) : para('无数据 no data: 这次运行没有可画的点。'),
    }));
}

/** The sections of one run's report (provenance, tables, charts); `ids` numbers the charts of the page. */
export function runSections(run: ReportRun, ids: FigureIds): ReportSection[] {
  const sim = provenanceOfRun(run);
  return [
    { heading: '来源 provenance', html: provenanceTable(run) },
    { heading: '汇总 summary', html: summaryTableHtml(run.summary, sim) + throughputTableHtml(run.summary, sim) },
    ...runCharts(run, ids),
  ];
}

/** The complete standalone page of one run (plotly.js inlined once; opens offline). */
export function runReportHtml(run: ReportRun): string {
  const sim = provenanceOfRun(run);
  const title = `LoadLab 报告 report：${run.label}${provenanceSuffix(sim)}`;
  return reportPage(title, runBanner(run), runSections(run, new FigureIds()), runSubtitle(run));
}
