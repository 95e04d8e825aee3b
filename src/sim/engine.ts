/**
 * The simulated engine core: ONE global step loop (vLLM V1's schedule → execute → update)
 * on an injected clock. Each step's duration comes from the roofline cost model; its
 * results are applied at the absolute time stepStart + duration, when every request that
 * produced a token gets its output (all at the same step boundary).
 */
import { stepTimeMs } from './cost';
import { newSimRequest, type SimRequest } from './engine-request';
import { DEFAULT_PROFILE, kvBlockBytes, type Profile } from './profile';
import { Scheduler, type StepPlan } from './scheduler';
import { randNormal, seededRng } from '../rng';
import type {
  EngineClock,
  EngineConfig,
  EngineOutput,
  EngineRequestInput,
  EngineStats,
  SimEngine,
  StepInfo,
} from './types';

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
 * Create an engine. Requests queue on `add` and are scheduled at the next step start; an
 * idle engine sleeps until a request arrives; a request that arrives mid-step waits for the
 * next `schedule()`. The next step starts at the previous step's PLANNED end (drift
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
  const profile = opts.profile ?? DEFAULT_PROFILE;
  const seed = opts.seed ?? 0;
  const jitter = opts.jitter ?? 0;
  const rng = seededRng(seed ^ 0x5eed);
  const blockBytes = kvBlockBytes(profile, config.blockSize);
  const copiesPerBlock = profile.perf.swapCopiesPerBlock;
  const sched = new Scheduler(config);
  const byId = new Map<string, SimRequest>();
  const stepSubs: ((info: StepInfo) => void)[] = [];
  const outReqs: SimRequest[] = [];
  const outs: EngineOutput[] = [];
  let timer: { cancel(): void } | null = null;
  let idle = true;
  let closed = false;
  let steps = 0;
  let resyncs = 0;
  let salt = Math.imul(seed, 0x9e3779b1);

  function startStep(startMs: number): void {
    timer = null;
    const stuck: SimRequest[] = [];
    for (;;) {
      const plan = sched.schedule(startMs);
      if (plan.scheduled.length > 0) {
        runStep(startMs, plan);
        break;
      }
      if (plan.preemptions > 0) continue; // everything running was preempted; admit again now
      const head = sched.swapped.peekFront() ?? sched.waiting.peekFront();
      if (!head) {
        idle = true;
        break;
      }
      if (head.arrivalMs > startMs) {
        startMs = head.arrivalMs; // already ≤ now: it arrived while the last step ran
        continue;
      }
      // Nothing runs and the head still cannot be placed: it never will.
      sched.abort(head);
      byId.delete(head.id);
      stuck.push(head);
    }
    for (const r of stuck) {
      r.onOutput({ newTokens: 0, outputTokens: r.outputTokens, finishReason: 'abort', timeMs: clock.now() });
    }
  }

  function runStep(startMs: number, plan: StepPlan): void {
    const batch = plan.batch;
    batch.swapBytes = plan.swapBlocks * blockBytes;
    batch.swapCopies = plan.swapBlocks * copiesPerBlock;
    let durationMs = stepTimeMs(batch, profile);
    if (jitter > 0) durationMs *= Math.max(0.1, 1 + jitter * Math.max(-3, Math.min(3, randNormal(rng))));
    const endMs = startMs + durationMs;
    const info: StepInfo = {
      step: ++steps,
      startMs,
      endMs,
      latenessMs: 0,
      scheduledTokens: plan.scheduledTokens,
      numDecodes: batch.decodes,
      prefillTokens: batch.prefillTokens,
      iterationTokens: 0,
      running: 0,
      waiting: 0,
      preemptions: plan.preemptions,
    };
    timer = clock.at(endMs, () => finishStep(info, durationMs));
  }

  function finishStep(info: StepInfo, durationMs: number): void {
    timer = null;
    const now = clock.now();
    info.latenessMs = Math.max(0, now - info.endMs);
    outReqs.length = 0;
    outs.length = 0;
    info.iterationTokens = sched.update(info.endMs, outReqs, outs);
    info.running = sched.running.length;
    info.waiting = sched.waiting.size + sched.swapped.size;
    let error: unknown;
    for (let k = 0; k < outReqs.length; k++) {
      const r = outReqs[k];
      const out = outs[k];
      if (out.finishReason) byId.delete(r.id);
      else if (r.status === 'finished') continue; // aborted by an earlier callback
      try {
        r.onOutput(out);
      } catch (e) {
        error ??= e;
      }
    }
    for (const fn of stepSubs) {
      try {
        fn(info);
      } catch (e) {
        error ??= e;
      }
    }
    if (!closed) {
      let next = info.endMs;
      if (info.latenessMs > (opts.maxLatenessMs ?? durationMs)) {
        resyncs++;
        next = now;
      }
      startStep(next);
    }
    if (error !== undefined) throw error;
  }

  function add(input: EngineRequestInput, onOutput: (out: EngineOutput) => void): void {
    if (closed) throw new Error('engine is closed; create a new engine to add requests');
    if (byId.has(input.id)) throw new Error(`request id ${input.id} is already in the engine; ids must be unique`);
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
    salt = (salt + 1) | 0;
    const r = newSimRequest(input, clock.now(), salt, onOutput);
    byId.set(input.id, r);
    sched.add(r);
    if (idle) {
      idle = false;
      timer = clock.at(clock.now(), () => startStep(clock.now()));
    }
  }

  function abort(id: string): void {
    const r = byId.get(id);
    if (!r) return;
    byId.delete(id);
    sched.abort(r);
  }

  function stats(): EngineStats {
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
      swapOutBlocks: kv.swapOutBlocks,
      swapInBlocks: kv.swapInBlocks,
    };
  }

  return {
    config,
    scheduler: sched,
    get resyncs() {
      return resyncs;
    },
    add,
    abort,
    stats,
    onStep(fn) {
      stepSubs.push(fn);
    },
    close() {
      closed = true;
      timer?.cancel();
      timer = null;
    },
  };
}
