/**
 * Per-request timelines: the Gantt chart of request phases (with token ticks) and every
 * inter-token gap at its arrival time. Time axes are run time in seconds (records are ms).
 */
import type { RequestRecord } from '../types';
import {
  axisTitle,
  baseLayout,
  colorAt,
  msToS,
  PHASE_COLORS,
  finitePercentile,
  tagColors,
  type ChartOptions,
  type Figure,
  type Trace,
} from './figure';

/** Options of `requestBarTraces` (and so of `requestGantt`). */
export interface RequestBarsOptions {
  /**
   * `'phase'` (default): one colour per phase. `'tag'`: decode bars coloured per `record.tag`, each
   * tag in its one fixed colour (`tagColors`), the same in every chart.
   */
  colorBy?: 'phase' | 'tag';
  /** Token ticks at every `chunkMs`. Default: on when the records hold ≤ 20000 chunks. */
  ticks?: boolean;
  /** y axis id for every trace. Default `'y'`. */
  yaxis?: string;
}

interface Segment {
  y: number;
  fromMs: number;
  toMs: number;
  hover: string;
}

function bar(name: string, color: string, segs: Segment[], yaxis: string, legendgroup?: string): Trace {
  return {
    type: 'bar',
    orientation: 'h',
    name,
    legendgroup,
    xaxis: 'x',
    yaxis,
    width: 0.8,
    y: segs.map((s) => s.y),
    base: segs.map((s) => msToS(s.fromMs)),
    x: segs.map((s) => msToS(s.toMs - s.fromMs)),
    marker: { color },
    text: segs.map((s) => s.hover),
    hovertemplate: '%{text}<extra></extra>',
    textposition: 'none',
  };
}

function fmt(ms: number): string {
  return `${ms.toFixed(1)} ms`;
}

/**
 * Bars and markers for a request timeline, y = `record.index`. Phases: queued in the client
 * (intendedStartMs → startMs), waiting for the first token (startMs → firstTokenMs: server queue +
 * prefill; to endMs when no token came), decode (firstTokenMs → last token chunk). Then token ticks
 * (optional) and an ✕ at `endMs` for failed requests (only when there are some). Used by
 * `requestGantt` and `serverTimeline`.
 */
export function requestBarTraces(records: RequestRecord[], opts: RequestBarsOptions = {}): Trace[] {
  const yaxis = opts.yaxis ?? 'y';
  const queued: Segment[] = [];
  const waiting: Segment[] = [];
  const decode = new Map<string, Segment[]>();
  for (const r of records) {
    const who = `#${r.index}${r.tag ? ` [${r.tag}]` : ''}${r.warmup ? ' (warm-up)' : ''}`;
    if (r.startMs > r.intendedStartMs) {
      queued.push({ y: r.index, fromMs: r.intendedStartMs, toMs: r.startMs, hover: `${who} queued in client ${fmt(r.queueMs)}` });
    }
    const waitEnd = r.firstTokenMs ?? r.endMs;
    waiting.push({
      y: r.index,
      fromMs: r.startMs,
      toMs: waitEnd,
      hover: `${who} waiting for first token ${fmt(waitEnd - r.startMs)}`,
    });
    if (r.firstTokenMs !== undefined) {
      const last = r.chunkMs.length ? r.chunkMs[r.chunkMs.length - 1] : r.firstTokenMs;
      const key = opts.colorBy === 'tag' ? (r.tag ?? '(no tag)') : 'decode';
      const hover = `${who} decode ${fmt(last - r.firstTokenMs)}, ${r.outputTokens ?? r.chunkMs.length} tokens`;
      if (!decode.has(key)) decode.set(key, []);
      decode.get(key)!.push({ y: r.index, fromMs: r.firstTokenMs, toMs: last, hover });
    }
  }
  const traces: Trace[] = [
    bar('客户端排队 queued (client)', PHASE_COLORS.queued, queued, yaxis),
    bar('等首个 token（排队 + 预填充 prefill）', PHASE_COLORS.waiting, waiting, yaxis),
  ];
  const colors = tagColors(decode.keys());
  for (const [key, segs] of [...decode].sort(([a], [b]) => a.localeCompare(b))) {
    const name = opts.colorBy === 'tag' ? `解码 decode · ${key}` : '解码 decode';
    traces.push(bar(name, opts.colorBy === 'tag' ? colors.get(key)! : PHASE_COLORS.decode, segs, yaxis));
  }
  const chunks = records.reduce((n, r) => n + r.chunkMs.length, 0);
  if (opts.ticks ?? chunks <= 20000) {
    traces.push({
      type: 'scatter',
      mode: 'markers',
      name: 'token 块 chunks',
      xaxis: 'x',
      yaxis,
      x: records.flatMap((r) => r.chunkMs.map(msToS)),
      y: records.flatMap((r) => r.chunkMs.map(() => r.index)),
      marker: { symbol: 'line-ns-open', size: 7, color: PHASE_COLORS.tokens, line: { width: 1 } },
      hoverinfo: 'skip',
    });
  }
  const failed = records.filter((r) => !r.ok);
  if (failed.length) {
    traces.push({
      type: 'scatter',
      mode: 'markers',
      name: '失败 failed',
      xaxis: 'x',
      yaxis,
      x: failed.map((r) => msToS(r.endMs)),
      y: failed.map((r) => r.index),
      text: failed.map((r) => `#${r.index} failed: ${r.error?.code ?? 'error'} ${r.error?.message ?? ''}`),
      marker: { symbol: 'x', size: 10, color: PHASE_COLORS.failed },
      hovertemplate: '%{text}<extra></extra>',
    });
  }
  return traces;
}

/** Options of `requestGantt`. */
export interface GanttOptions extends ChartOptions, Omit<RequestBarsOptions, 'yaxis'> {
  /** x range in run seconds, e.g. `timeRangeS(runA.records, runB.records)` to pair two charts. Default: fit the data. */
  xRange?: [number, number];
}

/**
 * The run-time range (s) that holds every request of every set given, `[0, latest end]`: pass it
 * as `xRange` to charts shown side by side, so equal lengths look equal.
 */
export function timeRangeS(...recordSets: readonly RequestRecord[][]): [number, number] {
  const ends = recordSets.flat().map((r) => Math.max(r.endMs, r.chunkMs[r.chunkMs.length - 1] ?? 0));
  const hi = ends.length ? Math.max(...ends) : 0;
  return [0, msToS(hi) * 1.02];
}

/** One horizontal bar per request, split into its phases (see `requestBarTraces`); x = run time (s). */
export function requestGantt(records: RequestRecord[], opts: GanttOptions = {}): Figure {
  const layout = baseLayout('请求时间线 request timeline', opts, Math.min(1400, 220 + 16 * records.length));
  layout.barmode = 'overlay';
  layout.xaxis = {
    title: axisTitle('运行时间 run time (s)'),
    ...(opts.xRange ? { range: [...opts.xRange], autorange: false } : { rangemode: 'tozero' }),
  };
  layout.yaxis = { title: axisTitle('请求 request #'), autorange: 'reversed', zeroline: false };
  return { data: requestBarTraces(records, opts), layout };
}

/** Options of `itlTimeSeries`. */
export interface ItlOptions extends ChartOptions {
  /** Only records with this tag. */
  tag?: string;
}

/**
 * Every inter-token gap at the time it ended: x = arrival of the chunk (run time, s), y = gap (ms),
 * one marker trace per tag, and a dashed line at the median gap. Stalls (a long prefill
 * or a preemption in the same batch) stand out as points far above the line.
 */
export function itlTimeSeries(records: RequestRecord[], opts: ItlOptions = {}): Figure {
  const rs = opts.tag === undefined ? records : records.filter((r) => r.tag === opts.tag);
  const byTag = new Map<string, RequestRecord[]>();
  for (const r of rs) {
    const key = r.tag ?? '(no tag)';
    if (!byTag.has(key)) byTag.set(key, []);
    byTag.get(key)!.push(r);
  }
  const data: Trace[] = [];
  const colors = tagColors(byTag.keys());
  for (const [tag, group] of byTag) {
    const x: number[] = [];
    const y: number[] = [];
    const text: string[] = [];
    for (const r of group) {
      const n = Math.min(r.itlMs.length, r.chunkMs.length - 1);
      for (let k = 0; k < n; k++) {
        x.push(msToS(r.chunkMs[k + 1]));
        y.push(r.itlMs[k]);
        text.push(`#${r.index} token chunk ${k + 2}`);
      }
    }
    data.push({
      type: 'scatter',
      mode: 'markers',
      name: byTag.size > 1 || tag !== '(no tag)' ? tag : 'ITL gap',
      x,
      y,
      text,
      marker: { size: 4, opacity: 0.6, color: byTag.size === 1 && tag === '(no tag)' ? colorAt(0) : colors.get(tag) },
      hovertemplate: '%{text}: %{y:.1f} ms at %{x:.3f} s<extra></extra>',
    });
  }
  const median = finitePercentile(
    rs.flatMap((r) => r.itlMs),
    50,
  );
  const base = 'token 间隔随时间 inter-token gaps over time';
  const layout = baseLayout(opts.tag === undefined ? base : `${base} [${opts.tag}]`, opts);
  layout.xaxis = { title: axisTitle('运行时间 run time (s)'), rangemode: 'tozero' };
  layout.yaxis = { title: axisTitle('token 间隔 inter-token gap (ms)'), rangemode: 'tozero', automargin: true };
  if (Number.isFinite(median)) {
    layout.shapes = [
      {
        type: 'line',
        xref: 'paper',
        x0: 0,
        x1: 1,
        yref: 'y',
        y0: median,
        y1: median,
        line: { color: 'grey', dash: 'dash', width: 1 },
      },
    ];
    layout.annotations = [
      {
        xref: 'paper',
        x: 1,
        xanchor: 'right',
        yref: 'y',
        y: median,
        yanchor: 'bottom',
        text: `中位数 median ${median.toFixed(1)} ms`,
        showarrow: false,
      },
    ];
  }
  return { data, layout };
}
