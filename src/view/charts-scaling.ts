/**
 * Scaling charts for a concurrency sweep: throughput and tail latency against concurrency
 * ("latency gets worse while throughput gets better"), the saturation point, and the
 * latency–throughput trade-off curve.
 */
import type { RunSummary } from '../types';
import { axisTitle, baseLayout, colorAt, type ChartOptions, type Figure, type Trace } from './figure';
import { scalingTitle } from './saturation';

export { findSaturation, scalingTitle } from './saturation';

/** One run of a sweep, reduced to the numbers the scaling charts plot. */
export interface ScalingPoint {
  concurrency: number;
  outputTokensPerSec: number;
  ttftP99Ms: number;
  requestsPerSec?: number;
  ttftP50Ms?: number;
  ttftP95Ms?: number;
  e2eP50Ms?: number;
  e2eP95Ms?: number;
  e2eP99Ms?: number;
  tpotP50Ms?: number;
}

/** A latency field of `ScalingPoint`. */
export type ScalingLatencyKey = 'ttftP99Ms' | 'ttftP95Ms' | 'ttftP50Ms' | 'e2eP50Ms' | 'e2eP95Ms' | 'e2eP99Ms' | 'tpotP50Ms';

const LATENCY_NAMES: Record<ScalingLatencyKey, string> = {
  ttftP99Ms: '首字延迟 TTFT p99',
  ttftP95Ms: '首字延迟 TTFT p95',
  ttftP50Ms: '首字延迟 TTFT p50',
  e2eP50Ms: '端到端延迟 E2E p50',
  e2eP95Ms: '端到端延迟 E2E p95',
  e2eP99Ms: '端到端延迟 E2E p99',
  tpotP50Ms: '每 token 时间 TPOT p50',
};

/** `ScalingPoint`s from run summaries of a sweep, sorted by concurrency. */
export function scalingPoints(items: { concurrency: number; summary: RunSummary }[]): ScalingPoint[] {
  return items
    .map(({ concurrency, summary: s }) => ({
      concurrency,
      outputTokensPerSec: s.outputTokensPerSec,
      requestsPerSec: s.requestsPerSec,
      ttftP50Ms: s.ttftMs.p50,
      ttftP95Ms: s.ttftMs.p95,
      ttftP99Ms: s.ttftMs.p99,
      e2eP50Ms: s.e2eMs.p50,
      e2eP95Ms: s.e2eMs.p95,
      e2eP99Ms: s.e2eMs.p99,
      tpotP50Ms: s.tpotMs.p50,
    }))
    .sort((a, b) => a.concurrency - b.concurrency);
}

/** Options of `throughputVsConcurrency`. */
export interface ThroughputVsConcurrencyOptions extends ChartOptions {
  /** Concurrency to mark as the saturation point (e.g. from `findSaturation`); none when undefined. */
  saturationAt?: number;
  /**
   * Latency on the right axis. Default `'ttftBand'`: TTFT p50 as a line with the p95–p99 range as
   * a shaded band (a lone p99 of a short run is noisy). A key draws that one line instead.
   */
  latency?: ScalingLatencyKey | 'ttftBand';
  /** Log₂-spaced concurrency axis. Default true when every concurrency is > 0. */
  logX?: boolean;
  /** Gain per doubling below which the default title calls throughput flat (`scalingTitle`). Default 0.1. */
  gainBelow?: number;
}

const LAT = colorAt(3);

/** Right-axis latency traces: one line for a key; for `'ttftBand'` the p50 line, then p95 and p99 bounding a band. */
function latencyTraces(ps: ScalingPoint[], key: ScalingLatencyKey | 'ttftBand'): Trace[] {
  const x = ps.map((p) => p.concurrency);
  const line = (k: ScalingLatencyKey): Trace => ({
    type: 'scatter',
    mode: 'lines+markers',
    name: `${LATENCY_NAMES[k]} (ms)`,
    x,
    yaxis: 'y2',
    y: ps.map((p) => p[k] ?? NaN),
    marker: { color: LAT, symbol: 'square' },
    line: { color: LAT, dash: 'dot' },
    hovertemplate: `c=%{x}: %{y:.0f} ms<extra>${LATENCY_NAMES[k]}</extra>`,
  });
  if (key !== 'ttftBand') return [line(key)];
  const edge = (k: 'ttftP95Ms' | 'ttftP99Ms', fill: boolean): Trace => ({
    type: 'scatter',
    mode: 'lines',
    name: fill ? '首字延迟 TTFT p95–p99 区间' : `${LATENCY_NAMES[k]} (ms)`,
    showlegend: fill,
    legendgroup: 'ttft-band',
    x,
    yaxis: 'y2',
    y: ps.map((p) => p[k] ?? NaN),
    line: { color: LAT, width: 0 },
    ...(fill ? { fill: 'tonexty', fillcolor: 'rgba(214,39,40,0.15)' } : {}),
    hovertemplate: `c=%{x}: %{y:.0f} ms<extra>${LATENCY_NAMES[k]}</extra>`,
  });
  return [{ ...line('ttftP50Ms'), line: { color: LAT } }, edge('ttftP95Ms', false), edge('ttftP99Ms', true)];
}

/**
 * Output throughput (left axis) and TTFT (right axis, `yaxis: 'y2'`: p50 line and p95–p99 band by
 * default) against concurrency, with the saturation point annotated. The default title is
 * `scalingTitle` of the points, so it never claims a plateau the data do not show.
 * Traces: throughput, then the latency traces.
 */
export function throughputVsConcurrency(points: ScalingPoint[], opts: ThroughputVsConcurrencyOptions = {}): Figure {
  const ps = [...points].sort((a, b) => a.concurrency - b.concurrency);
  const key = opts.latency ?? 'ttftBand';
  const x = ps.map((p) => p.concurrency);
  const logX = opts.logX ?? (ps.length > 0 && x.every((c) => c > 0));
  const data: Trace[] = [
    {
      type: 'scatter',
      mode: 'lines+markers',
      name: '输出吞吐 output throughput (tok/s)',
      x,
      y: ps.map((p) => p.outputTokensPerSec),
      marker: { color: colorAt(0) },
      line: { color: colorAt(0) },
      hovertemplate: 'c=%{x}: %{y:.0f} tok/s<extra></extra>',
    },
    ...latencyTraces(ps, key),
  ];
  const latName = key === 'ttftBand' ? '首字延迟 TTFT (ms)' : `${LATENCY_NAMES[key]} (ms)`;
  const layout = baseLayout(scalingTitle(ps, { gainBelow: opts.gainBelow }), opts);
  layout.margin = { l: 70, r: 80, t: 90, b: 55 };
  layout.xaxis = {
    title: axisTitle('并发 concurrency (requests in flight)'),
    type: logX ? 'log' : 'linear',
    automargin: true,
    ...(logX ? { tickvals: x, ticktext: x.map(String) } : {}),
  };
  layout.yaxis = {
    title: axisTitle('输出吞吐 output throughput (tok/s)'),
    rangemode: 'tozero',
    color: colorAt(0),
    automargin: true,
  };
  layout.yaxis2 = {
    title: axisTitle(latName),
    overlaying: 'y',
    side: 'right',
    rangemode: 'tozero',
    color: LAT,
    showgrid: false,
    zeroline: false,
    tickmode: 'sync',
    automargin: true,
  };
  if (opts.saturationAt !== undefined) saturationMark(layout, ps, opts.saturationAt, logX);
  return { data, layout };
}

/** A dashed line and a note at concurrency `s`. Shapes take data values on a log axis; annotations take log10 of them. */
function saturationMark(layout: Figure['layout'], ps: ScalingPoint[], s: number, logX: boolean): void {
  const at = ps.find((p) => p.concurrency === s);
  layout.shapes = [
    { type: 'line', xref: 'x', yref: 'paper', x0: s, x1: s, y0: 0, y1: 1, line: { color: 'grey', dash: 'dash', width: 1.5 } },
  ];
  layout.annotations = [
    {
      xref: 'x',
      yref: at ? 'y' : 'paper',
      x: logX ? Math.log10(s) : s,
      y: at ? at.outputTokensPerSec : 0.95,
      text: `饱和 saturation ≈ c=${s}`,
      showarrow: true,
      arrowhead: 2,
      ax: 40,
      ay: -40,
      bgcolor: 'rgba(255,255,255,0.85)',
    },
  ];
}

/** Options of `latencyThroughputTradeoff`. */
export interface TradeoffOptions extends ChartOptions {
  /** Latency on the y axis. Default `'e2eP95Ms'`. */
  latency?: ScalingLatencyKey;
}

/**
 * The trade-off curve: x = output throughput (tok/s), y = tail latency (default P95 E2E, ms),
 * one point per run labelled `c=<concurrency>`, joined in concurrency order. One trace.
 */
export function latencyThroughputTradeoff(points: ScalingPoint[], opts: TradeoffOptions = {}): Figure {
  const ps = [...points].sort((a, b) => a.concurrency - b.concurrency);
  const key = opts.latency ?? 'e2eP95Ms';
  const data: Trace[] = [
    {
      type: 'scatter',
      mode: 'lines+markers+text',
      name: LATENCY_NAMES[key],
      x: ps.map((p) => p.outputTokensPerSec),
      y: ps.map((p) => p[key] ?? NaN),
      text: ps.map((p) => `c=${p.concurrency}`),
      // The leftmost label goes right of its point, and no label is clipped at the plot's edge.
      textposition: ps.map((_, i) => (i === 0 ? 'top right' : 'top left')),
      cliponaxis: false,
      marker: { color: colorAt(0), size: 9 },
      line: { color: colorAt(0) },
      hovertemplate: `%{text}: %{x:.0f} tok/s, %{y:.0f} ms<extra>${LATENCY_NAMES[key]}</extra>`,
    },
  ];
  const layout = baseLayout(`延迟与吞吐的权衡 latency–throughput trade-off（${LATENCY_NAMES[key]}）`, opts);
  layout.xaxis = { title: axisTitle('输出吞吐 output throughput (tok/s)'), rangemode: 'tozero', automargin: true };
  layout.yaxis = { title: axisTitle(`${LATENCY_NAMES[key]} (ms)`), rangemode: 'tozero', automargin: true };
  layout.showlegend = false;
  return { data, layout };
}
