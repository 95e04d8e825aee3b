/**
 * The engine's ONE global step loop (vLLM V1's schedule → execute → update, as in
 * `vllm/v1/engine/core.py` `EngineCore.step`) on an injected clock. A step's duration comes from
 * the roofline cost model; its results are applied at the absolute time stepStart + duration,
 * when every request that produced a token gets its output (all at the same step boundary).
 */
import { stepTimeMs } from './cost';
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

/**
 * The step loop. `wake()` starts it when idle; it then runs steps back to back, each starting at
 * the previous step's PLANNED end (drift correction) unless the step-end callback ran more than
 * `maxLatenessMs` late (then it resyncs to the actual time), and goes idle when nothing is queued.
 */
export class StepLoop {
  /** Steps run so far. */
  steps = 0;
  /** Times the loop gave up on the planned schedule because a step ended too late. */
  resyncs = 0;
  /** `onStep` subscribers, called after each step's outputs. */
  readonly stepSubs: ((info: StepInfo) => void)[] = [];
  private timer: { cancel(): void } | null = null;
  private idle = true;
  private closed = false;
  private readonly blockBytes: number;
  private readonly outReqs: SimRequest[] = [];
  private readonly outs: EngineOutput[] = [];

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

  /** Stop: cancel the pending step; no step starts after this. */
  close(): void {
    this.closed = true;
    this.timer?.cancel();
    this.timer = null;
  }

  private startStep(startMs: number): void {
    this.timer = null;
    const { sched, byId, clock } = this.o;
    const stuck: SimRequest[] = [];
    for (;;) {
      const plan = sched.schedule(startMs);
      if (plan.scheduled.length > 0) {
        this.runStep(startMs, plan);
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

  private runStep(startMs: number, plan: StepPlan): void {
    const { profile, jitter, rng } = this.o;
    const batch = plan.batch;
    batch.swapBytes = plan.swapBlocks * this.blockBytes;
    batch.swapCopies = plan.swapBlocks * profile.perf.swapCopiesPerBlock;
    let durationMs = stepTimeMs(batch, profile);
    if (jitter > 0) durationMs *= Math.max(0.1, 1 + jitter * Math.max(-3, Math.min(3, randNormal(rng))));
    const endMs = startMs + durationMs;
    const info: StepInfo = {
      step: ++this.steps,
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
    this.timer = this.o.clock.at(endMs, () => this.finishStep(info, durationMs));
  }

  private finishStep(info: StepInfo, durationMs: number): void {
    this.timer = null;
    const { sched, clock } = this.o;
    const now = clock.now();
    info.latenessMs = Math.max(0, now - info.endMs);
    this.outReqs.length = 0;
    this.outs.length = 0;
    info.iterationTokens = sched.update(info.endMs, this.outReqs, this.outs);
    info.running = sched.running.length;
    info.waiting = sched.waiting.size + sched.swapped.size;
    let error = this.deliver();
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
      this.startStep(next);
    }
    if (error !== undefined) throw error;
  }

  /** Hand each request its step output; returns the first error a callback threw. */
  private deliver(): unknown {
    let error: unknown;
    for (let k = 0; k < this.outReqs.length; k++) {
      const r = this.outReqs[k];
      const out = this.outs[k];
      if (out.finishReason) this.o.byId.delete(r.id);
      else if (r.status === 'finished') continue; // aborted by an earlier callback
      try {
        r.onOutput(out);
      } catch (e) {
        error ??= e;
      }
    }
    return error;
  }
}
