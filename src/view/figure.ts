/**
 * The figure shape every chart builder returns: a plain Plotly `{ data, layout }` object.
 * Typed with small local interfaces (no `@types/plotly`), open-ended so any Plotly attribute
 * can be set. Also the few helpers the builders share: titles, colours, percentiles (owned by
 * `stats/percentile`; never a second method here).
 */
import { percentileOfSorted } from '../stats/percentile';

import { provenanceSuffix, type Provenance } from './provenance';

/** One Plotly trace (`scatter`, `bar`, ...). Any other Plotly trace attribute is allowed. */
export interface Trace {
  type: string;
  name?: string;
  x?: unknown[];
  y?: unknown[];
  /** `'x'` (default) or `'x2'`, ... */
  xaxis?: string;
  /** `'y'` (default) or `'y2'`, ... */
  yaxis?: string;
  [attr: string]: unknown;
}

/** A Plotly axis (`layout.xaxis`, `layout.yaxis2`, ...). */
export interface Axis {
  title?: { text: string };
  type?: 'linear' | 'log' | 'category' | 'date';
  /** Vertical (y) or horizontal (x) share of the plot area, `[from, to]` in 0..1. */
  domain?: [number, number];
  [attr: string]: unknown;
}

/** A Plotly layout. `xaxis2`, `yaxis3`, ... go through the index signature. */
export interface Layout {
  title?: { text: string };
  xaxis?: Axis;
  yaxis?: Axis;
  annotations?: Record<string, unknown>[];
  shapes?: Record<string, unknown>[];
  [attr: string]: unknown;
}

/** What every builder returns and `show` renders. */
export interface Figure {
  data: Trace[];
  layout: Layout;
  /** Plotly config (`responsive`, `displaylogo`, ...); `show` supplies sensible defaults. */
  config?: Record<string, unknown>;
}

/** Options every chart builder accepts. */
export interface ChartOptions {
  /** Chart title; each builder has a default. */
  title?: string;
  /**
   * Label the chart "(simulated)": numbers from the simulator are always labelled so. Best given
   * as the run(s) shown, so each is labelled from its own manifest (mixed runs say so); a boolean
   * is taken as is. Default false.
   */
  simulated?: Provenance;
  /** Figure height in px; each builder has a default. */
  height?: number;
}

/** `title`, plus " (simulated)" when `simulated` is true or its runs' manifests say so (see `provenanceSuffix`). */
export function chartTitle(title: string, simulated?: Provenance): { text: string } {
  return { text: `${title}${provenanceSuffix(simulated)}` };
}

/** An axis title object, e.g. `axisTitle('TTFT (ms)')`. */
export function axisTitle(text: string): { text: string } {
  return { text };
}

export { PALETTE, colorAt, PHASE_COLORS, TAG_PALETTE, tagColors } from './palette';

/** Finite numbers of `values`, sorted ascending (a copy). */
export function sortedFinite(values: readonly number[]): number[] {
  return values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
}

/**
 * Percentile `p` (0..100) of the finite numbers of `values`, by `stats/percentile`'s numpy-exact
 * method, so a chart's p99 is bit-for-bit the p99 of the table beside it. NaN when none is finite.
 */
export function finitePercentile(values: readonly number[], p: number): number {
  return percentileOfSorted(sortedFinite(values), p);
}

/** A quantile `q` (0..1, e.g. 0.99) as the percentile (0..100) it names: `+(q·100).toFixed(10)`, so 0.07 → 7, not 7.000000000000001. */
export function quantileToPercent(q: number): number {
  return +(Math.min(1, Math.max(0, q)) * 100).toFixed(10);
}

/** Milliseconds on the run clock → seconds, the unit of every time axis. */
export function msToS(ms: number): number {
  return ms / 1000;
}

/** Base layout shared by the builders: title, height, compact margins, legend between title and plot. */
export function baseLayout(title: string, opts: ChartOptions, defaultHeight = 420): Layout {
  return {
    title: chartTitle(opts.title ?? title, opts.simulated),
    height: opts.height ?? defaultHeight,
    margin: { l: 70, r: 30, t: 90, b: 55 },
    legend: { orientation: 'h', x: 0, y: 1.02, yanchor: 'bottom' },
    hovermode: 'closest',
  };
}
