/**
 * Contracts between the simulator's engine (scheduler, KV blocks, cost model, step loop)
 * and its HTTP surface. The engine knows token counts and ids, never HTTP or text.
 */

/** Why a request stopped, as vLLM reports it in `finish_reason`. */
export type FinishReason = 'stop' | 'length' | 'abort';

/**
 * Engine configuration: the `vllm serve` flags that change engine behaviour, resolved
 * (no undefined left). Built by `resolveEngineConfig` from user flags plus the profile.
 */
export interface EngineConfig {
  maxModelLen: number;
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  enableChunkedPrefill: boolean;
  /** 0 = no per-request cap on a prefill chunk. */
  longPrefillTokenThreshold: number;
  enablePrefixCaching: boolean;
  blockSize: number;
  numGpuBlocks: number;
  /** `recompute` is vLLM V1 (the only mode it has); `swap` is V0's swap preemption (V0 used it for n > 1 or when `--preemption-mode swap` was set; single-sequence requests recomputed by default, `vllm/core/scheduler.py` `_preempt`). */
  preemptionMode: 'recompute' | 'swap';
  /** CPU swap space in blocks (swap mode only). */
  numCpuBlocks: number;
  /** Admission requires the whole uncached prompt to fit in free blocks (V1 default true, `--no-scheduler-reserve-full-isl` turns it off). */
  reserveFullIsl: boolean;
  /**
   * `--scheduling-policy`: `fcfs` (default; undefined means fcfs) or `priority`: WAITING ordered by
   * (priority, arrival) and the preemption victim is the worst priority, newest first (`vllm/v1/core/sched/scheduler.py`).
   */
  schedulingPolicy?: 'fcfs' | 'priority';
  /**
   * `--async-scheduling` (default true, as vLLM ≥ 0.14, `vllm/config/vllm.py`): step k+1 is scheduled
   * when step k starts, so a request arriving during step k runs in step k+2 (engine-loop.ts).
   */
  asyncScheduling: boolean;
  /**
   * Simulator only (`--loadlab-static-batching`, a demonstration; undefined = false): a new batch is admitted
   * only when RUNNING is empty, from the requests that had arrived by then (scheduler.ts). vLLM has no such mode.
   */
  staticBatching?: boolean;
}

/** One request as the engine sees it. */
export interface EngineRequestInput {
  id: string;
  promptTokenIds: number[];
  /** Output cap after vLLM's rules (already ≤ maxModelLen − prompt). */
  maxTokens: number;
  /** EOS is masked until this many tokens. */
  minTokens: number;
  /**
   * How many tokens the "model" would produce before EOS if nothing stopped it
   * (drawn by the caller from a seeded distribution). Ignored with ignoreEos.
   */
  naturalLength: number;
  ignoreEos: boolean;
  /** The request's `priority` (lower runs first under `--scheduling-policy priority`; ignored under fcfs). Default 0. */
  priority?: number;
}

/** What one engine step produced for one request. */
export interface EngineOutput {
  /** Tokens produced this step (1 in normal decoding; 0 never emitted). */
  newTokens: number;
  /** Output tokens so far, this step included. */
  outputTokens: number;
  /** Set on the step that finishes the request. */
  finishReason?: FinishReason;
  /** Engine clock time of the step end, ms. */
  timeMs: number;
  /** Prompt tokens served from the prefix cache (set on the first output). */
  cachedTokens?: number;
  /** Engine clock time of the step that first scheduled the request, ms (set on the first output; vLLM's `scheduled_ts`). */
  scheduledMs?: number;
}

/** Counters and gauges the HTTP surface exports on `/metrics` and in the stats line. */
export interface EngineStats {
  running: number;
  waiting: number;
  /** 1 − free/(numGpuBlocks − 1), as vLLM. 0..1 */
  kvUsage: number;
  numPreemptions: number;
  promptTokens: number;
  generationTokens: number;
  prefixCacheQueries: number;
  prefixCacheHits: number;
  steps: number;
  /** Steps that ended later than their own duration, after which the next step started late (a gap in every stream's ITL). */
  resyncs: number;
  /** Blocks swapped out/in (swap mode). */
  swapOutBlocks: number;
  swapInBlocks: number;
  /** Requests swapped out to CPU now (swap mode; counted in `waiting` too). */
  swapped: number;
  /** CPU swap space in use, 0..1 (swap mode; 0 without CPU blocks). */
  cpuKvUsage: number;
}

/** A clock the engine runs on: real time in the server, virtual time in tests. */
export interface EngineClock {
  /** Current time, ms. */
  now(): number;
  /** Run `fn` at absolute time `atMs` (or as soon as possible if that has passed). */
  at(atMs: number, fn: () => void): { cancel(): void };
  /**
   * Inside an `at` callback: how long past its time the thread was still asleep, ms, a lower bound (the spinning
   * clock's, src/sim/engine/spin-clock.ts); absent where the clock cannot tell.
   */
  sleptLateMs?(): number;
}

/** What one engine step did, reported after the step ends (for metrics and lateness). */
export interface StepInfo {
  /** Step number, from 1. */
  step: number;
  /** When the step started and when the cost model says it ends, engine clock ms. */
  startMs: number;
  endMs: number;
  /** How late the step-end callback actually ran: actual − endMs (≥ 0 in real time; 0 on a virtual clock). */
  latenessMs: number;
  /** Of `latenessMs`, how long the thread was still asleep past `endMs` ({@link EngineClock.sleptLateMs}); absent where unknown. */
  sleptLateMs?: number;
  /** Tokens scheduled this step (decodes + prefill chunks). */
  scheduledTokens: number;
  numDecodes: number;
  prefillTokens: number;
  /** Prompt tokens of requests whose prefill completed this step + tokens generated (vLLM's iteration_tokens). */
  iterationTokens: number;
  running: number;
  waiting: number;
  preemptions: number;
}

/** `vllm serve` flags: declared in src/vllm/flag-types.ts (the vLLM layer), re-exported here. */
export type { ServerFlags } from '../../vllm/flag-types';

/** The engine as the HTTP surface uses it. Created by `createEngine` in `engine.ts`. */
export interface SimEngine {
  readonly config: EngineConfig;
  /** Queue a request; `onOutput` is called once per step that produced tokens for it. */
  add(req: EngineRequestInput, onOutput: (out: EngineOutput) => void): void;
  /** Drop a request (client went away). Its blocks are freed; no further output. */
  abort(id: string): void;
  stats(): EngineStats;
  /** Subscribe to per-step reports. */
  onStep(fn: (info: StepInfo) => void): void;
  /** Run `fn` at once when idle, else just after the step in flight (work that must not make a step late). */
  betweenSteps(fn: () => void): void;
  /** End the step in flight now if its time has come (call before a slice of other work on the engine's thread). */
  runDue(): void;
  /** Stop the step loop. */
  close(): void;
}
