/**
 * Scaling charts for a concurrency sweep: throughput and tail latency against concurrency
 * ("latency gets worse while throughput gets better"), the saturation point, and the
 * latency–throughput trade-off curve.
 */
import type { RunSummary } from '../types';
import { axisTitle, baseLayout, colorAt, type ChartOptions, type Figure, type Trace } from './figure';

/** One run of a sweep, reduced to the numbers the scaling charts plot. */
export interface ScalingPoint {
  concurrency: number;
  outputTokensPerSec: number;
  ttftP99Ms: number;
  requestsPerSec?: number;
  ttftP50Ms?: number;
  e2eP50Ms?: number;
  e2eP95Ms?: number;
  e2eP99Ms?: number;
  tpotP50Ms?: number;
}

/** A latency field of `ScalingPoint`. */
export type ScalingLatencyKey = 'ttftP99Ms' | 'ttftP50Ms' | 'e2eP50Ms' | 'e2eP95Ms' | 'e2eP99Ms' | 'tpotP50Ms';

const LATENCY_NAMES: Record<ScalingLatencyKey, string> = {
  ttftP99Ms: 'P99 TTFT',
  ttftP50Ms: 'P50 TTFT',
  e2eP50Ms: 'P50 E2E latency',
  e2eP95Ms: 'P95 E2E latency',
  e2eP99Ms: 'P99 E2E latency',
  tpotP50Ms: 'P50 TPOT',
};

/** `ScalingPoint`s from run summaries of a sweep, sorted by concurrency. */
export function scalingPoints(items: { concurrency: number; summary: RunSummary }[]): ScalingPoint[] {
  return items
    .map(({ concurrency, summary: s }) => ({
      concurrency,
      outputTokensPerSec: s.outputTokensPerSec,
      requestsPerSec: s.requestsPerSec,
      ttftP50Ms: s.ttftMs.p50,
      ttftP99Ms: s.ttftMs.p99,
      e2eP50Ms: s.e2eMs.p50,
      e2eP95Ms: s.e2eMs.p95,
      e2eP99Ms: s.e2eMs.p99,
      tpotP50Ms: s.tpotMs.p50,
    }))
    .sort((a, b) => a.concurrency - b.concurrency);
}

/**
 * The saturation point of a sweep: the first concurrency after which the next doubling adds less
 * than `gainBelow` (default 0.1 = 10%) output throughput. Gains between points that are not
 * exactly a doubling apart are normalised per doubling: (T₂/T₁)^(1/log₂(c₂/c₁)) − 1.
 * Undefined when throughput keeps growing (or with fewer than two points).
 */
export function findSaturation(
  points: { concurrency: number; outputTokensPerSec: number }[],
  opts: { gainBelow?: number } = {},
): number | undefined {
  const gainBelow = opts.gainBelow ?? 0.1;
  if (!Number.isFinite(gainBelow) || gainBelow < 0) {
    throw new Error(`gainBelow must be a fraction ≥ 0 (0.1 = 10%), got ${gainBelow}`);
  }
  const ps = [...points].sort((a, b) => a.concurrency - b.concurrency);
  for (let i = 0; i + 1 < ps.length; i++) {
    const a = ps[i];
    const b = ps[i + 1];
    const doublings = Math.log2(b.concurrency / a.concurrency);
    if (!(doublings > 0) || !(a.outputTokensPerSec > 0)) continue;
    const gain = (b.outputTokensPerSec / a.outputTokensPerSec) ** (1 / doublings) - 1;
    if (gain < gainBelow) return a.concurrency;
  }
  return undefined;
}

/** Options of `throughputVsConcurrency`. */
export interface ThroughputVsConcurrencyOptions extends ChartOptions {
  /** Concurrency to mark as the saturation point (e.g. from `findSaturation`); none when undefined. */
  saturationAt?: number;
  /** Latency drawn on the right axis. Default `'ttftP99Ms'`. */
  latency?: ScalingLatencyKey;
  /** Log₂-spaced concurrency axis. Default true when every concurrency is > 0. */
  logX?: boolean;
}

/**
 * Output throughput (left axis) and tail latency (right axis, `yaxis: 'y2'`) against concurrency,
 * with the saturation point annotated. Traces: throughput, latency.
 */
export function throughputVsConcurrency(points: ScalingPoint[], opts: ThroughputVsConcurrencyOptions = {}): Figure {
  const ps = [...points].sort((a, b) => a.concurrency - b.concurrency);
  const key = opts.latency ?? 'ttftP99Ms';
  const x = ps.map((p) => p.concurrency);
  const logX = opts.logX ?? (ps.length > 0 && x.every((c) => c > 0));
  const data: Trace[] = [
    {
      type: 'scatter',
      mode: 'lines+markers',
      name: 'output throughput (tok/s)',
      x,
      y: ps.map((p) => p.outputTokensPerSec),
      marker: { color: colorAt(0) },
      line: { color: colorAt(0) },
      hovertemplate: 'concurrency %{x}: %{y:.0f} tok/s<extra></extra>',
    },
    {
      type: 'scatter',
      mode: 'lines+markers',
      name: `${LATENCY_NAMES[key]} (ms)`,
      x,
      yaxis: 'y2',
      y: ps.map((p) => p[key] ?? NaN),
      marker: { color: colorAt(3), symbol: 'square' },
      line: { color: colorAt(3), dash: 'dot' },
      hovertemplate: `concurrency %{x}: %{y:.0f} ms<extra>${LATENCY_NAMES[key]}</extra>`,
    },
  ];
  const layout = baseLayout(`Throughput rises, then ${LATENCY_NAMES[key]} takes off`, opts);
  layout.margin = { l: 70, r: 80, t: 90, b: 55 };
  layout.xaxis = {
    title: axisTitle('concurrency (requests in flight)'),
    type: logX ? 'log' : 'linear',
    ...(logX ? { tickvals: x, ticktext: x.map(String) } : {}),
  };
  layout.yaxis = { title: axisTitle('output throughput (tok/s)'), rangemode: 'tozero', color: colorAt(0) };
  layout.yaxis2 = {
    title: axisTitle(`${LATENCY_NAMES[key]} (ms)`),
    overlaying: 'y',
    side: 'right',
    rangemode: 'tozero',
    color: colorAt(3),
    showgrid: false,
    zeroline: false,
    tickmode: 'sync',
  };
  if (opts.saturationAt !== undefined) {
    const s = opts.saturationAt;
    const at = ps.find((p) => p.concurrency === s);
    // Shapes take data values on a log axis; annotations take log10 of them.
    layout.shapes = [
      {
        type: 'line',
        xref: 'x',
        yref: 'paper',
        x0: s,
        x1: s,
        y0: 0,
        y1: 1,
        line: { color: 'grey', dash: 'dash', width: 1.5 },
      },
    ];
    layout.annotations = [
      {
        xref: 'x',
        yref: at ? 'y' : 'paper',
        x: logX ? Math.log10(s) : s,
        y: at ? at.outputTokensPerSec : 0.95,
        text: `saturation ≈ concurrency ${s}`,
        showarrow: true,
        arrowhead: 2,
        ax: 40,
        ay: -40,
        bgcolor: 'rgba(255,255,255,0.85)',
      },
    ];
  }
  return { data, layout };
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
      textposition: 'top left',
      marker: { color: colorAt(0), size: 9 },
      line: { color: colorAt(0) },
      hovertemplate: `%{text}: %{x:.0f} tok/s, %{y:.0f} ms<extra>${LATENCY_NAMES[key]}</extra>`,
    },
  ];
  const layout = baseLayout(`Latency–throughput trade-off (${LATENCY_NAMES[key]})`, opts);
  layout.xaxis = { title: axisTitle('output throughput (tok/s)'), rangemode: 'tozero' };
  layout.yaxis = { title: axisTitle(`${LATENCY_NAMES[key]} (ms)`), rangemode: 'tozero' };
  layout.showlegend = false;
  return { data, layout };
}
