/**
 * vLLM's `/metrics` mapped onto LoadLab's `MetricsSample`. Reads vLLM V1's current series and,
 * when those are missing, the names older versions export (renamed in 0.9, removed in 0.12):
 * `vllm:gpu_cache_usage_perc` → `kvUsage`, `vllm:gpu_prefix_cache_{queries,hits}_total` →
 * `prefix{Queries,Hits}Total` (both count tokens), and V0's `vllm:num_requests_swapped` → `swapped`
 * (V0 `Metrics`, vllm/engine/metrics.py; V0 had no prefix-cache counters). With data parallelism every series carries an
 * `engine` label; counts and counters are summed over engines, KV usage is averaged weighted by
 * each engine's `num_gpu_blocks`.
 */
import type { MetricsSample } from '../types';
import { histogramDelta, histogramQuantile, readHistogram } from './histogram';
import { findFamily, pickSamples, sumValues, type MetricFamily, type PromSample } from './prometheus';

/** The `MetricsSample` fields read from vLLM series (all but `tMs` and `simLatenessMs`). */
export type VllmField = Exclude<keyof MetricsSample, 'tMs' | 'simLatenessMs'>;

/** Series names per field, preferred first (current V1 name, then older spellings). */
export const VLLM_SERIES: Readonly<Record<VllmField, readonly string[]>> = {
  running: ['vllm:num_requests_running'],
  waiting: ['vllm:num_requests_waiting'],
  // V0 only (`Metrics.gauge_scheduler_swapped`, vllm/engine/metrics.py); V1 never swaps.
  swapped: ['vllm:num_requests_swapped'],
  kvUsage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
  preemptionsTotal: ['vllm:num_preemptions_total'],
  promptTokensTotal: ['vllm:prompt_tokens_total'],
  generationTokensTotal: ['vllm:generation_tokens_total'],
  prefixQueriesTotal: ['vllm:prefix_cache_queries_total', 'vllm:gpu_prefix_cache_queries_total'],
  prefixHitsTotal: ['vllm:prefix_cache_hits_total', 'vllm:gpu_prefix_cache_hits_total'],
};

/** The simulator's step-lateness histogram (seconds): how late its step timer fired. */
export const SIM_LATENESS_METRIC = 'loadlab:sim_step_lateness_seconds';

/** The families `toMetricsSample` reads: every `VLLM_SERIES` name, `vllm:cache_config_info` (KV weights) and the lateness. */
const SAMPLE_FAMILIES: readonly string[] = [
  ...new Set(Object.values(VLLM_SERIES).flatMap((names) => names.map((n) => n.replace(/_total$/, '')))),
  'vllm:cache_config_info',
  SIM_LATENESS_METRIC,
];

/**
 * Only the lines of a scrape that `toMetricsSample` reads (their `# HELP`/`# TYPE` lines and samples,
 * suffixes such as `_total`, `_bucket` included), for parsing: a vLLM scrape is about 59 KB, mostly
 * histogram buckets no sample reads, and parsing all of it cost about 4 ms every 250 ms on the
 * notebook kernel's thread (bench/README.md §9). A line may be kept that is not needed (a longer name
 * with the same start); none that is needed is dropped.
 */
export function sampleLines(text: string): string {
  const keep = (name: string) => SAMPLE_FAMILIES.some((f) => name === f || (name.startsWith(f) && name[f.length] === '_'));
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const t = line.trimStart();
    if (t === '') continue;
    const name = t[0] === '#' ? t.split(/\s+/, 3)[2] : t.slice(0, nameEnd(t));
    if (name !== undefined && keep(name)) out.push(line);
  }
  return out.join('\n');
}

/** Where a sample line's metric name ends: the first `{`, space or tab. */
function nameEnd(t: string): number {
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 123 || c === 32 || c === 9) return i;
  }
  return t.length;
}

/** Options of `toMetricsSample`. */
export interface ToMetricsSampleOptions {
  /** The previous scrape: the simulator's lateness p99 is computed over the interval between the two. */
  previous?: readonly MetricFamily[];
  /** Only series whose labels include these, e.g. `{ model_name: 'qwen' }`. Default: all. */
  labels?: Record<string, string>;
}

/**
 * One scrape as a `MetricsSample` at `tMs` (run clock). Fields whose series the scrape lacks
 * are left undefined (never guessed). `simLatenessMs` is the p99 lateness of the simulator's
 * steps during the interval since `previous` (over all steps so far without it), in ms; it is
 * undefined for a real vLLM and for an interval with no steps.
 */
export function toMetricsSample(
  families: readonly MetricFamily[],
  tMs: number,
  opts: ToMetricsSampleOptions = {},
): MetricsSample {
  const out: MetricsSample = { tMs };
  for (const field of Object.keys(VLLM_SERIES) as VllmField[]) {
    const v = field === 'kvUsage' ? kvUsage(families, opts.labels) : firstSum(families, VLLM_SERIES[field], opts.labels);
    if (v !== undefined) out[field] = v;
  }
  const lateness = simLatenessMs(families, opts.previous, opts.labels);
  if (lateness !== undefined) out.simLatenessMs = lateness;
  return out;
}

/** The sum over engines of the first series name the scrape has. */
function firstSum(
  families: readonly MetricFamily[],
  names: readonly string[],
  labels?: Record<string, string>,
): number | undefined {
  for (const name of names) {
    const v = sumValues(families, name, labels);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** KV usage over all engines: each engine's usage weighted by its block count (plain mean without it). */
function kvUsage(families: readonly MetricFamily[], labels?: Record<string, string>): number | undefined {
  let samples: PromSample[] = [];
  for (const name of VLLM_SERIES.kvUsage) if ((samples = pickSamples(families, name, labels)).length > 0) break;
  if (samples.length === 0) return undefined;
  if (samples.length === 1) return samples[0].value;
  let num = 0;
  let den = 0;
  for (const s of samples) {
    const info = cacheConfigInfo(families, s.labels.engine);
    const blocks = Number(info?.num_gpu_blocks);
    const w = Number.isFinite(blocks) && blocks > 0 ? blocks : 1;
    num += w * s.value;
    den += w;
  }
  return num / den;
}

/**
 * The simulator's step lateness p99 in ms: from the histogram delta between scrapes (or a gauge
 * of seconds, if the simulator exports one). Undefined when absent or when no step was observed.
 */
export function simLatenessMs(
  families: readonly MetricFamily[],
  previous?: readonly MetricFamily[],
  labels?: Record<string, string>,
): number | undefined {
  return simLateness(families, previous, labels)?.p99Ms;
}

/** {@link simLatenessMs} with the number of steps it was taken over (from the histogram; unknown from a gauge). */
export function simLateness(
  families: readonly MetricFamily[],
  previous?: readonly MetricFamily[],
  labels?: Record<string, string>,
): { p99Ms: number; steps?: number } | undefined {
  const fam = findFamily(families, SIM_LATENESS_METRIC);
  if (fam && fam.type === 'gauge') return fam.samples.length > 0 ? { p99Ms: fam.samples[0].value * 1000 } : undefined;
  const now = readHistogram(families, SIM_LATENESS_METRIC, labels);
  if (!now) return undefined;
  const before = previous ? readHistogram(previous, SIM_LATENESS_METRIC, labels) : undefined;
  const delta = histogramDelta(now, before);
  const p99 = histogramQuantile(delta, 0.99);
  return Number.isNaN(p99) ? undefined : { p99Ms: p99 * 1000, steps: delta.count };
}

/**
 * The labels of `vllm:cache_config_info` (vLLM's `CacheConfig` fields as strings, e.g.
 * `num_gpu_blocks`, `block_size`, `gpu_memory_utilization`, `enable_prefix_caching`,
 * `cache_dtype`), for `engine` (default: the first engine listed). Undefined when absent.
 */
export function cacheConfigInfo(families: readonly MetricFamily[], engine?: string): Record<string, string> | undefined {
  const samples = pickSamples(families, 'vllm:cache_config_info', engine === undefined ? undefined : { engine });
  return samples.length > 0 ? { ...samples[0].labels } : undefined;
}

/** The cache-config fields LoadLab relies on, parsed (`"None"` and missing become undefined). */
export interface CacheConfigSummary {
  /** KV blocks on the GPU (vLLM profiles this at startup, or `--num-gpu-blocks-override`). */
  numGpuBlocks?: number;
  /** Tokens per KV block (default 16). */
  blockSize?: number;
  /** `numGpuBlocks × blockSize`: how many tokens of KV the cache holds in total. */
  kvCapacityTokens?: number;
  /** Fraction of GPU memory vLLM was allowed (0..1). */
  gpuMemoryUtilization?: number;
  enablePrefixCaching?: boolean;
  /** `auto`, `fp8`, … */
  cacheDtype?: string;
}

/** Parses the labels returned by `cacheConfigInfo`. */
export function summarizeCacheConfig(labels: Record<string, string> | undefined): CacheConfigSummary {
  const num = (k: string): number | undefined => {
    const v = labels?.[k];
    if (v === undefined || v === 'None' || v.trim() === '') return undefined;
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  };
  const out: CacheConfigSummary = {};
  const blocks = num('num_gpu_blocks');
  const size = num('block_size');
  if (blocks !== undefined) out.numGpuBlocks = blocks;
  if (size !== undefined) out.blockSize = size;
  if (blocks !== undefined && size !== undefined) out.kvCapacityTokens = blocks * size;
  const util = num('gpu_memory_utilization');
  if (util !== undefined) out.gpuMemoryUtilization = util;
  const pc = labels?.enable_prefix_caching;
  if (pc === 'True' || pc === 'False') out.enablePrefixCaching = pc === 'True';
  const dtype = labels?.cache_dtype;
  if (dtype !== undefined && dtype !== 'None') out.cacheDtype = dtype;
  return out;
}
