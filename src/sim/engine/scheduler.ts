/**
 * vLLM V1 `Scheduler.schedule()` and `update_from_output()`, rule for rule
 * (vllm-surface.md §5 "V1 scheduling step"), plus V0-style swap preemption as an option.
 * Swap mode is V0 run with `--preemption-mode swap`: by default V0 swapped only a sequence group
 * with more than one running sequence (n > 1, beam search) and recomputed single-sequence requests
 * (`vllm/core/scheduler.py` `Scheduler._preempt`), so swap is not what vLLM did to the course's requests.
 * Serving RUNNING (chunked prefills included) before admitting WAITING is not new in V1 either:
 * V0's `_schedule_chunked_prefill` did running, then swapped, then waiting.
 * No clock and no cost model here: `schedule` decides who runs and how many tokens each
 * gets, `update` applies the step's result once the engine says the step has ended.
 * Bookkeeping is vLLM's AsyncScheduler (`vllm/v1/core/sched/async_scheduler.py`; the same as the
 * plain Scheduler when no step is in flight): `computed` advances at schedule time, and a token
 * the step will sample is an output placeholder until `update` (step-update.ts) appends it.
 * Static batching (`config.staticBatching`, `--loadlab-static-batching`) is LoadLab's, for a demonstration
 * only: vLLM has no such mode (V1 admits WAITING every step, `vllm/v1/core/sched/scheduler.py` `schedule`).
 */
import { Deque } from './deque';
import { numTokens, type SimRequest } from './engine-request';
import { KvBlockPool } from './kv';
import { applyStep } from './step-update';
import { createRequestQueue, type RequestQueue, victimIndex } from './request-queue';
import { emptyPlan, planDrop, planRebuild, planTake, resetPlan, type StepPlan } from './step-plan';
import type { EngineConfig, EngineOutput } from './types';

export type { StepPlan } from './step-plan';

/** Running, waiting and swapped queues over one KV block pool. */
export class Scheduler {
  readonly config: EngineConfig;
  readonly kv: KvBlockPool;
  /** RUNNING in admission order; FCFS preemption pops the end. */
  readonly running: SimRequest[] = [];
  /** WAITING: FCFS deque (preempted requests at the front) or, under `priority`, a heap on (priority, arrival). */
  readonly waiting: RequestQueue;
  /** Swapped-out requests (swap mode), resumed before any waiting request is admitted. */
  readonly swapped = new Deque<SimRequest>();
  /** `vllm:num_preemptions_total`. */
  numPreemptions = 0;
  /** `vllm:prompt_tokens_total`: full prompt (cached included), once per request at its first token. */
  promptTokens = 0;
  /** `vllm:generation_tokens_total`. */
  generationTokens = 0;

  /** Two plans, used in turn, so the plan of a step in flight survives the next `schedule()`. */
  private readonly plans: StepPlan[] = [emptyPlan(), emptyPlan()];
  private plan: StepPlan = this.plans[1];
  private readonly hits: number[] = [];
  /**
   * Static batching: arrival cutoff (ms) of the batch still being admitted, or -Infinity when the batch is
   * closed. A batch opens when RUNNING is empty and closes when an admission pass stops for any reason but
   * the step's token budget (a batch larger than one step's budget is admitted over several steps).
   */
  private batchCutoffMs = Number.NEGATIVE_INFINITY;

  constructor(config: EngineConfig) {
    this.config = config;
    this.waiting = createRequestQueue(config.schedulingPolicy);
    this.kv = new KvBlockPool({
      numGpuBlocks: config.numGpuBlocks,
      blockSize: config.blockSize,
      enablePrefixCaching: config.enablePrefixCaching,
      numCpuBlocks: config.preemptionMode === 'swap' ? config.numCpuBlocks : 0,
    });
  }

  /** Queue a new request at the back of WAITING. */
  add(r: SimRequest): void {
    r.status = 'waiting';
    this.waiting.pushBack(r);
  }

  /**
   * One scheduling step starting at `stepStartMs`: running requests first (decodes and
   * continuing prefill chunks), preempting on allocation failure (FCFS: the newest admitted;
   * PRIORITY: the worst priority, newest first, even one already scheduled this step); then, only
   * if nothing was preempted, swapped requests (swap mode) and WAITING admissions, in policy order,
   * among those that arrived by `stepStartMs`.
   */
  schedule(stepStartMs = Number.POSITIVE_INFINITY): StepPlan {
    const cfg = this.config;
    const plan = (this.plan = this.plans[this.plan === this.plans[0] ? 1 : 0]);
    resetPlan(plan);
    const thr = cfg.longPrefillTokenThreshold;
    let budget = cfg.maxNumBatchedTokens;
    let unscheduled = false;

    let i = 0;
    while (i < this.running.length && budget > 0) {
      const r = this.running[i];
      // Async: skip a request sure to reach max_tokens with its in-flight token (scheduler.py `schedule`).
      if (r.placeholders > 0 && r.computed + 2 - r.placeholders >= r.promptTokens + r.input.maxTokens) {
        i++;
        continue;
      }
      let n = numTokens(r) + r.placeholders - r.computed;
      if (thr > 0 && n > thr) n = thr;
      n = Math.min(n, budget, cfg.maxModelLen - 1 - r.computed);
      if (n <= 0) {
        i++;
        continue;
      }
      let ok = false;
      for (;;) {
        if (this.kv.allocate(r, r.computed, n)) {
          ok = true;
          break;
        }
        const victim = this.running.splice(victimIndex(this.running, cfg.schedulingPolicy), 1)[0];
        if (plan.scheduled.includes(victim)) {
          // vllm/v1/core/sched/scheduler.py: a PRIORITY victim scheduled earlier this step gives its tokens back (req_index -= 1).
          budget += planDrop(plan, victim);
          unscheduled = true;
          i--;
        }
        this.preempt(victim);
        if (victim === r) break;
      }
      if (!ok) break;
      planTake(plan, r, n);
      budget -= n;
      i++;
    }
    if (unscheduled) planRebuild(plan);
    if (plan.preemptions > 0) return plan;

    while (this.swapped.size > 0 && budget > 0 && this.running.length < cfg.maxNumSeqs) {
      const r = this.swapped.peekFront()!;
      let n = numTokens(r) - r.computed;
      if (thr > 0 && n > thr) n = thr;
      n = Math.min(n, budget, cfg.maxModelLen - 1 - r.computed);
      const moved = r.cpuBlocks;
      if (!this.kv.swapIn(r, r.computed, n)) break;
      this.kv.allocate(r, r.computed, n);
      plan.swapBlocks += moved;
      this.swapped.popFront();
      r.status = 'running';
      this.running.push(r);
      planTake(plan, r, n);
      budget -= n;
    }
    if (this.swapped.size > 0) return plan;

    if (!cfg.staticBatching) {
      this.admitWaiting(stepStartMs, budget, stepStartMs);
      return plan;
    }
    if (this.running.length === 0) this.batchCutoffMs = stepStartMs; // the batch drained: a new one opens
    const left = this.admitWaiting(stepStartMs, budget, Math.min(stepStartMs, this.batchCutoffMs));
    if (left > 0 || this.running.length >= cfg.maxNumSeqs) this.batchCutoffMs = Number.NEGATIVE_INFINITY;
    return plan;
  }

  /**
   * WAITING admissions with `budget` tokens left, in policy order among requests that arrived by
   * `readyBy` (`stepStartMs`, or a static batch's cutoff); stops at the first that does not fit (waiting
   * requests never preempt). Returns the budget left.
   */
  private admitWaiting(stepStartMs: number, budget: number, readyBy: number): number {
    const cfg = this.config;
    const thr = cfg.longPrefillTokenThreshold;
    while (this.waiting.size > 0 && budget > 0 && this.running.length < cfg.maxNumSeqs) {
      const r = this.waiting.peekReady(readyBy); // one that arrived mid-step waits for the next schedule()
      if (!r) break;
      const total = numTokens(r);
      const hit = this.kv.findCached(r, total, r.numPreemptions === 0, this.hits);
      let n = total - hit;
      if (thr > 0 && n > thr) n = thr;
      if (!cfg.enableChunkedPrefill && n > budget) break;
      n = Math.min(n, budget);
      if (!this.kv.allocate(r, hit, n, this.hits, cfg.reserveFullIsl ? total : 0)) break;
      this.waiting.remove(r);
      r.status = 'running';
      r.computed = hit;
      if (r.cachedTokens < 0) r.cachedTokens = hit;
      if (r.firstScheduledMs < 0) r.firstScheduledMs = stepStartMs;
      this.running.push(r);
      planTake(this.plan, r, n);
      budget -= n;
    }
    return budget;
  }

  /** Apply step `plan` (default: the last one scheduled) as of `endMs`; see `applyStep` in step-update.ts. */
  update(endMs: number, reqs: SimRequest[], outs: EngineOutput[], plan: StepPlan = this.plan): number {
    return applyStep(this, plan, endMs, reqs, outs);
  }

  /** Remove `r` from whichever queue holds it and free its blocks. No-op if finished. */
  abort(r: SimRequest): void {
    if (r.status === 'running') {
      const k = this.running.indexOf(r);
      if (k >= 0) this.running.splice(k, 1);
      this.kv.free(r);
    } else if (r.status === 'waiting') {
      this.waiting.remove(r);
      this.kv.free(r);
    } else if (r.status === 'swapped') {
      this.swapped.remove(r);
      this.kv.dropSwapped(r);
    }
    r.status = 'finished';
  }

  /**
   * Preempt `victim` (already popped from RUNNING). Swap mode moves its blocks to the CPU
   * pool if they fit there (else it falls back to recompute); recompute frees its blocks
   * (they stay cached), resets num_computed_tokens and prepends it to WAITING (FCFS: the front;
   * PRIORITY: its place by priority and arrival).
   * Deviation: when the CPU pool is full, V0 raised "Aborted due to the lack of CPU swap space"
   * (`vllm/core/scheduler.py` `Scheduler._swap_out`) where this falls back to recompute.
   */
  private preempt(victim: SimRequest): void {
    this.plan.preemptions++;
    this.numPreemptions++;
    victim.numPreemptions++;
    if (this.config.preemptionMode === 'swap') {
      const moved = victim.blocks.length;
      if (this.kv.swapOut(victim)) {
        this.plan.swapBlocks += moved;
        victim.status = 'swapped';
        this.swapped.pushBack(victim);
        return;
      }
    }
    this.kv.free(victim);
    victim.computed = 0;
    victim.status = 'waiting';
    this.waiting.pushFront(victim);
  }
}
