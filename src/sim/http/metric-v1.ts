/**
 * The V1 engine's `/metrics` series, in the order `PrometheusStatLogger.__init__` registers them
 * (`vllm/v1/metrics/loggers.py`): for 0.10 as at vLLM commit e680723eb (2025-09-09, with the
 * `gpu_*` names and the deprecated `time_per_output_token_seconds`), for 0.19 as at 9aaf83ef5
 * (the `gpu_*` names removed by #29330, prompt tokens by source, waiting by reason, sleep state).
 * Families that need a LoRA, a KV connector, a draft model or `--kv-cache-metrics` are not
 * registered, as in vLLM without those options.
 */
import type { PromRegistry, Scalar } from './prom';
import {
  buckets125,
  ITERATION_TOKEN_BUCKETS,
  ITL_BUCKETS,
  LAT_BUCKETS,
  pyBool,
  TTFT_BUCKETS,
  type CounterReader,
  type GenerationSeries,
  type SchedulerGauges,
  type SeriesFacts,
} from './metric-series';

/** `FINISH_REASON_STRINGS` of `vllm/v1/engine/__init__.py`: 0.10 has three, 0.19 five. */
const REASONS_010 = ['stop', 'length', 'abort'];
const REASONS_019 = ['stop', 'length', 'abort', 'error', 'repetition'];

/** The V1 series of `facts.generation` (`v0.10` or `v0.19`). */
export function v1Series(reg: PromRegistry, facts: SeriesFacts): GenerationSeries {
  const now = facts.generation !== 'v0.10';
  const gauges: SchedulerGauges = {
    running: reg.gauge('vllm:num_requests_running', 'Number of requests in model execution batches.'),
    waiting: reg.gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.'),
  };
  const counters: CounterReader[] = [];
  const counter = (name: string, help: string, read: CounterReader[1]) => counters.push([reg.counter(name, help), read]);
  if (now) {
    const help =
      "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; " +
      "'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). " +
      'Sum of all reasons equals vllm:num_requests_waiting.';
    gauges.waitingCapacity = reg.gauge('vllm:num_requests_waiting_by_reason', help, { reason: 'capacity' });
    gauges.waitingDeferred = reg.gauge('vllm:num_requests_waiting_by_reason', help, { reason: 'deferred' });
    sleepState(reg);
  } else {
    gauges.gpuUsage = reg.gauge(
      'vllm:gpu_cache_usage_perc',
      'GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead.',
    );
    counter(
      'vllm:gpu_prefix_cache_queries',
      'GPU prefix cache queries, in terms of number of queriedtokens. DEPRECATED: Use vllm:prefix_cache_queries instead.',
      (s) => s.prefixCacheQueries,
    );
    counter(
      'vllm:gpu_prefix_cache_hits',
      'GPU prefix cache hits, in terms of number of cached tokens. DEPRECATED: Use vllm:prefix_cache_hits instead.',
      (s) => s.prefixCacheHits,
    );
  }
  gauges.kvUsage = reg.gauge('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.');
  counter(
    'vllm:prefix_cache_queries',
    'Prefix cache queries, in terms of number of queried tokens.',
    (s) => s.prefixCacheQueries,
  );
  counter('vllm:prefix_cache_hits', 'Prefix cache hits, in terms of number of cached tokens.', (s) => s.prefixCacheHits);
  if (now) externalAndMmCounters(reg);
  counter('vllm:num_preemptions', 'Cumulative number of preemption from the engine.', (s) => s.numPreemptions);
  counter('vllm:prompt_tokens', 'Number of prefill tokens processed.', (s) => s.promptTokens);
  const bySource = now ? promptSources(reg) : undefined;
  counter('vllm:generation_tokens', 'Number of generation tokens processed.', (s) => s.generationTokens);
  const success: Record<string, Scalar> = {};
  for (const r of now ? REASONS_019 : REASONS_010)
    success[r] = reg.counter('vllm:request_success', 'Count of successfully processed requests.', { finished_reason: r });
  const hist = v1Histograms(reg, facts.config.maxModelLen, now);
  cacheConfigInfo(reg, facts);
  return { gauges, counters, success, hist, bySource };
}

/** `vllm:engine_sleep_state{sleep_state}`: the simulator never sleeps (awake 1, the others 0). */
function sleepState(reg: PromRegistry): void {
  const help =
    'Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; ' +
    'weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.';
  for (const s of ['awake', 'weights_offloaded', 'discard_all'])
    reg.gauge('vllm:engine_sleep_state', help, { sleep_state: s }).set(s === 'awake' ? 1 : 0);
}

/** The KV-connector and multi-modal cache counters: always registered in 0.19, always 0 here (no connector, text only). */
function externalAndMmCounters(reg: PromRegistry): void {
  const ext = 'cross-instance cache sharing, in terms of number of';
  reg.counter('vllm:external_prefix_cache_queries', `External prefix cache queries from KV connector ${ext} queried tokens.`);
  reg.counter('vllm:external_prefix_cache_hits', `External prefix cache hits from KV connector ${ext} cached tokens.`);
  reg.counter('vllm:mm_cache_queries', 'Multi-modal cache queries, in terms of number of queried items.');
  reg.counter('vllm:mm_cache_hits', 'Multi-modal cache hits, in terms of number of cached items.');
}

/** `prompt_tokens_by_source_total{source}` (`PromptTokenStats.ALL_SOURCES`, `vllm/v1/metrics/stats.py`) and `prompt_tokens_cached_total`. */
function promptSources(reg: PromRegistry): GenerationSeries['bySource'] {
  const help = 'Number of prompt tokens by source.';
  return {
    localCompute: reg.counter('vllm:prompt_tokens_by_source', help, { source: 'local_compute' }),
    localCacheHit: reg.counter('vllm:prompt_tokens_by_source', help, { source: 'local_cache_hit' }),
    externalKvTransfer: reg.counter('vllm:prompt_tokens_by_source', help, { source: 'external_kv_transfer' }),
    cached: reg.counter('vllm:prompt_tokens_cached', 'Number of cached prompt tokens (local + external).'),
  };
}

/** The V1 histograms; lengths use 1-2-5 buckets up to `maxModelLen`. `now` = 0.19, else 0.10. */
function v1Histograms(reg: PromRegistry, maxModelLen: number, now: boolean): GenerationSeries['hist'] {
  const b = buckets125(maxModelLen);
  const promptLen = reg.histogram('vllm:request_prompt_tokens', 'Number of prefill tokens processed.', b);
  const genLen = reg.histogram('vllm:request_generation_tokens', 'Number of generation tokens processed.', b);
  const iteration = reg.histogram(
    'vllm:iteration_tokens_total',
    'Histogram of number of tokens per engine_step.',
    ITERATION_TOKEN_BUCKETS,
  );
  const maxGeneration = reg.histogram(
    'vllm:request_max_num_generation_tokens',
    'Histogram of maximum number of requested generation tokens.',
    b,
  );
  const paramsN = reg.histogram('vllm:request_params_n', 'Histogram of the n request parameter.', [1, 2, 5, 10, 20]);
  const paramsMaxTokens = reg.histogram('vllm:request_params_max_tokens', 'Histogram of the max_tokens request parameter.', b);
  const ttft = reg.histogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT_BUCKETS);
  const itlOld = now
    ? undefined
    : reg.histogram(
        'vllm:time_per_output_token_seconds',
        'Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead.',
        ITL_BUCKETS,
      );
  const itl = reg.histogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', ITL_BUCKETS);
  const tpotRequest = now
    ? reg.histogram(
        'vllm:request_time_per_output_token_seconds',
        'Histogram of time_per_output_token_seconds per request.',
        ITL_BUCKETS,
      )
    : undefined;
  const lat = (name: string, phase: string) =>
    reg.histogram(`vllm:${name}`, `Histogram of time spent in ${phase} phase for request.`, LAT_BUCKETS);
  const e2e = reg.histogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', LAT_BUCKETS);
  const queue = lat('request_queue_time_seconds', 'WAITING');
  const inference = lat('request_inference_time_seconds', 'RUNNING');
  const prefill = lat('request_prefill_time_seconds', 'PREFILL');
  const decode = lat('request_decode_time_seconds', 'DECODE');
  const kvComputed = now
    ? reg.histogram(
        'vllm:request_prefill_kv_computed_tokens',
        'Histogram of new KV tokens computed during prefill (excluding cached tokens).',
        b,
      )
    : undefined;
  return {
    ...{ ttft, itl, itlOld, e2e, promptLen, genLen, queue, prefill, inference, decode },
    ...{ tpotRequest, kvComputed, iteration, maxGeneration, paramsN, paramsMaxTokens },
  };
}

/**
 * `vllm:cache_config_info` (value 1, no base labels): `CacheConfig.metrics_info()` plus `engine`
 * (`log_metrics_info`). The simulator shows the fields LoadLab's readers use and a few more; a
 * real server shows every `CacheConfig` field of its release (the fixtures list them).
 */
export function cacheConfigInfo(reg: PromRegistry, facts: SeriesFacts): void {
  const c = facts.config;
  reg
    .gauge(
      'vllm:cache_config_info',
      'Information of the LLMEngine CacheConfig',
      {
        block_size: String(c.blockSize),
        cache_dtype: 'auto',
        calculate_kv_scales: 'False',
        enable_prefix_caching: pyBool(c.enablePrefixCaching),
        engine: '0',
        gpu_memory_utilization: String(facts.gpuMemoryUtilization),
        is_attention_free: 'False',
        num_cpu_blocks: c.preemptionMode === 'swap' ? String(c.numCpuBlocks) : 'None',
        num_gpu_blocks: String(c.numGpuBlocks),
        num_gpu_blocks_override: 'None',
        prefix_caching_hash_algo: facts.generation === 'v0.10' ? 'builtin' : 'sha256',
        sliding_window: 'None',
      },
      false,
    )
    .set(1);
}
