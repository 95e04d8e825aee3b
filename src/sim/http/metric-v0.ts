/**
 * The V0 engine's `/metrics` series (vLLM 0.5/0.6 `LLMEngine`), in the order of the `Metrics`
 * class of `vllm/engine/metrics.py` at vLLM commit f0afa0c28a31: labels `model_name` only (no
 * `engine`), no `_created` samples (`disable_created_metrics()`), `vllm:cache_config` as an Info
 * (exposed as the gauge `vllm:cache_config_info`), V0's own bucket bounds. The spec-decode
 * families are declared without samples, as a V0 server without a draft model shows them.
 */
import type { PromRegistry, Scalar } from './prom';
import { buckets125, pyBool, type GenerationSeries, type SeriesFacts } from './metric-series';

/** V0's TTFT buckets, seconds (`vllm/engine/metrics.py`). */
export const V0_TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** V0's time-per-output-token buckets, seconds. */
export const V0_TPOT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5];
/** V0's e2e latency buckets, seconds. */
export const V0_E2E_BUCKETS = [1, 2.5, 5, 10, 15, 20, 30, 40, 50, 60];

/** Finish reasons V0 counts (`vllm:request_success_total{finished_reason}`). */
const V0_REASONS = ['stop', 'length', 'abort'];

/** The V0 series. Labels: `model_name` (the registry's base labels). */
export function v0Series(reg: PromRegistry, facts: SeriesFacts): GenerationSeries {
  v0CacheConfig(reg, facts);
  const gauges = {
    running: reg.gauge('vllm:num_requests_running', 'Number of requests currently running on GPU.'),
    waiting: reg.gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.'),
    swapped: reg.gauge('vllm:num_requests_swapped', 'Number of requests swapped to CPU.'),
    gpuUsage: reg.gauge('vllm:gpu_cache_usage_perc', 'GPU KV-cache usage. 1 means 100 percent usage.'),
    cpuUsage: reg.gauge('vllm:cpu_cache_usage_perc', 'CPU KV-cache usage. 1 means 100 percent usage.'),
  };
  const counters: GenerationSeries['counters'] = [
    [reg.counter('vllm:num_preemptions', 'Cumulative number of preemption from the engine.'), (s) => s.numPreemptions],
    [reg.counter('vllm:prompt_tokens', 'Number of prefill tokens processed.'), (s) => s.promptTokens],
    [reg.counter('vllm:generation_tokens', 'Number of generation tokens processed.'), (s) => s.generationTokens],
  ];
  const ttft = reg.histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', V0_TTFT_BUCKETS);
  const itl = reg.histogram(
    'vllm:time_per_output_token_seconds',
    'Histogram of time per output token in seconds.',
    V0_TPOT_BUCKETS,
  );
  const e2e = reg.histogram(
    'vllm:e2e_request_latency_seconds',
    'Histogram of end to end request latency in seconds.',
    V0_E2E_BUCKETS,
  );
  const b = buckets125(facts.config.maxModelLen);
  const promptLen = reg.histogram('vllm:request_prompt_tokens', 'Number of prefill tokens processed.', b);
  const genLen = reg.histogram('vllm:request_generation_tokens', 'Number of generation tokens processed.', b);
  const bestOf = reg.histogram('vllm:request_params_best_of', 'Histogram of the best_of request parameter.', [1, 2, 5, 10, 20]);
  const paramsN = reg.histogram('vllm:request_params_n', 'Histogram of the n request parameter.', [1, 2, 5, 10, 20]);
  const success: Record<string, Scalar> = {};
  for (const r of V0_REASONS)
    success[r] = reg.counter('vllm:request_success', 'Count of successfully processed requests.', { finished_reason: r });
  reg.declare('vllm:spec_decode_draft_acceptance_rate', 'Speulative token acceptance rate.', 'gauge');
  reg.declare('vllm:spec_decode_efficiency', 'Speculative decoding system efficiency.', 'gauge');
  reg.declare('vllm:spec_decode_num_accepted_tokens_total', 'Number of accepted tokens.', 'counter');
  reg.declare('vllm:spec_decode_num_draft_tokens_total', 'Number of draft tokens.', 'counter');
  reg.declare('vllm:spec_decode_num_emitted_tokens_total', 'Number of emitted tokens.', 'counter');
  const throughput = {
    promptThroughput: reg.gauge('vllm:avg_prompt_throughput_toks_per_s', 'Average prefill throughput in tokens/s.'),
    generationThroughput: reg.gauge('vllm:avg_generation_throughput_toks_per_s', 'Average generation throughput in tokens/s.'),
  };
  return {
    gauges: { ...gauges, ...throughput },
    counters,
    success,
    hist: { ttft, itl, e2e, promptLen, genLen, bestOf, paramsN },
  };
}

/** V0's `vllm:cache_config` Info: `CacheConfig.metrics_info()` (its `__dict__` as strings), no model label. */
function v0CacheConfig(reg: PromRegistry, facts: SeriesFacts): void {
  const c = facts.config;
  reg
    .gauge(
      'vllm:cache_config_info',
      'information of cache_config',
      {
        block_size: String(c.blockSize),
        cache_dtype: 'auto',
        cpu_offload_gb: '0',
        enable_prefix_caching: pyBool(c.enablePrefixCaching),
        gpu_memory_utilization: String(facts.gpuMemoryUtilization),
        num_cpu_blocks: String(c.preemptionMode === 'swap' ? c.numCpuBlocks : 0),
        num_gpu_blocks: String(c.numGpuBlocks),
        num_gpu_blocks_override: 'None',
        sliding_window: 'None',
        swap_space_bytes: String(Math.round((facts.swapSpaceGiB ?? 4) * 2 ** 30)),
      },
      false,
    )
    .set(1);
}
