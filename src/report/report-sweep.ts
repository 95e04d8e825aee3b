/**
 * The report of a sweep folder: one page with every point's provenance, a compare table of the
 * points, throughput against the load (concurrency or request rate, with the saturation point when
 * the data show one: `findSaturation`), TTFT against the load, the latency–throughput trade-off and
 * the TTFT CDF of every point. Points are ordered by their own manifests' load (`orderPoints`).
 */
import { latencyCdf, percentileBars } from '../view/charts-latency';
import { findSaturation, latencyThroughputTradeoff, scalingPoints, throughputVsConcurrency } from '../view/charts-scaling';
import { axisTitle, type Figure } from '../view/figure';
import { provenanceSuffix, runServerLabel, type Provenance } from '../view/provenance';
import { tableHtml } from '../view/table-html';
import { compareRows, DEFAULT_COMPARE_METRICS, type CompareItem } from '../view/tables-runs';
import { metricValues } from '../lesson/verdict';
import { manifestOf, type LoadAxis, type ReportInput, type SweepPoint } from './report-input';
import { FigureIds, para, provenanceWords, reportPage, type ReportSection } from './report-page';
import { figureHasData, measuredRecords, runBanner } from './report-run';

type Sweep = Extract<ReportInput, { kind: 'sweep' }>;

const AXIS_TITLE: Record<LoadAxis, string> = {
  concurrency: '并发 concurrency (requests in flight)',
  rate: '请求速率 request rate (req/s)',
  order: '点 point（文件夹顺序 folder order）',
};

/** The points' runs as a chart's `simulated` option (each from its own manifest; damaged ones left out). */
function provenanceOfPoints(points: readonly SweepPoint[]): Provenance {
  return points.flatMap((p) => (manifestOf(p.run) ? [{ manifest: manifestOf(p.run)! }] : []));
}

/** One row per point: where it is, what measured it, its load, status and date. */
function pointsProvenanceTable(points: readonly SweepPoint[]): string {
  const rows = points.map((p) => {
    const m = manifestOf(p.run);
    return {
      '点 point': p.label,
      '文件夹 folder': p.run.dir,
      '服务器 server': m ? runServerLabel(m) : `manifest 损坏 unusable`,
      '模型 model': m?.target.model ?? '—',
      '负载 load': m ? String(m.load.options.label ?? m.load.shape) : '—',
      '状态 status': m?.status ?? '—',
      '开始 started': m?.startedAt ?? '—',
    };
  });
  return tableHtml(rows, { caption: `来源 provenance：${provenanceWords(points.map((p) => p.run))}`, kind: 'provenance' });
}

/** The compare table of the points (rows = points), as HTML. */
function pointsCompareTable(points: readonly SweepPoint[]): string {
  const items: CompareItem[] = points.map((p) => {
    const m = manifestOf(p.run);
    return { label: p.label, summary: p.run.summary, ...(m ? { manifest: m } : {}) };
  });
  const metrics = DEFAULT_COMPARE_METRICS;
  const digits = Object.fromEntries(metrics.map((m) => [m.header, m.digits ?? 1]));
  const caption = `各点对比 points compared${provenanceSuffix(provenanceOfPoints(points))}`;
  return tableHtml(compareRows(items, metrics), { caption, digits, kind: 'compare' });
}

/** Throughput (and TTFT) against the sweep's load; for a rate or order axis the x axis and title say so. */
function scalingFigure(sweep: Sweep, sim: Provenance): Figure {
  const pts = scalingPoints(sweep.points.map((p) => ({ concurrency: p.x, summary: p.run.summary })));
  if (sweep.axis === 'concurrency') {
    const saturationAt = findSaturation(pts);
    return throughputVsConcurrency(pts, { simulated: sim, ...(saturationAt !== undefined ? { saturationAt } : {}) });
  }
  const fig = throughputVsConcurrency(pts, {
    simulated: sim,
    logX: false,
    title: `吞吐与负载 throughput vs ${sweep.axis === 'rate' ? 'request rate' : 'point'}`,
  });
  fig.layout.xaxis = { ...fig.layout.xaxis, title: axisTitle(AXIS_TITLE[sweep.axis]) };
  return fig;
}

/** The sweep's charts, in page order; a chart with no points becomes a note. */
function sweepCharts(sweep: Sweep, ids: FigureIds): ReportSection[] {
  const sim = provenanceOfPoints(sweep.points);
  const items = sweep.points.map((p) => ({ label: p.label, summary: p.run.summary }));
  const xTitle = AXIS_TITLE[sweep.axis];
  const figs: [string, Figure][] = [
    ['吞吐与负载 throughput vs load', scalingFigure(sweep, sim)],
    ['首字延迟与负载 TTFT vs load', percentileBars(items, 'ttftMs', { simulated: sim, xTitle })],
    ['端到端延迟与负载 E2E vs load', percentileBars(items, 'e2eMs', { simulated: sim, xTitle })],
    [
      '首字延迟分布 TTFT CDF',
      latencyCdf(
        sweep.points.map((p) => ({ label: p.label, values: metricValues(measuredRecords(p.run), 'ttftMs') })),
        { simulated: sim, title: '各点首字延迟累积分布 TTFT CDF per point', xTitle: '首字延迟 TTFT' },
      ),
    ],
  ];
  if (sweep.axis === 'concurrency') {
    const pts = scalingPoints(sweep.points.map((p) => ({ concurrency: p.x, summary: p.run.summary })));
    figs.splice(3, 0, ['延迟与吞吐的权衡 latency–throughput trade-off', latencyThroughputTradeoff(pts, { simulated: sim })]);
  }
  return figs.map(([heading, fig]) => ({
    heading,
    html: figureHasData(fig) ? ids.html(fig) : para('无数据 no data: 这些点没有可画的数值。'),
  }));
}

/** The complete standalone page of a sweep (plotly.js inlined once; opens offline). */
export function sweepReportHtml(sweep: Sweep): string {
  const sim = provenanceOfPoints(sweep.points);
  const title = `LoadLab 扫描报告 sweep report：${sweep.dir}${provenanceSuffix(sim)}`;
  // The simulated line once for the whole sweep, not once per point.
  const banner = sweep.points.flatMap((p) => runBanner(p.run, p.label, false));
  if (sweep.points.some((p) => manifestOf(p.run)?.target.simulated)) {
    banner.unshift(
      `这些数字来自模拟器 simulated vLLM，不是 GPU 上的测量（${provenanceWords(sweep.points.map((p) => p.run))}）。`,
    );
  }
  const ids = new FigureIds();
  const sections: ReportSection[] = [
    {
      heading: '来源 provenance',
      html:
        pointsProvenanceTable(sweep.points) +
        para(
          `点的顺序按各运行 manifest 里的负载 (points ordered by each manifest's load: ${sweep.axis})；sweep.json ${sweep.hasSweepJson ? '存在 present' : '不存在 absent'}。`,
        ),
    },
    { heading: '各点对比 points compared', html: pointsCompareTable(sweep.points) },
    ...sweepCharts(sweep, ids),
  ];
  const runs = sweep.points.map((p) => p.run);
  const servers = [...new Set(runs.map((r) => (manifestOf(r) ? runServerLabel(manifestOf(r)!) : 'unknown')))].join(' / ');
  const subtitle = `${sweep.points.length} 个点 points (${sweep.points.map((p) => p.label).join(', ')}) · ${provenanceWords(runs)} · ${servers}`;
  return reportPage(title, banner, sections, subtitle);
}
