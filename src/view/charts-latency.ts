/**
 * Latency distribution charts: empirical CDFs, percentile bars per run, and A/B comparisons
 * with bootstrap intervals. Pure builders: data in, Plotly `Figure` out.
 */
import type { RunSummary } from '../types';
import { percentileOfSorted } from '../stats/percentile';
import {
  axisTitle,
  baseLayout,
  colorAt,
  finitePercentile,
  quantileToPercent,
  sortedFinite,
  type ChartOptions,
  type Figure,
  type Trace,
} from './figure';

/** One line of `latencyCdf`. */
export interface CdfSeries {
  label: string;
  /** Latencies in `unit`; non-finite values are dropped. */
  values: number[];
}

/** Options of `latencyCdf`. */
export interface CdfOptions extends ChartOptions {
  /** Unit label for the x axis. Default `'ms'`. */
  unit?: string;
  /** Quantiles (0..1) marked on every line. Default `[0.5, 0.95, 0.99]`. */
  markers?: number[];
  /** Log-scale x axis (long tails). Default false. */
  logX?: boolean;
  /** x axis title, before the unit. Default `'延迟 latency'`. */
  xTitle?: string;
}

function pLabel(q: number): string {
  return `p${+(q * 100).toFixed(2)}`;
}

/**
 * Empirical CDF per series: a step line through (sorted value, i/n), plus markers at p50/p95/p99
 * (`markers`). Two traces per series: the line, then its markers (same legend group).
 */
export function latencyCdf(series: CdfSeries[], opts: CdfOptions = {}): Figure {
  const unit = opts.unit ?? 'ms';
  const qs = opts.markers ?? [0.5, 0.95, 0.99];
  const data: Trace[] = [];
  series.forEach((s, i) => {
    const xs = sortedFinite(s.values);
    const n = xs.length;
    const color = colorAt(i);
    data.push({
      type: 'scatter',
      mode: 'lines',
      name: `${s.label} (n=${n})`,
      legendgroup: s.label,
      x: xs,
      y: xs.map((_, k) => (k + 1) / n),
      line: { shape: 'hv', color },
      hovertemplate: `%{x:.1f} ${unit}: %{y:.1%} of requests at or below<extra>${s.label}</extra>`,
    });
    const qx = n ? qs.map((q) => percentileOfSorted(xs, quantileToPercent(q))) : [];
    data.push({
      type: 'scatter',
      mode: 'markers+text',
      name: `${s.label} percentiles`,
      legendgroup: s.label,
      showlegend: false,
      x: qx,
      y: n ? qs : [],
      text: n ? qs.map(pLabel) : [],
      textposition: 'middle left',
      marker: { color, size: 8, symbol: 'diamond' },
      hovertemplate: `%{text} = %{x:.1f} ${unit}<extra>${s.label}</extra>`,
    });
  });
  const layout = baseLayout('延迟累积分布 latency CDF', opts);
  layout.xaxis = {
    title: axisTitle(`${opts.xTitle ?? '延迟 latency'} (${unit})`),
    type: opts.logX ? 'log' : 'linear',
    automargin: true,
  };
  layout.yaxis = { title: axisTitle('请求占比 fraction of requests'), range: [0, 1.02], tickformat: '.0%', automargin: true };
  return { data, layout };
}

/** A latency metric of `RunSummary`. */
export type LatencyMetric = 'ttftMs' | 'e2eMs' | 'tpotMs' | 'itlMs';

const METRIC_NAMES: Record<LatencyMetric, string> = {
  ttftMs: '首字延迟 TTFT',
  e2eMs: '端到端延迟 E2E',
  tpotMs: '每输出 token 时间 TPOT',
  itlMs: 'token 间隔 ITL',
};

/** Options of `percentileBars`. */
export interface PercentileBarsOptions extends ChartOptions {
  /** Percentiles, one bar each per item. Default `['p50', 'p95', 'p99']`. */
  percentiles?: ('p50' | 'p90' | 'p95' | 'p99' | 'max' | 'mean')[];
  /** x axis title. Default `'并发 concurrency'`. */
  xTitle?: string;
}

/**
 * Grouped bars: for each item (x, e.g. a concurrency) one bar per percentile of `metric` (ms).
 * One trace per percentile; values are read straight from the summaries.
 */
export function percentileBars(
  items: { label: string | number; summary: RunSummary }[],
  metric: LatencyMetric,
  opts: PercentileBarsOptions = {},
): Figure {
  const ps = opts.percentiles ?? ['p50', 'p95', 'p99'];
  const x = items.map((it) => String(it.label));
  const data: Trace[] = ps.map((p, i) => ({
    type: 'bar',
    name: p,
    x,
    y: items.map((it) => it.summary[metric][p]),
    marker: { color: colorAt(i) },
    hovertemplate: `${p} = %{y:.1f} ms<extra>%{x}</extra>`,
  }));
  const layout = baseLayout(`${METRIC_NAMES[metric]} 分位数 percentiles`, opts);
  layout.barmode = 'group';
  layout.xaxis = { title: axisTitle(opts.xTitle ?? '并发 concurrency'), type: 'category', automargin: true };
  layout.yaxis = { title: axisTitle(`${METRIC_NAMES[metric]} (ms)`), rangemode: 'tozero' };
  return { data, layout };
}

/** One variant of `abComparison`. */
export interface AbItem {
  label: string;
  /** Raw per-request values (ms) of the metric. */
  values: number[];
  /** The point to plot; default the `percentile` of `values` (linear interpolation). */
  value?: number;
  /** Confidence interval of the point, e.g. from src/stats bootstrap; drawn as error bars. */
  ci?: { lo: number; hi: number };
}

/** Options of `abComparison`. */
export interface AbOptions extends ChartOptions {
  /** Metric name for titles, e.g. `'TTFT'`. */
  metric: string;
  /** Percentile 0..100 (e.g. 95) or `'p95'`. */
  percentile: number | string;
  /** Default `'ms'`. */
  unit?: string;
  /** `'point'` (default) or `'bar'`. */
  style?: 'point' | 'bar';
  /** Also draw the raw values as a faint strip beside each point. Default false. */
  showValues?: boolean;
  /** x axis title. Default `'设置 setting'`; e.g. `'并发 concurrency'`. */
  xTitle?: string;
}

/** `95`, `'95'` or `'p95'` → 0.95. */
export function percentileToQ(p: number | string): number {
  return parsePercentile(p) / 100;
}

/** `95`, `'95'` or `'p95'` → 95; throws outside 0..100. */
function parsePercentile(p: number | string): number {
  const n = typeof p === 'number' ? p : Number(String(p).replace(/^p/i, ''));
  if (!Number.isFinite(n) || n < 0 || n > 100) {
    throw new Error(`percentile must be 0..100 or 'p50'-style, got ${JSON.stringify(p)}`);
  }
  return n;
}

/**
 * One point (or bar) per variant at the chosen percentile of its values, with asymmetric error
 * bars from `ci` (none when absent). Trace 0 is the points; with `showValues`, one strip per variant follows.
 * Variant `i` is drawn in `colorAt(i)`, the colour `latencyCdf` gives series `i`, so a CDF and its
 * bootstrap chart built from the same list match.
 */
export function abComparison(items: AbItem[], opts: AbOptions): Figure {
  const p = parsePercentile(opts.percentile);
  const unit = opts.unit ?? 'ms';
  const pName = `p${+p.toFixed(2)}`;
  const ys = items.map((it) => it.value ?? finitePercentile(it.values, p));
  const x = items.map((it) => it.label);
  const data: Trace[] = [
    {
      type: opts.style === 'bar' ? 'bar' : 'scatter',
      ...(opts.style === 'bar'
        ? { marker: { color: items.map((_, i) => colorAt(i)) } }
        : { mode: 'markers', marker: { size: 12, color: items.map((_, i) => colorAt(i)) } }),
      name: `${opts.metric} ${pName}`,
      x,
      y: ys,
      error_y: {
        type: 'data',
        symmetric: false,
        visible: items.some((it) => it.ci),
        array: items.map((it, i) => (it.ci ? it.ci.hi - ys[i] : 0)),
        arrayminus: items.map((it, i) => (it.ci ? ys[i] - it.ci.lo : 0)),
      },
      customdata: items.map((it) => [it.ci?.lo ?? NaN, it.ci?.hi ?? NaN, it.values.length]),
      hovertemplate: `${pName} = %{y:.1f} ${unit}<br>CI [%{customdata[0]:.1f}, %{customdata[1]:.1f}]<br>n = %{customdata[2]}<extra>%{x}</extra>`,
    },
  ];
  if (opts.showValues) {
    items.forEach((it, i) =>
      data.push({
        type: 'box',
        name: it.label,
        x: it.values.map(() => it.label),
        y: it.values,
        boxpoints: 'all',
        jitter: 0.4,
        pointpos: -1.6,
        fillcolor: 'rgba(0,0,0,0)',
        line: { width: 0 },
        marker: { size: 3, opacity: 0.35, color: colorAt(i) },
        showlegend: false,
        hoverinfo: 'y',
      }),
    );
  }
  const layout = baseLayout(`${opts.metric} ${pName}（误差线：置信区间 confidence interval）`, opts);
  layout.xaxis = { title: axisTitle(opts.xTitle ?? '设置 setting'), type: 'category', automargin: true };
  layout.yaxis = { title: axisTitle(`${opts.metric} ${pName} (${unit})`), rangemode: 'tozero' };
  layout.showlegend = false;
  return { data, layout };
}
