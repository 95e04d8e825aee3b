/**
 * `vllm serve` flags → resolved engine configuration, with vLLM V1's defaults and
 * validation for a GPU under 70 GiB (vllm-surface.md §5, `EngineArgs.get_batch_defaults`,
 * `SchedulerConfig` validation, `kv_cache_utils` block count).
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
  /** Fraction of total device memory for this instance (0.9 before vLLM #38284). */
  gpuMemoryUtilization: 0.92,
  blockSize: 16,
  /** GiB of CPU swap in swap mode (V0's `--swap-space`). */
  swapSpaceGiB: 4,
} as const;

/** Block sizes vLLM's CLI accepts. */
const BLOCK_SIZES = [1, 8, 16, 32, 64, 128];

function checkInt(name: string, v: number | undefined, min: number): void {
  if (v !== undefined && (!Number.isInteger(v) || v < min)) {
    throw new Error(`--${name} must be an integer ≥ ${min}, got ${v}`);
  }
}

/**
 * Apply vLLM V1's defaults and checks to user flags.
 * - max_model_len defaults to the model's max_position_embeddings (32768) and may not exceed it.
 * - max_num_batched_tokens 2048 / max_num_seqs 256; chunked prefill, prefix caching on.
 * - With chunked prefill off and no batched value: batched = max(max_model_len, 2048).
 * - Defaulted values are clamped like vLLM: batched ≤ max_num_seqs·max_model_len, max_num_seqs ≤ batched.
 * - Throws (message names the fix) if chunked prefill is off and batched < max_model_len, if
 *   batched < max_num_seqs, if no memory is left for KV, or if one max_model_len sequence
 *   does not fit in the KV cache (vLLM's startup check; skipped with numGpuBlocksOverride).
 * - num_gpu_blocks = floor((device·util − weights − activation reserve) / block bytes),
 *   block bytes = 2·L·n_kv·head_dim·2·block_size; or `numGpuBlocksOverride`.
 * - async_scheduling on unless `asyncScheduling: false` (vLLM turns it on when nothing is incompatible,
 *   `vllm/config/vllm.py` `VllmConfig.__post_init__`; none of its exceptions apply to this model).
 * - Swap mode (simulator only, V0's `--preemption-mode swap`): numCpuBlocks = floor(swapSpace GiB / block bytes), swapSpace default 4.
 */
export function resolveEngineConfig(flags: ServerFlags, profile: Profile = DEFAULT_PROFILE): EngineConfig {
  const maxPos = profile.model.maxPositionEmbeddings;
  checkInt('max-model-len', flags.maxModelLen, 1);
  checkInt('max-num-seqs', flags.maxNumSeqs, 1);
  checkInt('max-num-batched-tokens', flags.maxNumBatchedTokens, 1);
  checkInt('long-prefill-token-threshold', flags.longPrefillTokenThreshold, 0);
  checkInt('num-gpu-blocks-override', flags.numGpuBlocksOverride, 2);
  const maxModelLen = flags.maxModelLen ?? maxPos;
  if (maxModelLen > maxPos) {
    throw new Error(
      `--max-model-len ${maxModelLen} exceeds the model's max_position_embeddings ${maxPos}; lower --max-model-len to ≤ ${maxPos}`,
    );
  }
  const blockSize = flags.blockSize ?? V1_DEFAULTS.blockSize;
  if (!BLOCK_SIZES.includes(blockSize)) {
    throw new Error(`--block-size must be one of ${BLOCK_SIZES.join(', ')}, got ${blockSize}`);
  }
  const enableChunkedPrefill = flags.enableChunkedPrefill ?? true;

  const { maxNumSeqs, maxNumBatchedTokens } = batchLimits(flags, maxModelLen, enableChunkedPrefill);
  const { numGpuBlocks, blockBytes } = gpuBlocks(flags, profile, maxModelLen, blockSize);

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
    reserveFullIsl: true,
    asyncScheduling: flags.asyncScheduling ?? true,
  };
}

/** max_num_seqs and max_num_batched_tokens after vLLM's defaults and clamps; throws when they cannot work together. */
function batchLimits(
  flags: ServerFlags,
  maxModelLen: number,
  enableChunkedPrefill: boolean,
): { maxNumSeqs: number; maxNumBatchedTokens: number } {
  let maxNumSeqs = flags.maxNumSeqs ?? V1_DEFAULTS.maxNumSeqs;
  let maxNumBatchedTokens = flags.maxNumBatchedTokens ?? V1_DEFAULTS.maxNumBatchedTokens;
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

/** KV blocks on the GPU (profiled, or `numGpuBlocksOverride`) and the bytes of one block; throws when no sequence fits. */
function gpuBlocks(
  flags: ServerFlags,
  profile: Profile,
  maxModelLen: number,
  blockSize: number,
): { numGpuBlocks: number; blockBytes: number } {
  const util = flags.gpuMemoryUtilization ?? V1_DEFAULTS.gpuMemoryUtilization;
  if (!(util > 0 && util <= 1)) {
    throw new Error(`--gpu-memory-utilization must be in (0, 1], got ${util}`);
  }
  const blockBytes = kvBlockBytes(profile, blockSize);
  const profiledBlocks = profiledGpuBlocks(profile, util, blockBytes);
  let numGpuBlocks: number;
  if (flags.numGpuBlocksOverride !== undefined) {
    numGpuBlocks = flags.numGpuBlocksOverride;
  } else {
    if (profiledBlocks <= 0) {
      const need =
        (profile.model.weightsInVramBytes + profile.model.activationReserveBytes + blockBytes) / profile.gpu.deviceMemoryBytes;
      throw new Error(
        `no memory left for the KV cache at --gpu-memory-utilization ${util}: weights and activations need ` +
          `${((profile.model.weightsInVramBytes + profile.model.activationReserveBytes) / GiB).toFixed(2)} GiB of ` +
          `${(profile.gpu.deviceMemoryBytes / GiB).toFixed(2)} GiB; raise it above ${need.toFixed(3)}`,
      );
    }
    numGpuBlocks = profiledBlocks;
    const blocksPerSeq = Math.ceil(maxModelLen / blockSize);
    if (blocksPerSeq > numGpuBlocks) {
      const fitLen = numGpuBlocks * blockSize;
      throw new Error(
        `one sequence of --max-model-len ${maxModelLen} needs ${blocksPerSeq} KV blocks but only ${numGpuBlocks} fit at ` +
          `--gpu-memory-utilization ${util} (estimated maximum model length ${fitLen}); ` +
          `raise --gpu-memory-utilization or set --max-model-len ≤ ${fitLen}`,
      );
    }
  }
  return { numGpuBlocks, blockBytes };
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
