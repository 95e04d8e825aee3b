/**
 * The `vllm serve` vocabulary as types: the engine flags a lesson asks for (`ServerFlags`) and
 * the simulator's fault-injection flags (`FaultSettings`). They live in the vLLM layer so that
 * the flag parser and the real-vLLM launcher never import the simulator; `src/sim/engine/types.ts`
 * and `src/sim/http/faults.ts` re-export them.
 */

/**
 * `vllm serve` flags, camelCase. Undefined means "vLLM's default" (resolved by the engine
 * config from the hardware profile). Parsed and written back out by `src/vllm/flags.ts` and shared by
 * the simulator and the real-vLLM launcher.
 */
export interface ServerFlags {
  servedModelName?: string;
  /** Context length, tokens; -1 = `auto` (the largest length that fits in the KV cache, `vllm/v1/core/kv_cache_utils.py` `_auto_fit_max_model_len`). */
  maxModelLen?: number;
  maxNumSeqs?: number;
  maxNumBatchedTokens?: number;
  enableChunkedPrefill?: boolean;
  longPrefillTokenThreshold?: number;
  gpuMemoryUtilization?: number;
  enablePrefixCaching?: boolean;
  numGpuBlocksOverride?: number;
  blockSize?: number;
  /** Tokens gathered per streamed chunk after the first; the finish is sent at once (vLLM `--stream-interval`, default 1). */
  streamInterval?: number;
  /** `--kv-cache-memory-bytes`: KV cache size in bytes, replacing the gpu_memory_utilization sizing (`vllm/config/cache.py`); 0 = unset. */
  kvCacheMemoryBytes?: number;
  /** `--scheduling-policy`: `fcfs` (default) or `priority` (lower `priority` value first, `vllm/v1/core/sched/request_queue.py`). */
  schedulingPolicy?: 'fcfs' | 'priority';
  /** `--scheduler-reserve-full-isl` / `--no-…`: admit a request only if its whole prompt fits in free KV blocks (default true, `vllm/config/scheduler.py`). */
  schedulerReserveFullIsl?: boolean;
  /** `--performance-mode`: `balanced` (default), `interactivity`, or `throughput` (doubles the default batch limits, `vllm/engine/arg_utils.py`). */
  performanceMode?: 'balanced' | 'interactivity' | 'throughput';
  /** GiB of CPU swap space (simulator swap mode, V0's `--swap-space`). */
  swapSpace?: number;
  /** Simulator only: `swap` reproduces V0's `--preemption-mode swap`; vLLM V1 only recomputes. */
  preemptionMode?: 'recompute' | 'swap';
  /** `--async-scheduling`: schedule step k+1 while step k runs (vLLM default on since v0.14). */
  asyncScheduling?: boolean;
  /**
   * Simulator only, for a demonstration (`--loadlab-static-batching`): static batching, a new batch is admitted
   * only when the running batch is empty. vLLM has no such mode (V1 admits every step, `vllm/v1/core/sched/scheduler.py`).
   */
  loadlabStaticBatching?: boolean;
  seed?: number;
}

/**
 * Fault settings: the `--fault-*` flags, camelCase, and the JSON body of `POST /loadlab/faults`.
 * Fractions are of completion requests, in [0, 1], all together ≤ 1. Undefined = default.
 */
export interface FaultSettings {
  /** Answered HTTP 500 with vLLM's error body. Default 0. */
  http500?: number;
  /** Answered HTTP 503 with vLLM's error body. Default 0. */
  http503?: number;
  /** Connection dropped mid-stream (socket destroyed after `afterChunks` events). Default 0. */
  reset?: number;
  /** vLLM's mid-stream `{"error": …}` event (json.dumps spacing), then `[DONE]`. Default 0. */
  streamError?: number;
  /** Stream stalls for `stallS` after `afterChunks` events, then carries on. Default 0. */
  stall?: number;
  /** Length of a stall, s. Default 5. */
  stallS?: number;
  /** Response headers (the 200) delayed by `slowHeadersS`. Default 0. */
  slowHeaders?: number;
  /** Delay before the headers, s. Default 2. */
  slowHeadersS?: number;
  /** One event's JSON cut in half mid-stream; the stream then carries on. Default 0. */
  malformed?: number;
  /** SSE events sent before a mid-stream fault strikes. Default 2. */
  afterChunks?: number;
  /** The server exits (code 1, a CUDA OOM error on stderr) this many s after it starts listening (after a POST: after the POST). 0 = off (default). */
  exitAfterS?: number;
}
