/**
 * Shared vocabulary of LoadLab: what a request is, what a measured request looks like,
 * and what a run summary holds. Units are in the names (`Ms`, `Tokens`, `PerSec`).
 *
 * Every `...Ms` timestamp on a record is milliseconds on ONE monotonic clock per run
 * (`performance.now()` minus the run's origin, so the first request starts near 0).
 * Server-metric and GPU timelines of the same run use the same origin.
 */

/** Which OpenAI-compatible endpoint a request uses. */
export type Api = 'chat' | 'completions';

/** A chat message, as the OpenAI / vLLM chat API takes it. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * One request of a workload, before it is sent.
 * `prompt` is for `/v1/completions`; `messages` for `/v1/chat/completions`.
 */
export interface RequestSpec {
  /** Endpoint; default `'chat'`. */
  api?: Api;
  /** Chat messages (chat API). */
  messages?: ChatMessage[];
  /** Prompt text or token ids (completions API). */
  prompt?: string | number[];
  /** Output cap, passed through as `max_tokens`. */
  maxTokens?: number;
  /**
   * Ask for exactly `maxTokens` output tokens: sends vLLM's `ignore_eos: true` and
   * `min_tokens: maxTokens`. Default false.
   */
  fixedOutput?: boolean;
  /** Sampling temperature; omitted (server default) when undefined. */
  temperature?: number;
  /** Free label carried into the record, e.g. `'short'` or `'long'`. */
  tag?: string;
  /** Extra JSON fields merged into the request body (vLLM extras such as `top_k`). */
  extraBody?: Record<string, unknown>;
}

/**
 * Stable error codes: a failed request becomes a record with one of these.
 * - `http_4xx` / `http_5xx`: non-2xx status (vLLM error body in `message`)
 * - `stream_error`: an `{"error": ...}` event inside a 200 stream
 * - `connection_refused`: nothing listening / connect failed
 * - `connection_reset`: the socket closed or reset mid-response
 * - `timeout`: the whole-request timeout fired
 * - `idle_timeout`: no bytes arrived for the idle-stream timeout
 * - `parse`: malformed SSE or JSON
 * - `incomplete`: the stream ended without `data: [DONE]`
 * - `aborted`: the run was cancelled (AbortSignal, SIGINT)
 */
export type ErrorCode =
  | 'http_4xx'
  | 'http_5xx'
  | 'stream_error'
  | 'connection_refused'
  | 'connection_reset'
  | 'timeout'
  | 'idle_timeout'
  | 'parse'
  | 'incomplete'
  | 'aborted';

/** All error codes, in a fixed order (for tables). */
export const ERROR_CODES: readonly ErrorCode[] = [
  'http_4xx',
  'http_5xx',
  'stream_error',
  'connection_refused',
  'connection_reset',
  'timeout',
  'idle_timeout',
  'parse',
  'incomplete',
  'aborted',
];

/** What went wrong with one request. */
export interface RequestError {
  code: ErrorCode;
  message: string;
}

/**
 * Everything measured about one request. Raw stamps first, derived metrics after.
 * Times are ms on the run's monotonic clock (see the module comment).
 */
export interface RequestRecord {
  /** Position in the workload (0-based, warm-up included). */
  index: number;
  /** The `x-request-id` sent. */
  requestId: string;
  /** Warm-up requests are recorded but left out of statistics. */
  warmup: boolean;
  ok: boolean;
  api: Api;
  tag?: string;
  /** Conversation id and 0-based turn, on the records of a multi-turn (sessions) run only. */
  session?: string;
  turn?: number;
  /** HTTP status, when a response arrived. */
  status?: number;
  /** When the load shape wanted the request sent. */
  intendedStartMs: number;
  /** When the request was actually handed to the socket. */
  startMs: number;
  /** Response headers arrived. */
  headersMs?: number;
  /** First chunk that has `choices` (for chat this is the role-only chunk). */
  firstChunkMs?: number;
  /** First chunk carrying a token: non-empty `content`/`text` (or a rising usage count). */
  firstTokenMs?: number;
  /** Arrival of every token chunk, first included. */
  chunkMs: number[];
  /** Tokens carried by each token chunk (continuous usage deltas when sent, else 1). */
  chunkTokens: number[];
  /** Stream finished (`[DONE]`, error, or close). */
  endMs: number;
  /** From the server's `usage`. */
  promptTokens?: number;
  /** From the server's `usage` (else the sum of `chunkTokens`). */
  outputTokens?: number;
  /** `usage.prompt_tokens_details.cached_tokens` when the server reports it. */
  cachedTokens?: number;
  finishReason?: string;
  error?: RequestError;

  // ---- derived (see src/client/metrics.ts for the exact definitions) ----
  /** firstTokenMs − startMs. */
  ttftMs?: number;
  /** last token chunk − startMs (vLLM bench "latency"). */
  e2eMs?: number;
  /** (e2eMs − ttftMs)/(outputTokens − 1); undefined below 2 output tokens. */
  tpotMs?: number;
  /** Gaps between consecutive token chunks (one per chunk after the first). */
  itlMs: number[];
  /** startMs − intendedStartMs: time the request waited inside the client. */
  queueMs: number;
  /** firstTokenMs − intendedStartMs: TTFT as the user who wanted to send at intendedStart saw it. */
  ttftFromIntendedMs?: number;
}

/** A distribution summary. With n = 0 every other field is NaN (null on disk). */
export interface Distribution {
  n: number;
  mean: number;
  std: number;
  min: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  max: number;
}

/** Turn `turn` (0-based) of a multi-turn run: requests sent (a stopped conversation never sends the rest), TTFT of ok ones. */
export interface TurnSummary {
  turn: number;
  requests: number;
  completed: number;
  failed: number;
  ttftMs: Distribution;
}

/** Service-level objectives for goodput, in ms, as `vllm bench serve --goodput`. */
export interface Slo {
  ttftMs?: number;
  tpotMs?: number;
  e2eMs?: number;
}

/** Summary of a run's measured (non-warm-up) requests. */
export interface RunSummary {
  /** Measured requests (warm-up excluded). */
  requests: number;
  completed: number;
  failed: number;
  /** Count per error code, for failed measured requests. */
  errors: Partial<Record<ErrorCode, number>>;
  /** Measured window: earliest intended start to latest end, in seconds. */
  durationS: number;
  requestsPerSec: number;
  outputTokensPerSec: number;
  totalTokensPerSec: number;
  totalPromptTokens: number;
  totalOutputTokens: number;
  ttftMs: Distribution;
  tpotMs: Distribution;
  itlMs: Distribution;
  e2eMs: Distribution;
  queueMs: Distribution;
  ttftFromIntendedMs: Distribution;
  /** Per-turn TTFT, turn 0 first; only when records carry a `turn` (multi-turn runs). */
  byTurn?: TurnSummary[];
  /** Present when SLOs were given. */
  goodput?: { slo: Slo; good: number; requestsPerSec: number };
  /**
   * Was the measurer the bottleneck? `clientBound`: the load generator's event loop or CPU was
   * saturated, so its timings include Node's own delay. `simBehind`: the simulator fell behind
   * real time. `warnings` says so in plain words, with what to do. `clientStall`: who made the loop late.
   */
  health?: import('./client-stall').RunHealth;
}

/**
 * One scrape of the server's `/metrics`, on the run's clock (`tMs` like the records).
 * Field names are vLLM V1's series; older names (`gpu_cache_usage_perc`) are mapped onto them.
 * Written one per line to `metrics.jsonl` in the run folder.
 */
export interface MetricsSample {
  tMs: number;
  /** `vllm:num_requests_running` */
  running?: number;
  /** `vllm:num_requests_waiting` */
  waiting?: number;
  /** V0 only: `vllm:num_requests_swapped` (requests preempted to CPU swap; V1 has no swap) */
  swapped?: number;
  /** `vllm:kv_cache_usage_perc` (0..1) */
  kvUsage?: number;
  /** `vllm:num_preemptions_total` (cumulative) */
  preemptionsTotal?: number;
  /** `vllm:prompt_tokens_total` (cumulative) */
  promptTokensTotal?: number;
  /** `vllm:generation_tokens_total` (cumulative) */
  generationTokensTotal?: number;
  /** `vllm:prefix_cache_queries_total` (cumulative, tokens) */
  prefixQueriesTotal?: number;
  /** `vllm:prefix_cache_hits_total` (cumulative, tokens) */
  prefixHitsTotal?: number;
  /** Simulator only: p99 step lateness over the scrape interval, ms. */
  simLatenessMs?: number;
}

/** One `nvidia-smi` sample, on the run's clock. Written to `gpu.jsonl`. Never fabricated. */
export interface GpuSample {
  tMs: number;
  gpu: number;
  utilPct?: number;
  memUsedMiB?: number;
  memTotalMiB?: number;
  powerW?: number;
  /** PCIe throughput from `nvidia-smi dmon -s t`, MB/s. */
  pcieRxMBps?: number;
  pcieTxMBps?: number;
}
