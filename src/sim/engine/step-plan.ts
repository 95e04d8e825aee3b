/**
 * One step's plan as the scheduler builds it: who is scheduled with how many tokens, and the
 * aggregated work the cost model prices. A request can leave the plan again in the same step
 * (a PRIORITY preemption victim scheduled earlier, `vllm/v1/core/sched/scheduler.py`).
 */
import { addDecode, addPrefill, emptyBatch, resetBatch, type StepBatch } from './cost';
import { numTokens, type SimRequest } from './engine-request';

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

/** An empty plan. */
export function emptyPlan(): StepPlan {
  return { scheduled: [], batch: emptyBatch(), scheduledTokens: 0, preemptions: 0, swapBlocks: 0 };
}

/** Clear `plan` in place for the next step. */
export function resetPlan(plan: StepPlan): void {
  plan.scheduled.length = 0;
  resetBatch(plan.batch);
  plan.scheduledTokens = plan.preemptions = plan.swapBlocks = 0;
}

function addToBatch(b: StepBatch, r: SimRequest, n: number): void {
  if (n === 1 && r.computed + 1 === numTokens(r)) addDecode(b, r.computed + 1);
  else addPrefill(b, n, r.computed);
}

/** Schedule `n` tokens of `r` (a decode when it is the one token that completes it, else a prefill chunk). */
export function planTake(plan: StepPlan, r: SimRequest, n: number): void {
  r.scheduled = n;
  plan.scheduled.push(r);
  plan.scheduledTokens += n;
  addToBatch(plan.batch, r, n);
}

/** Take `r` out of the plan again; returns the tokens it had been given. Call `planRebuild` before pricing. */
export function planDrop(plan: StepPlan, r: SimRequest): number {
  const n = r.scheduled;
  plan.scheduled.splice(plan.scheduled.indexOf(r), 1);
  plan.scheduledTokens -= n;
  r.scheduled = 0;
  return n;
}

/** Recount the batch from the requests still in the plan. */
export function planRebuild(plan: StepPlan): void {
  resetBatch(plan.batch);
  for (const r of plan.scheduled) addToBatch(plan.batch, r, r.scheduled);
}
