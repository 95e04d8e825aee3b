/**
 * The engine's ONE global step loop (vLLM V1's schedule → execute → update) on an injected
 * clock. A step's duration comes from the roofline cost model; its results are applied at the
 * absolute time stepStart + duration, when every request that produced a token gets its output
 * (all at the same step boundary).
 *
 * Two pipelines, chosen by `config.asyncScheduling`:
 * - Sync (`--no-async-scheduling`, `vllm/v1/engine/core.py` `EngineCore.step`): a step is
 *   scheduled when the previous one has ended and been applied, and starts at once.
 * - Async (the default, `EngineCore.step_with_batch_queue` with a batch queue 2 deep:
 *   `max_concurrent_batches` is 2 with async scheduling, `vllm/v1/executor/uniproc_executor.py`):
 *   when step k starts executing, step k+1 is scheduled at once from the state known then; step k
 *   is applied when it ends, then k+1 starts (it was already queued) and k+2 is scheduled. So a
 *   request that arrives during step k is first scheduled at k's end, into step k+2, and gets its
 *   first token at the end of k+2 (sync: k+1). From an idle engine both the first step and the
 *   one behind it are scheduled at the arrival time.
 *
 * What step k+1 sees while step k runs (bookkeeping in scheduler.ts, after
 * `vllm/v1/core/sched/async_scheduler.py`): computed tokens already include step k's, and each
 * request step k samples for holds an output placeholder, so decodes and prefill chunks keep
 * going every step. A request that k finishes:
 * - by max_tokens or max_model_len: the scheduler knows it in advance and leaves it out of k+1
 *   (the `num_output_placeholders` check in `Scheduler.schedule`);
 * - by EOS (not known in advance): it is still in k+1 and costs a slot there; at k's end it is
 *   finished, its blocks are freed (k+2, scheduled right after, can reuse them) and the token k+1
 *   computes for it is discarded (`update_from_output` skips finished requests).
 * A request preempted while scheduling k+1 still receives the token step k computes for it (vLLM appends it to the
 * PREEMPTED request); it is re-admitted no earlier than k+2. A schedule that preempts and places nothing leaves no
 * step queued: the next step is scheduled when the running one ends (vLLM queues an empty batch that ends at once).
 * Deviations: the scheduler runs in zero time at the step boundary (vLLM's CPU scheduling of k+1 overlaps k's
 * GPU work; its cost is inside the step-time model's fixed overhead); a block whose last token is a placeholder is
 * registered in the prefix cache one step early (its generated-token hash is unique to the request, so no other
 * request can hit it).
 */
import { stepTimeMs } from './cost';
import { deliverOutputs } from './step-update';
import type { SimRequest } from './engine-request';
import { kvBlockBytes, type Profile } from './profile';
import { randNormal, type Rng } from '../../rng';
import type { Scheduler, StepPlan } from './scheduler';
import type { EngineClock, EngineConfig, EngineOutput, StepInfo } from './types';

/** What the loop needs; the engine owns the scheduler and the id map, the loop drives them. */
export interface StepLoopOptions {
  config: EngineConfig;
  profile: Profile;
  clock: EngineClock;
  sched: Scheduler;
  /** Requests in the engine by id; the loop deletes the ones that finish. */
  byId: Map<string, SimRequest>;
  /** Relative std-dev of the step-time noise (0 = none), drawn from `rng`. */
  jitter: number;
  rng: Rng;
  /** Resync threshold, ms; default: the late step's duration. */
  maxLatenessMs?: number;
}

/** A scheduled step: the scheduler's plan, its duration and the report filled in as it runs. */
interface Step {
  plan: StepPlan;
  durationMs: number;
  info: StepInfo;
}

/**
 * The step loop. `wake()` starts it when idle; it then runs steps back to back, each starting at
 * the previous step's PLANNED end (drift correction) unless the step-end callback ran more than
 * `maxLatenessMs` late (then it resyncs to the actual time), and goes idle when nothing is queued.
 */
export class StepLoop {
  /** Steps started so far. */
  steps = 0;
  /** Times the loop gave up on the planned schedule because a step ended too late. */
  resyncs = 0;
  /** `onStep` subscribers, called after each step's outputs. */
  readonly stepSubs: ((info: StepInfo) => void)[] = [];
  private timer: { cancel(): void } | null = null;
  private idle = true;
  private closed = false;
  /** The step executing now. */
  private current: Step | null = null;
  /** Async scheduling: the step scheduled behind `current`, which starts when it ends. */
  private queued: Step | null = null;
  private readonly blockBytes: number;
  private readonly outReqs: SimRequest[] = [];
  private readonly outs: EngineOutput[] = [];
  private between: (() => void)[] = [];

  constructor(private readonly o: StepLoopOptions) {
    this.blockBytes = kvBlockBytes(o.profile, o.config.blockSize);
  }

  /** A request was queued: start a step now if the loop is idle. */
  wake(): void {
    if (!this.idle) return;
    this.idle = false;
    const { clock } = this.o;
    this.timer = clock.at(clock.now(), () => this.startStep(clock.now()));
  }

  /**
   * Run `fn` where it delays no step: at once when the loop is idle, else on the next turn after the
   * step in flight has ended and its outputs went out, the longest gap before the next deadline.
   */
  betweenSteps(fn: () => void): void {
    if (this.current === null || this.closed) fn();
    else this.between.push(fn);
  }

  /**
   * End the step in flight now if its end time has come, not when the clock's callback runs. The
   * server calls it before each slice of its own work (an arrival, a parsed body), so a storm of
   * arrivals makes a step late by one slice, not by the whole storm. vLLM's engine core runs in its own
   * process (`EngineCoreProc`, "running EngineCore in background process", `vllm/v1/engine/core.py`).
   */
  runDue(): void {
    const step = this.current;
    if (step === null || this.closed || this.o.clock.now() < step.info.endMs) return;
    this.timer?.cancel();
    try {
      this.finishStep();
    } catch (err) {
      setImmediate(() => {
        throw err; // as from the clock's own callback, not into the caller's request
      });
    }
  }

  /** Stop: cancel the pending step; no step starts after this. */
  close(): void {
    this.closed = true;
    this.timer?.cancel();
    this.timer = null;
    const fns = this.between; // nothing will end a step now: run what waited for one
    this.between = [];
    for (const fn of fns) fn();
  }

  /** Nothing in flight: schedule a step at `startMs` and start it, or go idle. */
  private startStep(startMs: number): void {
    this.timer = null;
    const { sched, byId, clock } = this.o;
    const stuck: SimRequest[] = [];
    for (;;) {
      const plan = sched.schedule(startMs);
      if (plan.scheduled.length > 0) {
        this.launch(this.makeStep(plan), startMs);
        break;
      }
      if (plan.preemptions > 0) continue; // everything running was preempted; admit again now
      const head = sched.swapped.peekFront() ?? sched.waiting.peekFront();
      if (!head) {
        this.idle = true;
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

  /** The step a non-empty plan makes: its duration (cost model + jitter) and its report. */
  private makeStep(plan: StepPlan): Step {
    const { profile, jitter, rng } = this.o;
    const batch = plan.batch;
    batch.swapBytes = plan.swapBlocks * this.blockBytes;
    batch.swapCopies = plan.swapBlocks * profile.perf.swapCopiesPerBlock;
    let durationMs = stepTimeMs(batch, profile);
    if (jitter > 0) durationMs *= Math.max(0.1, 1 + jitter * Math.max(-3, Math.min(3, randNormal(rng))));
    const info: StepInfo = {
      step: 0,
      startMs: 0,
      endMs: 0,
      latenessMs: 0,
      scheduledTokens: plan.scheduledTokens,
      numDecodes: batch.decodes,
      prefillTokens: batch.prefillTokens,
      iterationTokens: 0,
      running: 0,
      waiting: 0,
      preemptions: plan.preemptions,
    };
    return { plan, durationMs, info };
  }

  /** Start executing `step` at `startMs`; with async scheduling, schedule the next step now. */
  private launch(step: Step, startMs: number): void {
    const info = step.info;
    info.step = ++this.steps;
    info.startMs = startMs;
    info.endMs = startMs + step.durationMs;
    this.current = step;
    this.timer = this.o.clock.at(info.endMs, () => this.finishStep());
    if (this.o.config.asyncScheduling) {
      const plan = this.o.sched.schedule(startMs);
      this.queued = plan.scheduled.length > 0 ? this.makeStep(plan) : null;
    }
  }

  private finishStep(): void {
    this.timer = null;
    const step = this.current!;
    this.current = null;
    const { info, durationMs } = step;
    const { sched, clock } = this.o;
    const now = clock.now();
    info.latenessMs = Math.max(0, now - info.endMs);
    if (clock.sleptLateMs) info.sleptLateMs = clock.sleptLateMs();
    this.outReqs.length = 0;
    this.outs.length = 0;
    info.iterationTokens = sched.update(info.endMs, this.outReqs, this.outs, step.plan);
    info.running = sched.running.length;
    info.waiting = sched.waiting.size + sched.swapped.size;
    let error = deliverOutputs(this.outReqs, this.outs, this.o.byId);
    for (const fn of this.stepSubs) {
      try {
        fn(info);
      } catch (e) {
        error ??= e;
      }
    }
    if (!this.closed) {
      let next = info.endMs;
      if (info.latenessMs > (this.o.maxLatenessMs ?? durationMs)) {
        this.resyncs++;
        next = now;
      }
      const queued = this.queued;
      this.queued = null;
      if (queued) this.launch(queued, next);
      else this.startStep(next);
    }
    if (this.between.length > 0) {
      const fns = this.between;
      this.between = [];
      setImmediate(() => {
        for (const fn of fns) fn();
      });
    }
    if (error !== undefined) throw error;
  }
}
