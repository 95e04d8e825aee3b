/**
 * The server timeline: what the client saw (request bars, token ticks, ITL stalls) above what
 * the server reported (`/metrics` scrapes, optional GPU samples) below, on ONE shared time axis.
 * Panels are y axes with stacked `domain`s, all on `xaxis: 'x'`. Cumulative counters become
 * per-scrape increments (preemptions) or rates (tokens/s, prefix-cache hit rate), by the rules of
 * `stats/counters.ts` (a counter that goes down is a reset), the same the tables use.
 */
import type { GpuSample, MetricsSample, RequestRecord } from '../types';
import {
  axisTitle,
  baseLayout,
  colorAt,
  msToS,
  PHASE_COLORS,
  finitePercentile,
  type Axis,
  type ChartOptions,
  type Figure,
  type Trace,
} from './figure';
import { requestBarTraces, type RequestBarsOptions } from './charts-timeline';
import { counterIncrements, hasSwapped, seriesTraces, type ServerSeries } from './charts-server-series';

export { counterIncrements, hasSwapped, type ServerSeries } from './charts-server-series';

type Panel = 'count' | 'percent' | 'rate' | 'ms';

const PANEL_OF: Record<ServerSeries, Panel> = {
  running: 'count',
  waiting: 'count',
  swapped: 'count',
  preemptions: 'count',
  kvUsage: 'percent',
  prefixHitRate: 'percent',
  gpuUtil: 'percent',
  gpuMem: 'percent',
  promptTokensPerSec: 'rate',
  generationTokensPerSec: 'rate',
  simLatenessMs: 'ms',
};
const PANEL_TITLE: Record<Panel, string> = { count: 'requests', percent: '%', rate: 'tokens/s', ms: 'ms' };

/** Options of `serverTimeline`. */
export interface ServerTimelineOptions extends ChartOptions, Omit<RequestBarsOptions, 'yaxis'> {
  gpu?: GpuSample[];
  /**
   * Default: running, waiting (plus swapped when the samples carry it, V0's `vllm:num_requests_swapped`),
   * kvUsage, preemptions, plus gpuUtil when `gpu` has samples. `swapped` draws nothing when no sample has it.
   */
  series?: ServerSeries[];
  /** An inter-token gap counts as a stall above `stallFactor` × the median gap. Default 5. */
  stallFactor?: number;
}

/** ITL stalls as red triangles on the request's row: gaps above `factor` × the median gap of all requests. */
function stallTrace(records: RequestRecord[], factor: number): Trace {
  const median = finitePercentile(
    records.flatMap((r) => r.itlMs),
    50,
  );
  const stalls = records.flatMap((r) =>
    r.itlMs.flatMap((gap, k) => (gap > factor * median && k + 1 < r.chunkMs.length ? [{ r, gap, tMs: r.chunkMs[k + 1] }] : [])),
  );
  return {
    type: 'scatter',
    mode: 'markers',
    name: Number.isFinite(median) ? `ITL stall (> ${factor}× median ${median.toFixed(1)} ms)` : 'ITL stall',
    xaxis: 'x',
    yaxis: 'y',
    x: stalls.map((s) => msToS(s.tMs)),
    y: stalls.map((s) => s.r.index),
    text: stalls.map((s) => `#${s.r.index}: gap ${s.gap.toFixed(1)} ms (${(s.gap / median).toFixed(1)}× median)`),
    marker: { symbol: 'triangle-down', size: 9, color: PHASE_COLORS.stall },
    hovertemplate: '%{text}<extra></extra>',
  };
}

/** Panel domains stacked top to bottom, as [bottom, top] fractions of the plot: requests weigh 2, each server panel 1. */
function stackedDomains(serverPanels: number): [number, number][] {
  const gap = 0.05;
  const weights = [2, ...Array.from({ length: serverPanels }, () => 1)];
  const unit = (1 - gap * (weights.length - 1)) / weights.reduce((a, b) => a + b, 0);
  let top = 1;
  return weights.map((w) => {
    const d: [number, number] = [Math.max(0, top - w * unit), top];
    top = d[0] - gap;
    return d;
  });
}

/**
 * Request bars and token ticks (top panel, `yaxis: 'y'`) above server series (one panel per unit:
 * requests, %, tokens/s, ms, on `y2`, `y3`, …), all sharing `xaxis: 'x'` = run time (s).
 * Preemption increments are drawn as vertical lines through every panel; ITL stalls
 * (gap > `stallFactor` × median gap) as red triangles on the request's row.
 */
export function serverTimeline(records: RequestRecord[], metrics: MetricsSample[], opts: ServerTimelineOptions = {}): Figure {
  const gpu = opts.gpu ?? [];
  const series = opts.series ?? [
    'running',
    'waiting',
    ...(hasSwapped(metrics) ? ['swapped' as const] : []),
    'kvUsage',
    'preemptions',
    ...(gpu.length ? ['gpuUtil' as const] : []),
  ];
  const panels = (['count', 'percent', 'rate', 'ms'] as Panel[]).filter((p) => series.some((s) => PANEL_OF[s] === p));
  const axisOf = new Map(panels.map((p, i) => [p, `y${i + 2}`]));

  const data = requestBarTraces(records, { colorBy: opts.colorBy, ticks: opts.ticks, yaxis: 'y' });
  data.push(stallTrace(records, opts.stallFactor ?? 5));
  series.forEach((s, i) => data.push(...seriesTraces(s, metrics, gpu, axisOf.get(PANEL_OF[s])!, colorAt(i + 1))));

  const domains = stackedDomains(panels.length);
  const layout = baseLayout('Client and server on one timeline', opts, 380 + 170 * panels.length);
  layout.barmode = 'overlay';
  layout.legend = { orientation: 'v', x: 1.02, xanchor: 'left', y: 1, yanchor: 'top' };
  layout.margin = { l: 70, r: 250, t: 60, b: 55 };
  const bottom = panels.length ? `y${panels.length + 1}` : 'y';
  layout.xaxis = { title: axisTitle('run time (s)'), anchor: bottom, rangemode: 'tozero' };
  layout.yaxis = { title: axisTitle('request #'), domain: domains[0], anchor: 'x', autorange: 'reversed', zeroline: false };
  panels.forEach((p, i) => {
    const ax: Axis = { title: axisTitle(PANEL_TITLE[p]), domain: domains[i + 1], anchor: 'x', rangemode: 'tozero' };
    if (p === 'percent') ax.range = [0, 105];
    layout[`yaxis${i + 2}`] = ax;
  });
  layout.shapes = series.includes('preemptions')
    ? counterIncrements(metrics, 'preemptionsTotal')
        .filter((d) => d.inc > 0)
        .map((d) => ({
          type: 'line',
          xref: 'x',
          yref: 'paper',
          x0: msToS(d.tMs),
          x1: msToS(d.tMs),
          y0: 0,
          y1: 1,
          line: { color: PHASE_COLORS.preemption, width: 1, dash: 'dot' },
          layer: 'above',
        }))
    : [];
  return { data, layout };
}
