/**
 * The simulator's `/metrics`: vLLM V1's Prometheus series (names, labels and buckets as in
 * `vllm/v1/metrics/loggers.py`) plus simulator-only `loadlab:` series. Scheduler gauges and
 * token counters mirror the engine's `stats()` at scrape time; latency histograms are fed by
 * the HTTP layer per request; step histograms by the engine's step reports.
 */
import { FAULT_KINDS, type FaultKind } from './faults';
import { PromRegistry, pyFloat, type Histogram, type Scalar } from './prom';
import type { EngineConfig, EngineStats, FinishReason, StepInfo } from '../engine/types';

/** vLLM's TTFT buckets, seconds. */
export const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560];
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

/** What the metrics need to know about the server. */
export interface SimMetricsOptions {
  /** Served model name (`model_name` label). */
  modelName: string;
  config: EngineConfig;
  /** `--gpu-memory-utilization` in effect (a `cache_config_info` label). */
  gpuMemoryUtilization: number;
  /** Hardware/model profile name (`loadlab:sim_info`). */
  profile: string;
  /** Emulated vLLM version (`loadlab:sim_info`). */
  vllmVersion: string;
}

/** vLLM's metric series, fed by the HTTP layer and the engine. */
export class SimMetrics {
  private readonly reg: PromRegistry;
  private readonly running: Scalar;
  private readonly waiting: Scalar;
  private readonly kvUsage: Scalar;
  private readonly gpuUsage: Scalar;
  private readonly counters: Array<[Scalar, (s: EngineStats) => number]>;
  private readonly success: Record<string, Scalar> = {};
  private readonly ttft: Histogram;
  private readonly itl: Histogram;
  private readonly e2e: Histogram;
  private readonly queue: Histogram;
  private readonly decode: Histogram;
  private readonly promptLen: Histogram;
  private readonly genLen: Histogram;
  private readonly iteration: Histogram;
  private readonly lateness: Histogram;
  private readonly faults = {} as Record<FaultKind, Scalar>;

  constructor(opts: SimMetricsOptions) {
    const c = opts.config;
    const reg = new PromRegistry({ engine: '0', model_name: opts.modelName });
    this.reg = reg;
    this.running = reg.gauge('vllm:num_requests_running', 'Number of requests in model execution batches.');
    this.waiting = reg.gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.');
    this.kvUsage = reg.gauge('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.');
    this.gpuUsage = reg.gauge('vllm:gpu_cache_usage_perc', 'GPU KV-cache usage. 1 means 100 percent usage. (Deprecated name of vllm:kv_cache_usage_perc, kept for old dashboards.)');
    const py = (b: boolean) => (b ? 'True' : 'False');
    reg.gauge('vllm:cache_config_info', 'Information of the LLMEngine CacheConfig', {
      block_size: String(c.blockSize), cache_dtype: 'auto', calculate_kv_scales: 'False', enable_prefix_caching: py(c.enablePrefixCaching),
      engine: '0', gpu_memory_utilization: String(opts.gpuMemoryUtilization), is_attention_free: 'False',
      num_cpu_blocks: c.preemptionMode === 'swap' ? String(c.numCpuBlocks) : 'None', num_gpu_blocks: String(c.numGpuBlocks),
      num_gpu_blocks_override: 'None', prefix_caching_hash_algo: 'sha256', sliding_window: 'None',
    }, false).set(1);
    this.counters = [
      [reg.counter('vllm:num_preemptions', 'Cumulative number of preemption from the engine.'), (s) => s.numPreemptions],
      [reg.counter('vllm:prompt_tokens', 'Number of prefill tokens processed.'), (s) => s.promptTokens],
      [reg.counter('vllm:generation_tokens', 'Number of generation tokens processed.'), (s) => s.generationTokens],
      [reg.counter('vllm:prefix_cache_queries', 'Prefix cache queries, in terms of number of queried tokens.'), (s) => s.prefixCacheQueries],
      [reg.counter('vllm:prefix_cache_hits', 'Prefix cache hits, in terms of number of cached tokens.'), (s) => s.prefixCacheHits],
    ];
    for (const r of SUCCESS_REASONS) this.success[r] = reg.counter('vllm:request_success', 'Count of successfully processed requests.', { finished_reason: r });
    this.ttft = reg.histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT_BUCKETS);
    this.itl = reg.histogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', ITL_BUCKETS);
    this.e2e = reg.histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', LAT_BUCKETS);
    this.queue = reg.histogram('vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', LAT_BUCKETS);
    this.decode = reg.histogram('vllm:request_decode_time_seconds', 'Histogram of time spent in DECODE phase for request.', LAT_BUCKETS);
    const b = buckets125(c.maxModelLen);
    this.promptLen = reg.histogram('vllm:request_prompt_tokens', 'Number of prefill tokens processed.', b);
    this.genLen = reg.histogram('vllm:request_generation_tokens', 'Number of generation tokens processed.', b);
    this.iteration = reg.histogram('vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.', ITERATION_TOKEN_BUCKETS);
    this.lateness = reg.histogram('loadlab:sim_step_lateness_seconds', 'Simulator only: how late each engine step ended versus its modelled end time.', LATENESS_BUCKETS);
    this.counters.push(
      [reg.counter('loadlab:sim_steps', 'Simulator only: engine steps run.'), (s) => s.steps],
      [reg.counter('loadlab:sim_swap_out_blocks', 'Simulator only: KV blocks swapped out to CPU (--preemption-mode swap).'), (s) => s.swapOutBlocks],
      [reg.counter('loadlab:sim_swap_in_blocks', 'Simulator only: KV blocks swapped back in (--preemption-mode swap).'), (s) => s.swapInBlocks],
    );
    for (const k of FAULT_KINDS) {
      this.faults[k] = reg.counter('loadlab:sim_faults_injected', 'Simulator only: faults injected (--fault-* flags or POST /loadlab/faults), by kind.', { kind: k });
    }
    reg.gauge('loadlab:sim_info', 'Simulator only: this server is the LoadLab simulator, not a GPU.', {
      simulated: 'true', profile: opts.profile, vllm_version: opts.vllmVersion, preemption_mode: c.preemptionMode,
    }).set(1);
  }

  /** A request's first output: TTFT from HTTP arrival, seconds. */
  observeFirstToken(ttftS: number): void {
    this.ttft.observe(ttftS);
  }

  /** Time from entering the engine to first being scheduled, seconds. */
  observeQueueTime(seconds: number): void {
    this.queue.observe(seconds);
  }

  /** Time between two engine outputs of one request (one sample per output, not per token). */
  observeInterToken(seconds: number): void {
    this.itl.observe(seconds);
  }

  /** A request the engine finished (client-side aborts are not counted, as in vLLM). */
  observeFinish(reason: FinishReason, e2eS: number, decodeS: number, promptTokens: number, outputTokens: number): void {
    this.success[reason]?.inc();
    this.e2e.observe(e2eS);
    this.decode.observe(decodeS);
    this.promptLen.observe(promptTokens);
    this.genLen.observe(outputTokens);
  }

  /** One injected fault (`loadlab:sim_faults_injected_total{kind}`). */
  observeFault(kind: FaultKind): void {
    this.faults[kind].inc();
  }

  /** One engine step: iteration tokens and the simulator's lateness. */
  observeStep(info: StepInfo): void {
    if (info.iterationTokens > 0) this.iteration.observe(info.iterationTokens);
    this.lateness.observe(Math.max(0, info.latenessMs) / 1000);
  }

  /** Prometheus text with gauges and counters taken from `stats` (the engine's current state). */
  render(stats: EngineStats): string {
    this.running.set(stats.running);
    this.waiting.set(stats.waiting);
    this.kvUsage.set(stats.kvUsage);
    this.gpuUsage.set(stats.kvUsage);
    for (const [counter, read] of this.counters) counter.set(read(stats));
    return this.reg.render() + processMemoryText();
  }
}

/**
 * The simulator process's resident memory, as vLLM's /metrics shows its own: prometheus_client's
 * default registry includes the process collector (`prometheus_client/process_collector.py`,
 * `process_resident_memory_bytes`, no labels). Read from the OS at each scrape.
 */
export function processMemoryText(): string {
  return '# HELP process_resident_memory_bytes Resident memory size in bytes.\n'
    + '# TYPE process_resident_memory_bytes gauge\n'
    + `process_resident_memory_bytes ${pyFloat(process.memoryUsage.rss())}\n`;
}
