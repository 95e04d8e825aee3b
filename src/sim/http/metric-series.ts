/**
 * The series of the simulator's `/metrics`, registered in the order vLLM V1 registers them
 * (names, help texts, labels and buckets as in `vllm/v1/metrics/loggers.py`), plus the
 * simulator-only `loadlab:` series. Registration order is the order of the rendered text.
 * `metrics.ts` (SimMetrics) feeds these series; this file only declares them.
 */
import { FAULT_KINDS, type FaultKind } from './faults';
import type { Histogram, PromRegistry, Scalar } from './prom';
import type { EngineConfig, EngineStats } from '../engine/types';

/** vLLM's TTFT buckets, seconds. */
export const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560,
];
/** vLLM's inter-token latency buckets, seconds. */
export const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
/** vLLM's request latency buckets (e2e, queue, decode), seconds. */
export const LAT_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
/** vLLM's `iteration_tokens_total` buckets, tokens per step. */
export const ITERATION_TOKEN_BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
/** Step-lateness buckets of the simulator's own clock discipline, seconds. */
export const LATENESS_BUCKETS = [0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.02, 0.05, 0.1];

/** vLLM's 1-2-5 buckets up to `max` (`build_1_2_5_buckets`). */
export function buckets125(max: number): number[] {
  const out: number[] = [];
  for (let e = 1; ; e *= 10) {
    for (const m of [1, 2, 5]) {
      if (m * e > max) return out;
      out.push(m * e);
    }
  }
}

/** Finish reasons vLLM pre-creates `request_success_total` series for. */
const SUCCESS_REASONS = ['stop', 'length', 'abort', 'error', 'repetition'] as const;

/** A cumulative counter and how to read its value from the engine's `stats()` at scrape time. */
export type CounterReader = [Scalar, (s: EngineStats) => number];

/** The scheduler gauges, set from the engine's `stats()` at scrape time. */
export interface SchedulerGauges {
  running: Scalar;
  waiting: Scalar;
  kvUsage: Scalar;
  /** vLLM's deprecated name of `kv_cache_usage_perc`, same value. */
  gpuUsage: Scalar;
}

/** The per-request histograms, fed by the HTTP layer (and `iteration` by the engine's steps). */
export interface RequestHistograms {
  ttft: Histogram;
  itl: Histogram;
  e2e: Histogram;
  queue: Histogram;
  decode: Histogram;
  promptLen: Histogram;
  genLen: Histogram;
  iteration: Histogram;
}

/** The simulator-only series (`loadlab:` prefix). */
export interface SimOnlySeries {
  lateness: Histogram;
  counters: CounterReader[];
  faults: Record<FaultKind, Scalar>;
}

/** Facts of the server the info series carry. */
export interface SeriesFacts {
  /** The engine's configuration (block size, KV blocks, prefix caching, preemption mode, max_model_len). */
  config: EngineConfig;
  /** `--gpu-memory-utilization` in effect (a `cache_config_info` label). */
  gpuMemoryUtilization: number;
  /** Hardware/model profile name (`loadlab:sim_info`). */
  profile: string;
  /** Emulated vLLM version (`loadlab:sim_info`). */
  vllmVersion: string;
}

/** `vllm:num_requests_running|waiting`, `vllm:kv_cache_usage_perc` and its old name `gpu_cache_usage_perc`. */
export function schedulerGauges(reg: PromRegistry): SchedulerGauges {
  return {
    running: reg.gauge('vllm:num_requests_running', 'Number of requests in model execution batches.'),
    waiting: reg.gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.'),
    kvUsage: reg.gauge('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.'),
    gpuUsage: reg.gauge(
      'vllm:gpu_cache_usage_perc',
      'GPU KV-cache usage. 1 means 100 percent usage. (Deprecated name of vllm:kv_cache_usage_perc, kept for old dashboards.)',
    ),
  };
}

/** `vllm:cache_config_info` (value 1, no base labels): the KV-cache configuration as labels. */
export function cacheConfigInfo(reg: PromRegistry, facts: SeriesFacts): void {
  const c = facts.config;
  const py = (b: boolean) => (b ? 'True' : 'False');
  reg
    .gauge(
      'vllm:cache_config_info',
      'Information of the LLMEngine CacheConfig',
      {
        block_size: String(c.blockSize),
        cache_dtype: 'auto',
        calculate_kv_scales: 'False',
        enable_prefix_caching: py(c.enablePrefixCaching),
        engine: '0',
        gpu_memory_utilization: String(facts.gpuMemoryUtilization),
        is_attention_free: 'False',
        num_cpu_blocks: c.preemptionMode === 'swap' ? String(c.numCpuBlocks) : 'None',
        num_gpu_blocks: String(c.numGpuBlocks),
        num_gpu_blocks_override: 'None',
        prefix_caching_hash_algo: 'sha256',
        sliding_window: 'None',
      },
      false,
    )
    .set(1);
}

/** vLLM's cumulative engine counters: preemptions, prompt and generation tokens, prefix-cache queries and hits. */
export function engineCounters(reg: PromRegistry): CounterReader[] {
  return [
    [reg.counter('vllm:num_preemptions', 'Cumulative number of preemption from the engine.'), (s) => s.numPreemptions],
    [reg.counter('vllm:prompt_tokens', 'Number of prefill tokens processed.'), (s) => s.promptTokens],
    [reg.counter('vllm:generation_tokens', 'Number of generation tokens processed.'), (s) => s.generationTokens],
    [
      reg.counter('vllm:prefix_cache_queries', 'Prefix cache queries, in terms of number of queried tokens.'),
      (s) => s.prefixCacheQueries,
    ],
    [reg.counter('vllm:prefix_cache_hits', 'Prefix cache hits, in terms of number of cached tokens.'), (s) => s.prefixCacheHits],
  ];
}

/** `vllm:request_success_total{finished_reason}`, one series per reason vLLM pre-creates. */
export function successCounters(reg: PromRegistry): Record<string, Scalar> {
  const success: Record<string, Scalar> = {};
  for (const r of SUCCESS_REASONS)
    success[r] = reg.counter('vllm:request_success', 'Count of successfully processed requests.', { finished_reason: r });
  return success;
}

/** The latency and length histograms per request, and tokens per engine step; lengths use 1-2-5 buckets up to `maxModelLen`. */
export function requestHistograms(reg: PromRegistry, maxModelLen: number): RequestHistograms {
  const ttft = reg.histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT_BUCKETS);
  const itl = reg.histogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', ITL_BUCKETS);
  const e2e = reg.histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', LAT_BUCKETS);
  const queue = reg.histogram(
    'vllm:request_queue_time_seconds',
    'Histogram of time spent in WAITING phase for request.',
    LAT_BUCKETS,
  );
  const decode = reg.histogram(
    'vllm:request_decode_time_seconds',
    'Histogram of time spent in DECODE phase for request.',
    LAT_BUCKETS,
  );
  const b = buckets125(maxModelLen);
  const promptLen = reg.histogram('vllm:request_prompt_tokens', 'Number of prefill tokens processed.', b);
  const genLen = reg.histogram('vllm:request_generation_tokens', 'Number of generation tokens processed.', b);
  const iteration = reg.histogram(
    'vllm:iteration_tokens_total',
    'Histogram of number of tokens per engine_step.',
    ITERATION_TOKEN_BUCKETS,
  );
  return { ttft, itl, e2e, queue, decode, promptLen, genLen, iteration };
}

/** The `loadlab:` series: step lateness, steps and swapped blocks, injected faults by kind, and `sim_info` (value 1). */
export function simOnlySeries(reg: PromRegistry, facts: SeriesFacts): SimOnlySeries {
  const lateness = reg.histogram(
    'loadlab:sim_step_lateness_seconds',
    'Simulator only: how late each engine step ended versus its modelled end time.',
    LATENESS_BUCKETS,
  );
  const counters: CounterReader[] = [
    [reg.counter('loadlab:sim_steps', 'Simulator only: engine steps run.'), (s) => s.steps],
    [
      reg.counter('loadlab:sim_swap_out_blocks', 'Simulator only: KV blocks swapped out to CPU (--preemption-mode swap).'),
      (s) => s.swapOutBlocks,
    ],
    [
      reg.counter('loadlab:sim_swap_in_blocks', 'Simulator only: KV blocks swapped back in (--preemption-mode swap).'),
      (s) => s.swapInBlocks,
    ],
  ];
  const faults = {} as Record<FaultKind, Scalar>;
  for (const k of FAULT_KINDS) {
    faults[k] = reg.counter(
      'loadlab:sim_faults_injected',
      'Simulator only: faults injected (--fault-* flags or POST /loadlab/faults), by kind.',
      { kind: k },
    );
  }
  reg
    .gauge('loadlab:sim_info', 'Simulator only: this server is the LoadLab simulator, not a GPU.', {
      simulated: 'true',
      profile: facts.profile,
      vllm_version: facts.vllmVersion,
      preemption_mode: facts.config.preemptionMode,
    })
    .set(1);
  return { lateness, counters, faults };
}
