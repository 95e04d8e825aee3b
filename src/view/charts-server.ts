/**
 * The server timeline: what the client saw (request bars, token ticks, ITL stalls) above what
 * the server reported (`/metrics` scrapes, optional GPU samples) below, on ONE shared time axis.
 * Panels are y axes with stacked `domain`s, all on `xaxis: 'x'`. Cumulative counters become
 * per-scrape increments (preemptions) or rates (tokens/s, prefix-cache hit rate), by the rules of
 * `server/counters.ts` (a counter that goes down is a reset), the same the tables use.
 */
import type { GpuSample, MetricsSample, RequestRecord } from '../types';
import {
  axisTitle, baseLayout, colorAt, msToS, PHASE_COLORS, finitePercentile,
  type Axis, type ChartOptions, type Figure, type Trace,
} from './figure';
import { requestBarTraces, type RequestBarsOptions } from './charts-timeline';
import { counterDeltas, prefixHitRates, type CounterField } from '../stats/counters';

/** A series `serverTimeline` can draw below the requests. */
export type ServerSeries =
  | 'running' | 'waiting' | 'kvUsage' | 'preemptions' | 'promptTokensPerSec' | 'generationTokensPerSec'
  | 'prefixHitRate' | 'simLatenessMs' | 'gpuUtil' | 'gpuMem';

type Panel = 'count' | 'percent' | 'rate' | 'ms';

const PANEL_OF: Record<ServerSeries, Panel> = {
  running: 'count', waiting: 'count', preemptions: 'count', kvUsage: 'percent', prefixHitRate: 'percent',
  gpuUtil: 'percent', gpuMem: 'percent', promptTokensPerSec: 'rate', generationTokensPerSec: 'rate', simLatenessMs: 'ms',
};
const PANEL_TITLE: Record<Panel, string> = { count: 'requests', percent: '%', rate: 'tokens/s', ms: 'ms' };
const SERIES_NAME: Record<ServerSeries, string> = {
  running: 'running (requests)', waiting: 'waiting (requests)', kvUsage: 'KV cache usage (%)',
  preemptions: 'preemptions (+n per scrape)', promptTokensPerSec: 'prompt tokens/s',
  generationTokensPerSec: 'generation tokens/s', prefixHitRate: 'prefix-cache hit rate (%)',
  simLatenessMs: 'simulator step lateness p99 (ms)', gpuUtil: 'GPU util (%)', gpuMem: 'GPU memory (%)',
};

/** Options of `serverTimeline`. */
export interface ServerTimelineOptions extends ChartOptions, Omit<RequestBarsOptions, 'yaxis'> {
  gpu?: GpuSample[];
  /** Default: running, waiting, kvUsage, preemptions, plus gpuUtil when `gpu` has samples. */
  series?: ServerSeries[];
  /** An inter-token gap counts as a stall above `stallFactor` × the median gap. Default 5. */
  stallFactor?: number;
}

/**
 * Per-scrape increments of a cumulative counter, at the end of each scrape interval: a view of
 * `counterDeltas` (server/counters.ts, the one owner of the counter rules), so a counter that went
 * down counts as a reset (`inc` = the new value, PromQL's `increase()`) and a chart agrees with
 * `counterIncrease` in the table beside it.
 */
export function counterIncrements(samples: MetricsSample[], field: CounterField): { tMs: number; inc: number; dtMs: number }[] {
  return counterDeltas(samples, field).map((d) => ({ tMs: d.endMs, inc: d.delta, dtMs: d.endMs - d.startMs }));
}

function line(name: string, yaxis: string, x: number[], y: number[], color: string, extra: Record<string, unknown> = {}): Trace {
  return { type: 'scatter', mode: 'lines', name, xaxis: 'x', yaxis, x, y, line: { color, width: 1.5 }, ...extra };
}

/** Traces of one server series on axis `yaxis`. */
function seriesTraces(s: ServerSeries, metrics: MetricsSample[], gpu: GpuSample[], yaxis: string, color: string): Trace[] {
  const name = SERIES_NAME[s];
  const gauge = (f: 'running' | 'waiting' | 'kvUsage' | 'simLatenessMs', scale = 1) => {
    const ms = metrics.filter((m) => m[f] !== undefined);
    return [line(name, yaxis, ms.map((m) => msToS(m.tMs)), ms.map((m) => m[f]! * scale), color, { line: { color, width: 1.5, shape: 'hv' } })];
  };
  const rate = (f: 'promptTokensTotal' | 'generationTokensTotal') => {
    const inc = counterIncrements(metrics, f);
    return [line(name, yaxis, inc.map((d) => msToS(d.tMs)), inc.map((d) => (d.dtMs > 0 ? d.inc / (d.dtMs / 1000) : NaN)), color)];
  };
  switch (s) {
    case 'running': case 'waiting': case 'simLatenessMs': return gauge(s);
    case 'kvUsage': return gauge('kvUsage', 100);
    case 'promptTokensPerSec': return rate('promptTokensTotal');
    case 'generationTokensPerSec': return rate('generationTokensTotal');
    case 'preemptions': {
      const inc = counterIncrements(metrics, 'preemptionsTotal').filter((d) => d.inc > 0);
      return [{
        type: 'scatter', mode: 'markers', name, xaxis: 'x', yaxis,
        x: inc.map((d) => msToS(d.tMs)), y: inc.map((d) => d.inc),
        marker: { symbol: 'star', size: 10, color: PHASE_COLORS.preemption },
      }];
    }
    case 'prefixHitRate': {
      const rates = prefixHitRates(metrics);
      return [line(name, yaxis, rates.map((d) => msToS(d.endMs)), rates.map((d) => 100 * d.hitRate), color)];
    }
    case 'gpuUtil': case 'gpuMem': {
      const ids = [...new Set(gpu.map((g) => g.gpu))];
      return ids.map((id, k) => {
        const gs = gpu.filter((g) => g.gpu === id);
        const y = gs.map((g) => (s === 'gpuUtil' ? (g.utilPct ?? NaN) : g.memTotalMiB ? (100 * (g.memUsedMiB ?? NaN)) / g.memTotalMiB : NaN));
        return line(`GPU ${id} ${s === 'gpuUtil' ? 'util' : 'memory'} (%)`, yaxis, gs.map((g) => msToS(g.tMs)), y, colorAt(7 + k));
      });
    }
  }
}

/**
 * Request bars and token ticks (top panel, `yaxis: 'y'`) above server series (one panel per unit:
 * requests, %, tokens/s, ms, on `y2`, `y3`, …), all sharing `xaxis: 'x'` = run time (s).
 * Preemption increments are drawn as vertical lines through every panel; ITL stalls
 * (gap > `stallFactor` × median gap) as red triangles on the request's row.
 */
export function serverTimeline(records: RequestRecord[], metrics: MetricsSample[], opts: ServerTimelineOptions = {}): Figure {
  const gpu = opts.gpu ?? [];
  const series = opts.series ?? ['running', 'waiting', 'kvUsage', 'preemptions', ...(gpu.length ? ['gpuUtil' as const] : [])];
  const panels = (['count', 'percent', 'rate', 'ms'] as Panel[]).filter((p) => series.some((s) => PANEL_OF[s] === p));
  const axisOf = new Map(panels.map((p, i) => [p, `y${i + 2}`]));

  const data = requestBarTraces(records, { colorBy: opts.colorBy, ticks: opts.ticks, yaxis: 'y' });
  const factor = opts.stallFactor ?? 5;
  const median = finitePercentile(records.flatMap((r) => r.itlMs), 50);
  const stalls = records.flatMap((r) =>
    r.itlMs.flatMap((gap, k) => (gap > factor * median && k + 1 < r.chunkMs.length ? [{ r, gap, tMs: r.chunkMs[k + 1] }] : [])));
  data.push({
    type: 'scatter', mode: 'markers', name: Number.isFinite(median) ? `ITL stall (> ${factor}× median ${median.toFixed(1)} ms)` : 'ITL stall', xaxis: 'x', yaxis: 'y',
    x: stalls.map((s) => msToS(s.tMs)), y: stalls.map((s) => s.r.index),
    text: stalls.map((s) => `#${s.r.index}: gap ${s.gap.toFixed(1)} ms (${(s.gap / median).toFixed(1)}× median)`),
    marker: { symbol: 'triangle-down', size: 9, color: PHASE_COLORS.stall }, hovertemplate: '%{text}<extra></extra>',
  });
  series.forEach((s, i) => data.push(...seriesTraces(s, metrics, gpu, axisOf.get(PANEL_OF[s])!, colorAt(i + 1))));

  // Stack the panels top to bottom: requests get weight 2, each server panel 1.
  const gap = 0.05;
  const weights = [2, ...panels.map(() => 1)];
  const unit = (1 - gap * (weights.length - 1)) / weights.reduce((a, b) => a + b, 0);
  let top = 1;
  const domains = weights.map((w) => {
    const d: [number, number] = [Math.max(0, top - w * unit), top];
    top = d[0] - gap;
    return d;
  });
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
    ? counterIncrements(metrics, 'preemptionsTotal').filter((d) => d.inc > 0).map((d) => ({
        type: 'line', xref: 'x', yref: 'paper', x0: msToS(d.tMs), x1: msToS(d.tMs), y0: 0, y1: 1,
        line: { color: PHASE_COLORS.preemption, width: 1, dash: 'dot' }, layer: 'above',
      }))
    : [];
  return { data, layout };
}
