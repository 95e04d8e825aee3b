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
 */
import { addDecode, addPrefill, emptyBatch, resetBatch, type StepBatch } from './cost';
import { Deque } from './deque';
import { numTokens, stopReason, type SimRequest } from './engine-request';
import { KvBlockPool } from './kv';
import type { EngineConfig, EngineOutput } from './types';

/** What `schedule` decided for one step. Arrays and the batch are reused by the next call. */
export interface StepPlan {
  /** Requests scheduled this step, in scheduling order; each one's token count is `req.scheduled`. */
  scheduled: SimRequest[];
  /** The step's work for the cost model (swap fields left 0; see `swapBlocks`). */
  batch: StepBatch;
  scheduledTokens: number;
  /** Preemptions in this step (recompute or swap). */
  preemptions: number;
  /** KV blocks moved between GPU and CPU this step (swap mode), out + in. */
  swapBlocks: number;
}

/** Running, waiting and swapped queues over one KV block pool. */
export class Scheduler {
  readonly config: EngineConfig;
  readonly kv: KvBlockPool;
  /** RUNNING in admission order; preemption pops the end. */
  readonly running: SimRequest[] = [];
  /** WAITING, FCFS; preempted (recompute) requests are put at the front. */
  readonly waiting = new Deque<SimRequest>();
  /** Swapped-out requests (swap mode), resumed before any waiting request is admitted. */
  readonly swapped = new Deque<SimRequest>();
  /** `vllm:num_preemptions_total`. */
  numPreemptions = 0;
  /** `vllm:prompt_tokens_total`: full prompt (cached included), once per request at its first token. */
  promptTokens = 0;
  /** `vllm:generation_tokens_total`. */
  generationTokens = 0;

  private readonly plan: StepPlan = { scheduled: [], batch: emptyBatch(), scheduledTokens: 0, preemptions: 0, swapBlocks: 0 };
  private readonly hits: number[] = [];

  constructor(config: EngineConfig) {
    this.config = config;
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
   * continuing prefill chunks), preempting the newest on allocation failure; then, only if
   * nothing was preempted, swapped requests (swap mode) and WAITING admissions (FCFS) that
   * arrived by `stepStartMs`.
   */
  schedule(stepStartMs = Number.POSITIVE_INFINITY): StepPlan {
    const cfg = this.config;
    const plan = this.plan;
    plan.scheduled.length = 0;
    resetBatch(plan.batch);
    plan.scheduledTokens = plan.preemptions = plan.swapBlocks = 0;
    const thr = cfg.longPrefillTokenThreshold;
    let budget = cfg.maxNumBatchedTokens;

    let i = 0;
    while (i < this.running.length && budget > 0) {
      const r = this.running[i];
      let n = numTokens(r) - r.computed;
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
        const victim = this.running.pop()!;
        this.preempt(victim);
        if (victim === r) break;
      }
      if (!ok) break;
      this.take(r, n);
      budget -= n;
      i++;
    }
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
      this.take(r, n);
      budget -= n;
    }
    if (this.swapped.size > 0) return plan;

    while (this.waiting.size > 0 && budget > 0 && this.running.length < cfg.maxNumSeqs) {
      const r = this.waiting.peekFront()!;
      if (r.arrivalMs > stepStartMs) break; // arrived mid-step: waits for the next schedule()
      const total = numTokens(r);
      const hit = this.kv.findCached(r, total, r.numPreemptions === 0, this.hits);
      let n = total - hit;
      if (thr > 0 && n > thr) n = thr;
      if (!cfg.enableChunkedPrefill && n > budget) break;
      n = Math.min(n, budget);
      if (!this.kv.allocate(r, hit, n, this.hits, cfg.reserveFullIsl ? total : 0)) break;
      this.waiting.popFront();
      r.status = 'running';
      r.computed = hit;
      if (r.cachedTokens < 0) r.cachedTokens = hit;
      if (r.firstScheduledMs < 0) r.firstScheduledMs = stepStartMs;
      this.running.push(r);
      this.take(r, n);
      budget -= n;
    }
    return plan;
  }

  /**
   * Apply the step that `schedule` planned, as of `endMs`: computed += scheduled; a request
   * whose computed tokens reach num_tokens samples one token (prefill completion or decode);
   * partial chunks produce nothing. Finished requests free their blocks and leave RUNNING.
   * Appends one (request, output) pair per token-producing request to `reqs`/`outs` and
   * returns the step's iteration tokens (prompts completed for the first time + tokens generated).
   */
  update(endMs: number, reqs: SimRequest[], outs: EngineOutput[]): number {
    const scheduled = this.plan.scheduled;
    let iterationTokens = 0;
    let finished = 0;
    for (let k = 0; k < scheduled.length; k++) {
      const r = scheduled[k];
      if (r.status !== 'running') continue; // aborted mid-step
      r.computed += r.scheduled;
      r.scheduled = 0;
      if (r.computed < numTokens(r)) continue;
      r.outputTokens++;
      this.generationTokens++;
      iterationTokens++;
      if (!r.promptCounted) {
        r.promptCounted = true;
        this.promptTokens += r.promptTokens;
        iterationTokens += r.promptTokens;
      }
      const finishReason = stopReason(r, this.config.maxModelLen);
      const out: EngineOutput = { newTokens: 1, outputTokens: r.outputTokens, timeMs: endMs };
      if (finishReason) out.finishReason = finishReason;
      if (r.outputTokens === 1)
        Object.assign(out, { cachedTokens: Math.max(0, r.cachedTokens), scheduledMs: r.firstScheduledMs });
      reqs.push(r);
      outs.push(out);
      if (finishReason) {
        r.status = 'finished';
        this.kv.free(r);
        finished++;
      }
    }
    scheduled.length = 0;
    if (finished > 0) {
      let w = 0;
      for (let k = 0; k < this.running.length; k++) {
        const r = this.running[k];
        if (r.status === 'running') this.running[w++] = r;
      }
      this.running.length = w;
    }
    return iterationTokens;
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

  private take(r: SimRequest, n: number): void {
    const plan = this.plan;
    r.scheduled = n;
    plan.scheduled.push(r);
    plan.scheduledTokens += n;
    if (n === 1 && r.computed + 1 === numTokens(r)) addDecode(plan.batch, r.computed + 1);
    else addPrefill(plan.batch, n, r.computed);
  }

  /**
   * Preempt `victim` (already popped from RUNNING). Swap mode moves its blocks to the CPU
   * pool if they fit there (else it falls back to recompute); recompute frees its blocks
   * (they stay cached), resets num_computed_tokens and puts it at the FRONT of WAITING.
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
