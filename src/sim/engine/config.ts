/**
 * `vllm serve` flags → resolved engine configuration, with vLLM V1's defaults and
 * validation for a GPU under 70 GiB (vllm-surface.md §5, `EngineArgs.get_batch_defaults` and
 * `--performance-mode` in `vllm/engine/arg_utils.py`, `SchedulerConfig` validation in
 * `vllm/config/scheduler.py`, the block count and `--max-model-len auto` in `vllm/v1/core/kv_cache_utils.py`,
 * `--kv-cache-memory-bytes` in `vllm/v1/worker/gpu_worker.py` `determine_available_memory`).
 */
import { DEFAULT_PROFILE, kvBlockBytes, type Profile } from './profile';
import type { EngineConfig, ServerFlags } from './types';

const GiB = 1024 ** 3;

/** `vllm serve` defaults on a GPU with < 70 GiB (and on A100s). */
export const V1_DEFAULTS = {
  /** Token budget per step. */
  maxNumBatchedTokens: 2048,
  /** Running-set cap. */
  maxNumSeqs: 256,
  /**
   * Fraction of total device memory for this instance: 0.9 in the vLLM we emulate (0.19,
   * `vllm/config/cache.py` `CacheConfig.gpu_memory_utilization`); 0.92 only from #38284 (2026-04).
   */
  gpuMemoryUtilization: 0.9,
  blockSize: 16,
  /** GiB of CPU swap in swap mode (V0's `--swap-space`). */
  swapSpaceGiB: 4,
} as const;

/** Block sizes vLLM's CLI accepts. */
const BLOCK_SIZES = [1, 8, 16, 32, 64, 128];

/**
 * `--performance-mode` values (vLLM ≥ 0.17). Only throughput changes a scheduler limit (`vllm/engine/arg_utils.py`);
 * interactivity changes CUDA-graph capture sizes for small batches, which the cost model ignores.
 */
const PERFORMANCE_MODES: readonly string[] = ['balanced', 'interactivity', 'throughput'];

function checkInt(name: string, v: number | undefined, min: number): void {
  if (v !== undefined && (!Number.isInteger(v) || v < min)) {
    throw new Error(`--${name} must be an integer ≥ ${min}, got ${v}`);
  }
}

/**
 * Apply vLLM V1's defaults and checks to user flags.
 * - max_model_len defaults to the model's max_position_embeddings (32768) and may not exceed it;
 *   -1 (`auto`) takes the largest length whose blocks fit in the KV memory, capped at that default
 *   (the batch limits below still use the model's length, as vLLM sets them before it fits the KV cache).
 * - max_num_batched_tokens 2048 / max_num_seqs 256; `--performance-mode throughput` doubles those
 *   defaults (not values the user gave) before the clamps below; chunked prefill, prefix caching on.
 * - With chunked prefill off and no batched value: batched = max(max_model_len, default).
 * - Defaulted values are clamped like vLLM: batched ≤ max_num_seqs·max_model_len, max_num_seqs ≤ batched.
 * - Throws (message names the fix) if chunked prefill is off and batched < max_model_len, if
 *   batched < max_num_seqs, if no memory is left for KV, or if one max_model_len sequence
 *   does not fit in the KV cache (vLLM's startup check; skipped with numGpuBlocksOverride).
 * - num_gpu_blocks = floor(KV bytes / block bytes), KV bytes = device·util − weights − activation reserve,
 *   or `kvCacheMemoryBytes` when given (util ignored), block bytes = 2·L·n_kv·head_dim·2·block_size;
 *   or `numGpuBlocksOverride`.
 * - schedulingPolicy fcfs, reserveFullIsl true unless the flags say otherwise.
 * - async_scheduling on unless `asyncScheduling: false` (vLLM turns it on when nothing is incompatible,
 *   `vllm/config/vllm.py` `VllmConfig.__post_init__`; none of its exceptions apply to this model).
 * - Swap mode (simulator only, V0's `--preemption-mode swap`): numCpuBlocks = floor(swapSpace GiB / block bytes), swapSpace default 4.
 * - staticBatching (simulator only, `--loadlab-static-batching`): default false.
 */
export function resolveEngineConfig(flags: ServerFlags, profile: Profile = DEFAULT_PROFILE): EngineConfig {
  const maxPos = profile.model.maxPositionEmbeddings;
  if (flags.maxModelLen !== -1) checkInt('max-model-len', flags.maxModelLen, 1);
  checkInt('max-num-seqs', flags.maxNumSeqs, 1);
  checkInt('max-num-batched-tokens', flags.maxNumBatchedTokens, 1);
  checkInt('long-prefill-token-threshold', flags.longPrefillTokenThreshold, 0);
  checkInt('num-gpu-blocks-override', flags.numGpuBlocksOverride, 2);
  checkInt('kv-cache-memory-bytes', flags.kvCacheMemoryBytes, 0);
  const blockSize = flags.blockSize ?? V1_DEFAULTS.blockSize;
  if (!BLOCK_SIZES.includes(blockSize)) {
    throw new Error(`--block-size must be one of ${BLOCK_SIZES.join(', ')}, got ${blockSize}`);
  }
  const blockBytes = kvBlockBytes(profile, blockSize);
  const memBlocks = memoryBlocks(flags, profile, blockBytes);
  // _auto_fit_max_model_len: the largest length L with ceil(L/block)·block bytes ≤ KV memory, at most the model's.
  const maxModelLen = flags.maxModelLen === -1 ? Math.min(maxPos, memBlocks * blockSize) : (flags.maxModelLen ?? maxPos);
  if (maxModelLen < 1) {
    throw new Error(
      'cannot fit --max-model-len auto: no KV block fits in the memory left; raise --gpu-memory-utilization or --kv-cache-memory-bytes',
    );
  }
  if (flags.schedulingPolicy !== undefined && !['fcfs', 'priority'].includes(flags.schedulingPolicy)) {
    throw new Error(`--scheduling-policy must be one of fcfs, priority, got ${flags.schedulingPolicy}`);
  }
  if (maxModelLen > maxPos) {
    throw new Error(
      `--max-model-len ${maxModelLen} exceeds the model's max_position_embeddings ${maxPos}; lower --max-model-len to ≤ ${maxPos}`,
    );
  }
  const enableChunkedPrefill = flags.enableChunkedPrefill ?? true;
  // With auto, vLLM sets the batch limits from the model's length (`get_and_verify_max_len`, vllm/config/model.py)
  // and fits max_model_len later, at KV-cache init (`get_kv_cache_configs`).
  const batchLen = flags.maxModelLen === -1 ? maxPos : maxModelLen;
  const { maxNumSeqs, maxNumBatchedTokens } = batchLimits(flags, batchLen, enableChunkedPrefill);
  const numGpuBlocks = flags.numGpuBlocksOverride ?? checkFits(flags, memBlocks, maxModelLen, blockSize);

  const preemptionMode = flags.preemptionMode ?? 'recompute';
  const swapSpace = flags.swapSpace ?? (preemptionMode === 'swap' ? V1_DEFAULTS.swapSpaceGiB : 0);
  if (!(swapSpace >= 0)) throw new Error(`--swap-space must be ≥ 0 GiB, got ${swapSpace}`);
  const numCpuBlocks = preemptionMode === 'swap' ? Math.floor((swapSpace * GiB) / blockBytes) : 0;

  return {
    maxModelLen,
    maxNumSeqs,
    maxNumBatchedTokens,
    enableChunkedPrefill,
    longPrefillTokenThreshold: flags.longPrefillTokenThreshold ?? 0,
    enablePrefixCaching: flags.enablePrefixCaching ?? true,
    blockSize,
    numGpuBlocks,
    preemptionMode,
    numCpuBlocks,
    reserveFullIsl: flags.schedulerReserveFullIsl ?? true,
    schedulingPolicy: flags.schedulingPolicy ?? 'fcfs',
    asyncScheduling: flags.asyncScheduling ?? true,
    staticBatching: flags.loadlabStaticBatching ?? false,
  };
}

/**
 * max_num_seqs and max_num_batched_tokens after vLLM's defaults, `--performance-mode throughput`
 * (doubles the defaults only, `vllm/engine/arg_utils.py`) and clamps; throws when they cannot work together.
 */
function batchLimits(
  flags: ServerFlags,
  maxModelLen: number,
  enableChunkedPrefill: boolean,
): { maxNumSeqs: number; maxNumBatchedTokens: number } {
  const mode = flags.performanceMode ?? 'balanced';
  if (!PERFORMANCE_MODES.includes(mode)) {
    throw new Error(`--performance-mode must be one of ${PERFORMANCE_MODES.join(', ')}, got ${mode}`);
  }
  const scale = mode === 'throughput' ? 2 : 1;
  let maxNumSeqs = flags.maxNumSeqs ?? V1_DEFAULTS.maxNumSeqs * scale;
  let maxNumBatchedTokens = flags.maxNumBatchedTokens ?? V1_DEFAULTS.maxNumBatchedTokens * scale;
  if (flags.maxNumBatchedTokens === undefined) {
    if (!enableChunkedPrefill) maxNumBatchedTokens = Math.max(maxModelLen, maxNumBatchedTokens);
    maxNumBatchedTokens = Math.min(maxNumBatchedTokens, maxNumSeqs * maxModelLen);
  }
  if (flags.maxNumSeqs === undefined) maxNumSeqs = Math.min(maxNumSeqs, maxNumBatchedTokens);

  if (!enableChunkedPrefill && maxNumBatchedTokens < maxModelLen) {
    throw new Error(
      `--max-num-batched-tokens ${maxNumBatchedTokens} is smaller than --max-model-len ${maxModelLen} with chunked prefill off, ` +
        `so longer prompts could never be scheduled; raise --max-num-batched-tokens to ≥ ${maxModelLen}, ` +
        `lower --max-model-len, or enable chunked prefill`,
    );
  }
  if (maxNumBatchedTokens < maxNumSeqs) {
    throw new Error(
      `--max-num-batched-tokens ${maxNumBatchedTokens} must be ≥ --max-num-seqs ${maxNumSeqs}; ` +
        `raise --max-num-batched-tokens or lower --max-num-seqs`,
    );
  }
  return { maxNumSeqs, maxNumBatchedTokens };
}

/**
 * KV blocks the memory holds: `kvCacheMemoryBytes` / block bytes when given (vLLM then skips profiling
 * and ignores --gpu-memory-utilization), else what the profiling run leaves. Throws when no block fits.
 * Deviation: a `kvCacheMemoryBytes` larger than the memory left beside the weights and activations is
 * refused here; vLLM starts and fails with CUDA out of memory when it allocates the cache.
 */
function memoryBlocks(flags: ServerFlags, profile: Profile, blockBytes: number): number {
  const m = profile.model;
  const util = flags.gpuMemoryUtilization ?? V1_DEFAULTS.gpuMemoryUtilization;
  if (!(util > 0 && util <= 1)) {
    throw new Error(`--gpu-memory-utilization must be in (0, 1], got ${util}`);
  }
  const kvBytes = flags.kvCacheMemoryBytes;
  if (kvBytes) {
    const room = profile.gpu.deviceMemoryBytes - m.weightsInVramBytes - m.activationReserveBytes;
    if (kvBytes > room) {
      throw new Error(
        `--kv-cache-memory-bytes ${kvBytes} does not fit beside the weights and activations: ${room} bytes ` +
          `(${(room / GiB).toFixed(2)} GiB) are left on the GPU; lower it to ≤ ${room}`,
      );
    }
    const blocks = Math.floor(kvBytes / blockBytes);
    if (blocks < 1 && flags.numGpuBlocksOverride === undefined) {
      throw new Error(`--kv-cache-memory-bytes ${kvBytes} holds no KV block of ${blockBytes} bytes; raise it to ≥ ${blockBytes}`);
    }
    return blocks;
  }
  const blocks = profiledGpuBlocks(profile, util, blockBytes);
  if (blocks <= 0 && flags.numGpuBlocksOverride === undefined) {
    const need = (m.weightsInVramBytes + m.activationReserveBytes + blockBytes) / profile.gpu.deviceMemoryBytes;
    throw new Error(
      `no memory left for the KV cache at --gpu-memory-utilization ${util}: weights and activations need ` +
        `${((m.weightsInVramBytes + m.activationReserveBytes) / GiB).toFixed(2)} GiB of ` +
        `${(profile.gpu.deviceMemoryBytes / GiB).toFixed(2)} GiB; raise it above ${need.toFixed(3)}`,
    );
  }
  return blocks;
}

/** vLLM's startup check that one max_model_len sequence fits (`_check_enough_kv_cache_memory`); returns the block count. */
function checkFits(flags: ServerFlags, numGpuBlocks: number, maxModelLen: number, blockSize: number): number {
  const blocksPerSeq = Math.ceil(maxModelLen / blockSize);
  if (blocksPerSeq > numGpuBlocks) {
    const fitLen = numGpuBlocks * blockSize;
    const knob = flags.kvCacheMemoryBytes
      ? `--kv-cache-memory-bytes ${flags.kvCacheMemoryBytes}`
      : `--gpu-memory-utilization ${flags.gpuMemoryUtilization ?? V1_DEFAULTS.gpuMemoryUtilization}`;
    throw new Error(
      `one sequence of --max-model-len ${maxModelLen} needs ${blocksPerSeq} KV blocks but only ${numGpuBlocks} fit at ` +
        `${knob} (estimated maximum model length ${fitLen}); ` +
        `raise ${knob.split(' ')[0]}, set --max-model-len ≤ ${fitLen}, or --max-model-len auto`,
    );
  }
  return numGpuBlocks;
}

/** Blocks the profiling run would find: floor((device·util − weights − activation reserve) / blockBytes). May be ≤ 0. */
export function profiledGpuBlocks(profile: Profile, util: number, blockBytes: number): number {
  const m = profile.model;
  const available = profile.gpu.deviceMemoryBytes * util - m.weightsInVramBytes - m.activationReserveBytes;
  return Math.floor(available / blockBytes);
}

/** `GPU KV cache size: N tokens` as vLLM logs it at startup: numGpuBlocks · blockSize. */
export function kvCacheTokens(config: EngineConfig): number {
  return config.numGpuBlocks * config.blockSize;
}

/** `Maximum concurrency for {maxModelLen} tokens per request: X.XXx`: KV tokens / max_model_len. */
export function maxConcurrency(config: EngineConfig): number {
  return kvCacheTokens(config) / config.maxModelLen;
}
