/**
 * One step's plan as the scheduler builds it: who is scheduled with how many tokens, which of them
 * sample a token, and the aggregated work the cost model prices. Bookkeeping is vLLM's
 * AsyncScheduler (`vllm/v1/core/sched/async_scheduler.py` `_update_after_schedule`; the same as the
 * plain Scheduler when no step is in flight): taking tokens advances `computed` at once, and a
 * token the step will sample is an output placeholder until the step's update appends it.
 * A request can leave the plan again in the same step (a PRIORITY preemption victim scheduled
 * earlier, `vllm/v1/core/sched/scheduler.py`); dropping it undoes exactly what taking did.
 */
import { addDecode, addPrefill, emptyBatch, resetBatch, type StepBatch } from './cost';
import { numTokens, type SimRequest } from './engine-request';

/** What `schedule` decided for one step. Arrays and the batch are reused (the scheduler alternates two plans). */
export interface StepPlan {
  /** Requests scheduled this step, in scheduling order; each one's token count is `req.scheduled` until the next `schedule()`. */
  scheduled: SimRequest[];
  /** Per entry of `scheduled`: this step samples a token for it (prefill completed or decode), vLLM's `not is_prefill_chunk`. */
  emits: boolean[];
  /** The step's work for the cost model (swap fields left 0; see `swapBlocks`). */
  batch: StepBatch;
  scheduledTokens: number;
  /** Preemptions in this step (recompute or swap). */
  preemptions: number;
  /** KV blocks moved between GPU and CPU this step (swap mode), out + in. */
  swapBlocks: number;
}

/** An empty plan. */
export function emptyPlan(): StepPlan {
  return { scheduled: [], emits: [], batch: emptyBatch(), scheduledTokens: 0, preemptions: 0, swapBlocks: 0 };
}

/** Clear `plan` in place for the next step. */
export function resetPlan(plan: StepPlan): void {
  plan.scheduled.length = 0;
  plan.emits.length = 0;
  resetBatch(plan.batch);
  plan.scheduledTokens = plan.preemptions = plan.swapBlocks = 0;
}

/** Price `n` tokens of `r` taken from `before` computed tokens: a decode when it is the one sampled token, else a prefill chunk. */
function addToBatch(b: StepBatch, n: number, before: number, emits: boolean): void {
  if (n === 1 && emits) addDecode(b, before + 1);
  else addPrefill(b, n, before);
}

/** Schedule `n` tokens of `r`: plan entry, cost, then `computed += n` and a placeholder if the step samples. */
export function planTake(plan: StepPlan, r: SimRequest, n: number): void {
  const emits = r.computed + n >= numTokens(r) + r.placeholders;
  r.scheduled = n;
  plan.scheduled.push(r);
  plan.emits.push(emits);
  plan.scheduledTokens += n;
  addToBatch(plan.batch, n, r.computed, emits);
  r.computed += n;
  if (emits) r.placeholders++;
}

/** Take `r` out of the plan again, undoing `planTake`; returns the tokens it had been given. Call `planRebuild` before pricing. */
export function planDrop(plan: StepPlan, r: SimRequest): number {
  const k = plan.scheduled.indexOf(r);
  const n = r.scheduled;
  if (plan.emits[k]) r.placeholders--;
  r.computed -= n;
  plan.scheduled.splice(k, 1);
  plan.emits.splice(k, 1);
  plan.scheduledTokens -= n;
  r.scheduled = 0;
  return n;
}

/** Recount the batch from the requests still in the plan. */
export function planRebuild(plan: StepPlan): void {
  resetBatch(plan.batch);
  plan.scheduled.forEach((r, k) => addToBatch(plan.batch, r.scheduled, r.computed - r.scheduled, plan.emits[k]));
}
