/**
 * The simulated engine core: requests in (`add`, `abort`), outputs out, stats for `/metrics`.
 * The step loop itself (schedule → execute → update on an injected clock, roofline step cost)
 * is `engine-loop.ts`.
 */
import { StepLoop } from './engine-loop';
import { newSimRequest, type SimRequest } from './engine-request';
import { DEFAULT_PROFILE, type Profile } from './profile';
import { Scheduler } from './scheduler';
import { seededRng } from '../../rng';
import type { EngineClock, EngineConfig, EngineOutput, EngineRequestInput, EngineStats, SimEngine } from './types';

/** Options of `createEngine`. */
export interface EngineOptions {
  config: EngineConfig;
  /** Hardware + model (default RTX 4090 + Qwen2.5-7B GPTQ-Int4). */
  profile?: Profile;
  clock: EngineClock;
  /** Seeds the jitter and the generated-token hashes (default 0). */
  seed?: number;
  /** Relative std-dev of multiplicative step-time noise, clamped to ±3σ (default 0: tails come from batch composition). */
  jitter?: number;
  /**
   * Lateness of a step-end callback beyond which the loop resyncs to the actual time
   * instead of starting the next step at the planned end, ms (default: that step's duration).
   */
  maxLatenessMs?: number;
}

/** `SimEngine` plus introspection for tests, notebooks and the process log. */
export interface SimEngineHandle extends SimEngine {
  /** Times the loop gave up on the planned schedule because a step ended too late. */
  readonly resyncs: number;
  /** The scheduler (queues, KV pool) — read-only use. */
  readonly scheduler: Scheduler;
}

/**
 * Create an engine. Requests queue on `add`; an idle engine sleeps until a request arrives;
 * a request that arrives mid-step waits for the next `schedule()`: at the end of the running
 * step, into the step after it with `config.asyncScheduling` (vLLM's default), else into the
 * next step (see engine-loop.ts). The next step starts at the previous step's PLANNED end (drift
 * correction), unless the callback ran more than `maxLatenessMs` late (then it resyncs).
 * A request that can never fit in the KV cache (it outgrew it while decoding, only possible
 * with a small numGpuBlocksOverride) ends with finishReason 'abort' and newTokens 0.
 * Throws on misuse: duplicate id, empty prompt, prompt ≥ maxModelLen, prompt larger than the
 * whole KV cache, add after close. `stats().waiting` counts swapped requests too (swap mode).
 * An exception thrown by an `onOutput`/`onStep` callback is rethrown after the step's
 * bookkeeping is done and the next step is planned, so the loop keeps running.
 */
export function createEngine(opts: EngineOptions): SimEngineHandle {
  const { config, clock } = opts;
  const seed = opts.seed ?? 0;
  const sched = new Scheduler(config);
  const byId = new Map<string, SimRequest>();
  const loop = new StepLoop({
    config,
    profile: opts.profile ?? DEFAULT_PROFILE,
    clock,
    sched,
    byId,
    jitter: opts.jitter ?? 0,
    rng: seededRng(seed ^ 0x5eed),
    ...(opts.maxLatenessMs !== undefined ? { maxLatenessMs: opts.maxLatenessMs } : {}),
  });
  let closed = false;
  let salt = Math.imul(seed, 0x9e3779b1);

  function add(input: EngineRequestInput, onOutput: (out: EngineOutput) => void): void {
    if (closed) throw new Error('engine is closed; create a new engine to add requests');
    if (byId.has(input.id)) throw new Error(`request id ${input.id} is already in the engine; ids must be unique`);
    checkPromptFits(input, config);
    salt = (salt + 1) | 0;
    const r = newSimRequest(input, clock.now(), salt, onOutput);
    byId.set(input.id, r);
    sched.add(r);
    loop.wake();
  }

  function abort(id: string): void {
    const r = byId.get(id);
    if (!r) return;
    byId.delete(id);
    sched.abort(r);
  }

  return {
    config,
    scheduler: sched,
    get resyncs() {
      return loop.resyncs;
    },
    add,
    abort,
    stats: () => engineStats(sched, loop.steps, loop.resyncs),
    onStep(fn) {
      loop.stepSubs.push(fn);
    },
    betweenSteps: (fn) => loop.betweenSteps(fn),
    runDue: () => loop.runDue(),
    close() {
      closed = true;
      loop.close();
    },
  };
}

/** Throws unless the prompt is non-empty, leaves room under max_model_len and fits the whole KV cache. */
function checkPromptFits(input: EngineRequestInput, config: EngineConfig): void {
  const p = input.promptTokenIds.length;
  if (p < 1) throw new Error(`request ${input.id} has an empty prompt; send at least one token`);
  if (p >= config.maxModelLen) {
    throw new Error(`request ${input.id}: prompt of ${p} tokens leaves no room under max_model_len ${config.maxModelLen}`);
  }
  if (Math.ceil(p / config.blockSize) > config.numGpuBlocks - 1) {
    throw new Error(
      `request ${input.id}: prompt of ${p} tokens exceeds the KV cache (${(config.numGpuBlocks - 1) * config.blockSize} tokens); ` +
        `raise --num-gpu-blocks-override / --gpu-memory-utilization or shorten the prompt`,
    );
  }
}

/** The engine's counters and gauges now (`waiting` counts swapped requests too). */
function engineStats(sched: Scheduler, steps: number, resyncs: number): EngineStats {
  const kv = sched.kv;
  return {
    running: sched.running.length,
    waiting: sched.waiting.size + sched.swapped.size,
    kvUsage: kv.usage(),
    numPreemptions: sched.numPreemptions,
    promptTokens: sched.promptTokens,
    generationTokens: sched.generationTokens,
    prefixCacheQueries: kv.prefixQueries,
    prefixCacheHits: kv.prefixHits,
    steps,
    resyncs,
    swapOutBlocks: kv.swapOutBlocks,
    swapInBlocks: kv.swapInBlocks,
    swapped: sched.swapped.size,
    cpuKvUsage: sched.config.numCpuBlocks > 0 ? 1 - kv.cpuFree / sched.config.numCpuBlocks : 0,
  };
}
