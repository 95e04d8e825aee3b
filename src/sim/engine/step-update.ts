/**
 * Applying a finished engine step to the scheduler's state: vLLM V1's
 * `Scheduler.update_from_output` (`vllm/v1/core/sched/scheduler.py`) with the async scheduler's
 * placeholder accounting (`vllm/v1/core/sched/async_scheduler.py` `_update_request_with_output`).
 */
import { stopReason, type SimRequest } from './engine-request';
import type { KvBlockPool } from './kv';
import type { EngineConfig, EngineOutput } from './types';

/** The scheduler state a step's result changes (`Scheduler` has it). */
export interface StepState {
  readonly config: EngineConfig;
  readonly kv: KvBlockPool;
  readonly running: SimRequest[];
  generationTokens: number;
  promptTokens: number;
  /** Remove a request from whichever queue holds it and free its blocks. */
  abort(r: SimRequest): void;
}

/** The part of a `StepPlan` (scheduler.ts) applied here; both arrays are cleared. */
export interface AppliedPlan {
  scheduled: SimRequest[];
  /** Per entry: the step samples a token for it. */
  emits: boolean[];
}

/**
 * Apply step `plan` to `s` as of `endMs` (engine clock, ms): each entry that `emits` samples one
 * token (prefill completion or decode) and gives back its placeholder; partial chunks produce
 * nothing. Finished requests free their blocks and leave RUNNING. Appends one (request, output)
 * pair per token-producing request to `reqs`/`outs` and returns the step's iteration tokens
 * (prompts completed for the first time + tokens generated). With a step in flight (async
 * scheduling) two more cases arise:
 * - a request that finished (EOS) in the step before is skipped: the token this step computed
 *   for it is discarded, as `update_from_output` skips finished requests;
 * - a request preempted after this step was scheduled still gets its token (vLLM appends it to
 *   the PREEMPTED request); if that token finishes it, it leaves WAITING.
 */
export function applyStep(s: StepState, plan: AppliedPlan, endMs: number, reqs: SimRequest[], outs: EngineOutput[]): number {
  const scheduled = plan.scheduled;
  let iterationTokens = 0;
  let finished = 0;
  for (let k = 0; k < scheduled.length; k++) {
    const r = scheduled[k];
    if (r.status === 'finished' || !plan.emits[k]) continue; // aborted or finished earlier; partial chunk
    r.placeholders--;
    r.outputTokens++;
    s.generationTokens++;
    iterationTokens++;
    if (!r.promptCounted) {
      r.promptCounted = true;
      s.promptTokens += r.promptTokens;
      iterationTokens += r.promptTokens;
    }
    const finishReason = stopReason(r, s.config.maxModelLen);
    const out: EngineOutput = { newTokens: 1, outputTokens: r.outputTokens, timeMs: endMs };
    if (finishReason) out.finishReason = finishReason;
    if (r.outputTokens === 1) Object.assign(out, { cachedTokens: Math.max(0, r.cachedTokens), scheduledMs: r.firstScheduledMs });
    reqs.push(r);
    outs.push(out);
    if (!finishReason) continue;
    if (r.status !== 'running') {
      s.abort(r); // preempted while this step ran: leaves WAITING (or the swap queue)
      continue;
    }
    r.status = 'finished';
    s.kv.free(r);
    finished++;
  }
  scheduled.length = 0;
  plan.emits.length = 0;
  if (finished > 0) {
    let w = 0;
    for (let k = 0; k < s.running.length; k++) {
      const r = s.running[k];
      if (r.status === 'running') s.running[w++] = r;
    }
    s.running.length = w;
  }
  return iterationTokens;
}

/** Hand each request its output of a finished step (`outReqs[k]` gets `outs[k]`); returns the first error a callback threw. */
export function deliverOutputs(outReqs: SimRequest[], outs: EngineOutput[], byId: Map<string, SimRequest>): unknown {
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
  return error;
}
