/**
 * The flags table: every `vllm serve` flag the simulator understands, one row per flag, with
 * its type, range, help text, whether real vLLM accepts it and where its value lands.
 */
import type { FaultSettings, ServerFlags } from './flag-types';

/** The model the lessons serve (positional `vllm serve <model>`, and the default served name). */
export const DEFAULT_MODEL = 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4';

/** Keys a flag can set: a `ServerFlags` field or a field of `ServeArgs` itself. */
type FlagKey =
  | keyof ServerFlags
  | 'host'
  | 'port'
  | 'model'
  | 'statsIntervalS'
  | 'enablePromptTokensDetails'
  | 'enableForceIncludeUsage'
  | 'vllmVersion'
  | keyof FaultSettings;

/** One row of the flags table. */
export interface FlagSpec {
  key: FlagKey;
  /** CLI name, e.g. `--max-num-batched-tokens`. */
  cli: string;
  /** `int` and `number` take a value; `bool` has `--x`/`--no-x`; `enum` takes one of `values`. */
  type: 'int' | 'number' | 'bool' | 'enum' | 'string';
  values?: readonly string[];
  /** Smallest allowed value (numbers). */
  min?: number;
  max?: number;
  help: string;
  /** Real vLLM (V1, ~0.19) accepts it; false = simulator only (dropped by `toServeArgs(…, {target:'vllm'})`). */
  vllm: boolean;
  /**
   * Real vLLM V0 (0.6–0.10) honours it although V1 does not (`--swap-space`, `--preemption-mode`:
   * V0's `vllm/core/scheduler.py` `_preempt`; V1 removed them): kept by `toServeArgs(…, {target:'vllm-v0'})`.
   */
  v0?: boolean;
  /** Where the value lands: `flags` (ServerFlags), the top level of `ServeArgs`, or `ServeArgs.faults`. */
  into: 'flags' | 'args' | 'faults';
}

/** The flags table: the single description of every flag the simulator understands. */
// biome-ignore format: one flag per row reads as a table
export const SERVE_FLAGS: readonly FlagSpec[] = [
  { key: 'host', cli: '--host', type: 'string', vllm: true, into: 'args', help: 'Bind address (default 127.0.0.1: loopback only).' },
  { key: 'port', cli: '--port', type: 'int', min: 0, max: 65535, vllm: true, into: 'args', help: 'TCP port (default 8000; 0 = pick a free port).' },
  { key: 'model', cli: '--model', type: 'string', vllm: true, into: 'args', help: `Model path (same as the positional argument; default ${DEFAULT_MODEL}).` },
  { key: 'servedModelName', cli: '--served-model-name', type: 'string', vllm: true, into: 'flags', help: 'Name clients send as "model" (default: the model path).' },
  { key: 'maxModelLen', cli: '--max-model-len', type: 'int', min: 1, vllm: true, into: 'flags', help: 'Context length, prompt + output tokens; accepts 1k (=1000), 1K (=1024), 25.6k, and -1/auto (the largest that fits in the KV cache).' },
  { key: 'maxNumSeqs', cli: '--max-num-seqs', type: 'int', min: 1, vllm: true, into: 'flags', help: 'Most requests in the running batch (default 256 on a 4090).' },
  { key: 'maxNumBatchedTokens', cli: '--max-num-batched-tokens', type: 'int', min: 1, vllm: true, into: 'flags', help: 'Token budget per engine step (default 2048 on a 4090).' },
  { key: 'enableChunkedPrefill', cli: '--enable-chunked-prefill', type: 'bool', vllm: true, into: 'flags', help: 'Split long prompts across steps (V1 default on).' },
  { key: 'longPrefillTokenThreshold', cli: '--long-prefill-token-threshold', type: 'int', min: 0, vllm: true, into: 'flags', help: 'Cap on one request\'s prefill chunk per step (default 0 = no cap).' },
  { key: 'gpuMemoryUtilization', cli: '--gpu-memory-utilization', type: 'number', min: 0.01, max: 1, vllm: true, into: 'flags', help: 'Fraction of GPU memory vLLM may use; sets the KV cache size (default 0.9 in vLLM 0.19; 0.92 from 2026-04).' },
  { key: 'enablePrefixCaching', cli: '--enable-prefix-caching', type: 'bool', vllm: true, into: 'flags', help: 'Reuse KV blocks of identical prompt prefixes (V1 default on).' },
  { key: 'numGpuBlocksOverride', cli: '--num-gpu-blocks-override', type: 'int', min: 2, vllm: true, into: 'flags', help: 'Force the number of KV blocks (to provoke preemption).' },
  { key: 'kvCacheMemoryBytes', cli: '--kv-cache-memory-bytes', type: 'int', min: 0, vllm: true, into: 'flags', help: 'KV cache size in bytes, ignoring --gpu-memory-utilization; accepts 4G (=4·2^30), 4g (=4·10^9) (default: profiled).' },
  { key: 'schedulingPolicy', cli: '--scheduling-policy', type: 'enum', values: ['fcfs', 'priority'], vllm: true, into: 'flags', help: 'fcfs (default) or priority: lowest request "priority" first, preempting the worst priority, newest first.' },
  { key: 'schedulerReserveFullIsl', cli: '--scheduler-reserve-full-isl', type: 'bool', vllm: true, into: 'flags', help: 'Admit a request only if its whole prompt fits in free KV blocks (default on).' },
  { key: 'performanceMode', cli: '--performance-mode', type: 'enum', values: ['balanced', 'interactivity', 'throughput'], vllm: true, into: 'flags', help: 'balanced (default), interactivity, or throughput (doubles the default batched tokens and max seqs: 4096/512 on a 4090).' },
  { key: 'blockSize', cli: '--block-size', type: 'int', min: 1, vllm: true, into: 'flags', help: 'Tokens per KV block (default 16).' },
  { key: 'streamInterval', cli: '--stream-interval', type: 'int', min: 1, vllm: true, into: 'flags', help: 'Tokens per streamed chunk after the first; the first token and the finish go at once (default 1).' },
  { key: 'asyncScheduling', cli: '--async-scheduling', type: 'bool', vllm: true, into: 'flags', help: 'Schedule the next step while the current one runs (default on since vLLM 0.14): arrivals wait one more step.' },
  { key: 'enablePromptTokensDetails', cli: '--enable-prompt-tokens-details', type: 'bool', vllm: true, into: 'args', help: 'Report usage.prompt_tokens_details.cached_tokens (default off).' },
  { key: 'enableForceIncludeUsage', cli: '--enable-force-include-usage', type: 'bool', vllm: true, into: 'args', help: 'Send usage on every stream, continuously (default off).' },
  { key: 'swapSpace', cli: '--swap-space', type: 'number', min: 0, vllm: false, v0: true, into: 'flags', help: 'GiB of CPU swap for --preemption-mode swap (V0 only; removed from vLLM in 2026-03).' },
  { key: 'preemptionMode', cli: '--preemption-mode', type: 'enum', values: ['recompute', 'swap'], vllm: false, v0: true, into: 'flags', help: 'recompute = vLLM V1 (default); swap = V0\'s --preemption-mode swap, for comparison.' },
  { key: 'loadlabStaticBatching', cli: '--loadlab-static-batching', type: 'bool', vllm: false, into: 'flags', help: 'Demonstration only: static batching, a new batch is admitted only when the running batch is empty (vLLM batches continuously and has no such mode).' },
  { key: 'seed', cli: '--seed', type: 'int', vllm: false, into: 'flags', help: 'Seed of the simulator\'s output lengths and text (default 0).' },
  { key: 'vllmVersion', cli: '--vllm-version', type: 'string', vllm: false, into: 'args', help: 'vLLM release whose HTTP surface and /metrics names to emulate: 0.6.x (V0), 0.10.x or 0.19.x (default 0.19.0).' },
  { key: 'statsIntervalS', cli: '--stats-interval-s', type: 'number', min: 0, vllm: false, into: 'args', help: 'Seconds between "Engine 000:" stats lines (default 10; 0 = off).' },
  // Fault injection (src/sim/http/faults.ts). Fractions are of completion requests, seeded by --seed, together ≤ 1.
  { key: 'http500', cli: '--fault-http-500', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction of completion requests answered HTTP 500 with vLLM\'s error body (default 0).' },
  { key: 'http503', cli: '--fault-http-503', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction answered HTTP 503 with vLLM\'s error body (default 0).' },
  { key: 'reset', cli: '--fault-reset', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction whose connection is destroyed mid-stream, after --fault-after-chunks events (default 0).' },
  { key: 'streamError', cli: '--fault-stream-error', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction that get vLLM\'s mid-stream error event, then [DONE] (default 0).' },
  { key: 'stall', cli: '--fault-stall', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction whose stream stalls for --fault-stall-s mid-stream (default 0).' },
  { key: 'stallS', cli: '--fault-stall-s', type: 'number', min: 0, vllm: false, into: 'faults', help: 'Length of a stall, seconds (default 5).' },
  { key: 'slowHeaders', cli: '--fault-slow-headers', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction whose response headers are delayed by --fault-slow-headers-s (default 0).' },
  { key: 'slowHeadersS', cli: '--fault-slow-headers-s', type: 'number', min: 0, vllm: false, into: 'faults', help: 'Delay before the response headers, seconds (default 2).' },
  { key: 'malformed', cli: '--fault-malformed', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction with one malformed JSON event mid-stream (default 0).' },
  { key: 'afterChunks', cli: '--fault-after-chunks', type: 'int', min: 0, vllm: false, into: 'faults', help: 'SSE events sent before a mid-stream fault strikes (default 2).' },
  { key: 'exitAfterS', cli: '--fault-exit-after-s', type: 'number', min: 0, vllm: false, into: 'faults', help: 'Exit with code 1 and a CUDA out-of-memory error this many seconds after listening, as a crashing vLLM (default 0 = never).' },
];
