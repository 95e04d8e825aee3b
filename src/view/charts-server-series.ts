/**
 * The traces of one server series in `serverTimeline` (charts-server.ts): gauges as step lines,
 * cumulative counters as per-scrape rates (tokens/s) or increments (preemption markers), the
 * prefix-cache hit rate, and one line per GPU from nvidia-smi samples. Counter rules are those of
 * `stats/counters.ts` (a counter that goes down is a reset), the same the tables use.
 */
import type { GpuSample, MetricsSample } from '../types';
import { colorAt, msToS, PHASE_COLORS, type Trace } from './figure';
import { counterDeltas, prefixHitRates, type CounterField } from '../stats/counters';

/** A series `serverTimeline` can draw below the requests. */
export type ServerSeries =
  | 'running'
  | 'waiting'
  | 'swapped'
  | 'kvUsage'
  | 'preemptions'
  | 'promptTokensPerSec'
  | 'generationTokensPerSec'
  | 'prefixHitRate'
  | 'simLatenessMs'
  | 'gpuUtil'
  | 'gpuMem';

const SERIES_NAME: Record<ServerSeries, string> = {
  running: 'running (requests)',
  waiting: 'waiting (requests)',
  swapped: '换出到 CPU 的请求 swapped (requests)',
  kvUsage: 'KV cache usage (%)',
  preemptions: 'preemptions (+n per scrape)',
  promptTokensPerSec: 'prompt tokens/s',
  generationTokensPerSec: 'generation tokens/s',
  prefixHitRate: 'prefix-cache hit rate (%)',
  simLatenessMs: 'simulator step lateness p99 (ms)',
  gpuUtil: 'GPU util (%)',
  gpuMem: 'GPU memory (%)',
};

/** Where one series is drawn: its legend name, y axis and colour. */
interface Slot {
  name: string;
  yaxis: string;
  color: string;
}

/**
 * Per-scrape increments of a cumulative counter, at the end of each scrape interval: a view of
 * `counterDeltas` (stats/counters.ts, the one owner of the counter rules), so a counter that went
 * down counts as a reset (`inc` = the new value, PromQL's `increase()`) and a chart agrees with
 * `counterIncrease` in the table beside it.
 */
export function counterIncrements(samples: MetricsSample[], field: CounterField): { tMs: number; inc: number; dtMs: number }[] {
  return counterDeltas(samples, field).map((d) => ({ tMs: d.endMs, inc: d.delta, dtMs: d.endMs - d.startMs }));
}

function line(name: string, yaxis: string, x: number[], y: number[], color: string, extra: Record<string, unknown> = {}): Trace {
  return { type: 'scatter', mode: 'lines', name, xaxis: 'x', yaxis, x, y, line: { color, width: 1.5 }, ...extra };
}

/** A gauge as a step line (the value holds until the next scrape); `scale` 100 turns a fraction into %. */
function gaugeTrace(
  at: Slot,
  metrics: MetricsSample[],
  f: 'running' | 'waiting' | 'swapped' | 'kvUsage' | 'simLatenessMs',
  scale = 1,
): Trace {
  const { name, yaxis, color } = at;
  const ms = metrics.filter((m) => m[f] !== undefined);
  return line(
    name,
    yaxis,
    ms.map((m) => msToS(m.tMs)),
    ms.map((m) => m[f]! * scale),
    color,
    { line: { color, width: 1.5, shape: 'hv' } },
  );
}

/** A token counter as a rate per scrape interval, tokens/s (NaN for a zero-length interval). */
function rateTrace(at: Slot, metrics: MetricsSample[], f: 'promptTokensTotal' | 'generationTokensTotal'): Trace {
  const inc = counterIncrements(metrics, f);
  return line(
    at.name,
    at.yaxis,
    inc.map((d) => msToS(d.tMs)),
    inc.map((d) => (d.dtMs > 0 ? d.inc / (d.dtMs / 1000) : NaN)),
    at.color,
  );
}

/** Preemptions as star markers, one per scrape that saw any (`+n` per scrape). */
function preemptionMarkers(at: Slot, metrics: MetricsSample[]): Trace {
  const inc = counterIncrements(metrics, 'preemptionsTotal').filter((d) => d.inc > 0);
  return {
    type: 'scatter',
    mode: 'markers',
    name: at.name,
    xaxis: 'x',
    yaxis: at.yaxis,
    x: inc.map((d) => msToS(d.tMs)),
    y: inc.map((d) => d.inc),
    marker: { symbol: 'star', size: 10, color: PHASE_COLORS.preemption },
  };
}

/** The prefix-cache hit rate per scrape interval, %. */
function prefixHitTrace(at: Slot, metrics: MetricsSample[]): Trace {
  const rates = prefixHitRates(metrics);
  return line(
    at.name,
    at.yaxis,
    rates.map((d) => msToS(d.endMs)),
    rates.map((d) => 100 * d.hitRate),
    at.color,
  );
}

/** One line per GPU: utilization or memory used, % (NaN where nvidia-smi gave no value). */
function gpuTraces(s: 'gpuUtil' | 'gpuMem', yaxis: string, gpu: GpuSample[]): Trace[] {
  const ids = [...new Set(gpu.map((g) => g.gpu))];
  return ids.map((id, k) => {
    const gs = gpu.filter((g) => g.gpu === id);
    const y = gs.map((g) =>
      s === 'gpuUtil' ? (g.utilPct ?? NaN) : g.memTotalMiB ? (100 * (g.memUsedMiB ?? NaN)) / g.memTotalMiB : NaN,
    );
    return line(
      `GPU ${id} ${s === 'gpuUtil' ? 'util' : 'memory'} (%)`,
      yaxis,
      gs.map((g) => msToS(g.tMs)),
      y,
      colorAt(7 + k),
    );
  });
}

/**
 * True when some sample carries the swapped-requests gauge (`MetricsSample.swapped`: V0's
 * `vllm:num_requests_swapped`, `vllm/engine/metrics.py`). V1 never swaps and has no such series; the
 * simulator's swap mode counts swapped requests in `waiting` and its blocks in `loadlab:sim_swap_*`.
 */
export function hasSwapped(metrics: readonly MetricsSample[]): boolean {
  return metrics.some((m) => m.swapped !== undefined);
}

/**
 * Traces of one server series on axis `yaxis` (GPU series: one trace per GPU, in their own colours).
 * `swapped` gives no trace when no sample carries it (see `hasSwapped`).
 */
export function seriesTraces(s: ServerSeries, metrics: MetricsSample[], gpu: GpuSample[], yaxis: string, color: string): Trace[] {
  const at: Slot = { name: SERIES_NAME[s], yaxis, color };
  switch (s) {
    case 'swapped':
      return hasSwapped(metrics) ? [gaugeTrace(at, metrics, s)] : [];
    case 'running':
    case 'waiting':
    case 'simLatenessMs':
      return [gaugeTrace(at, metrics, s)];
    case 'kvUsage':
      return [gaugeTrace(at, metrics, 'kvUsage', 100)];
    case 'promptTokensPerSec':
      return [rateTrace(at, metrics, 'promptTokensTotal')];
    case 'generationTokensPerSec':
      return [rateTrace(at, metrics, 'generationTokensTotal')];
    case 'preemptions':
      return [preemptionMarkers(at, metrics)];
    case 'prefixHitRate':
      return [prefixHitTrace(at, metrics)];
    case 'gpuUtil':
    case 'gpuMem':
      return gpuTraces(s, yaxis, gpu);
  }
}
