/**
 * Async scheduling (vLLM's default since v0.14, `vllm/v1/engine/core.py`
 * `EngineCore.step_with_batch_queue`, batch queue 2 deep): step k+1 is scheduled when step k
 * starts, so a request arriving during step k runs in step k+2. On the virtual clock every
 * expectation is exact arithmetic over the cost model's step times, not wall time.
 */
import { describe, expect, it } from 'vitest';
import { seededRng } from '../src/rng';
import { addDecode, addPrefill, emptyBatch, stepTimeMs, type StepBatch } from '../src/sim/engine/cost';
import { resolveEngineConfig } from '../src/sim/engine/config';
import { newSimRequest, type SimRequest } from '../src/sim/engine/engine-request';
import { QueueTimes } from '../src/sim/engine/queue-time';
import { Scheduler } from '../src/sim/engine/scheduler';
import type { EngineOutput } from '../src/sim/engine/types';
import { parseServeArgs, toServeArgs } from '../src/vllm/flags';
import { itls, makeHarness, randomPrompt, submit, ttft, type Harness, type Rec } from './sim-engine-harness';

const STREAMS = 8;
const PROMPT = 50;
/** The step the new request arrives in (1 = the streams' prefill; steps ≥ 2 are 8 decodes). */
const K = 6;

/** Duration of a step with the 8 streams decoding at `context` tokens, plus an optional fresh 50-token prefill, ms. */
function stepMs(context: number, withPrefill: boolean): number {
  const b: StepBatch = emptyBatch();
  for (let i = 0; i < STREAMS; i++) addDecode(b, context);
  if (withPrefill) addPrefill(b, PROMPT, 0);
  return stepTimeMs(b);
}

/** Step j ≥ 2 decodes each stream at context PROMPT + j − 1 (token j − 1 is the input); step 1 is the 8 prefills. */
function streamStepMs(j: number, withPrefill = false): number {
  if (j === 1) {
    const b = emptyBatch();
    for (let i = 0; i < STREAMS; i++) addPrefill(b, PROMPT, 0);
    return stepTimeMs(b);
  }
  return stepMs(PROMPT + j - 1, withPrefill);
}

interface Example {
  h: Harness;
  streams: Rec[];
  late: Rec;
  arrivalMs: number;
  queueS: number[];
}

/** 8 streams start at 0; one 50-token request arrives in the middle of step K (its start is the sum of steps 1..K−1). */
function runExample(asyncScheduling: boolean): Example {
  const h = makeHarness({ maxModelLen: 4096, asyncScheduling });
  const rng = seededRng(12);
  const streams: Rec[] = [];
  for (let i = 0; i < STREAMS; i++) streams.push(submit(h, 0, randomPrompt(rng, PROMPT), { maxTokens: 40 }));
  let startK = 0;
  for (let j = 1; j < K; j++) startK += streamStepMs(j);
  const arrivalMs = startK + streamStepMs(K) / 2;
  const late = submit(h, arrivalMs, randomPrompt(rng, PROMPT), { maxTokens: 5 });
  // The simulator's request_queue_time, wired as src/sim/serve.ts does.
  const queueS: number[] = [];
  const q = new QueueTimes(
    () => h.engine.scheduler.running,
    (s) => queueS.push(s),
  );
  h.clock.at(arrivalMs, () => q.track(late.id, arrivalMs));
  h.engine.onStep((s) => q.onStep(s.startMs));
  h.clock.runUntilIdle();
  return { h, streams, late, arrivalMs, queueS };
}

describe('async scheduling: 8 decoding streams, one request arriving mid-step', () => {
  const on = runExample(true);
  const off = runExample(false);
  const residual = streamStepMs(K) / 2;

  it('steps 1..K run back to back with the cost model durations in both modes', () => {
    for (const { h } of [on, off]) {
      let t = 0;
      for (let j = 1; j <= K; j++) {
        const s = h.steps[j - 1];
        expect(s.startMs).toBeCloseTo(t, 9);
        expect(s.endMs - s.startMs).toBeCloseTo(streamStepMs(j), 9);
        t = s.endMs;
      }
    }
  });

  it('async on: first token at the end of step K+2, TTFT = residual + 2 steps', () => {
    const expected = residual + streamStepMs(K + 1) + streamStepMs(K + 2, true);
    expect(ttft(on.late)).toBeCloseTo(expected, 9);
    expect(on.late.outTimes[0]).toBe(on.h.steps[K + 1].endMs);
    expect(on.h.steps[K].prefillTokens).toBe(0); // step K+1 was scheduled before the arrival
    expect(on.h.steps[K + 1].prefillTokens).toBe(PROMPT);
    console.log(
      `async on: TTFT ${ttft(on.late).toFixed(2)} ms (residual ${residual.toFixed(2)} + ${streamStepMs(K + 1).toFixed(2)} + ${streamStepMs(K + 2, true).toFixed(2)})`,
    );
  });

  it('async off: first token at the end of step K+1, TTFT = residual + 1 step', () => {
    const expected = residual + streamStepMs(K + 1, true);
    expect(ttft(off.late)).toBeCloseTo(expected, 9);
    expect(off.late.outTimes[0]).toBe(off.h.steps[K].endMs);
    expect(off.h.steps[K].prefillTokens).toBe(PROMPT);
    expect(ttft(on.late) - ttft(off.late)).toBeCloseTo(
      streamStepMs(K + 2, true) + streamStepMs(K + 1) - streamStepMs(K + 1, true),
      9,
    );
    console.log(`async off: TTFT ${ttft(off.late).toFixed(2)} ms`);
  });

  it('queue time (first scheduled − queued) is the residual in both modes: the extra async step is prefill time', () => {
    // vLLM stamps SCHEDULED when schedule() admits the request (`vllm/v1/core/sched/scheduler.py`):
    // at the end of step K in both modes; async then waits one more step before computing it.
    expect(on.queueS).toHaveLength(1);
    expect(off.queueS).toHaveLength(1);
    expect(on.queueS[0] * 1000).toBeCloseTo(residual, 9);
    expect(off.queueS[0] * 1000).toBeCloseTo(residual, 9);
  });

  it('streams keep one token per step in both modes (placeholders let decodes run back to back)', () => {
    for (const { h, streams } of [on, off]) {
      for (const r of streams) {
        expect(r.outputTokens).toBe(40);
        expect(r.finish).toBe('length');
        // Token i comes at the end of step i: every gap is exactly one step.
        r.outTimes.forEach((t, i) => expect(t).toBe(h.steps[i].endMs));
        expect(itls(r).length).toBe(39);
      }
      expect(h.engine.stats()).toMatchObject({ running: 0, waiting: 0, kvUsage: 0 });
    }
  });
});

describe('async scheduling: finishing, KV and preemption', () => {
  it('max_tokens is known ahead: a finishing request is left out of the step behind its last one', () => {
    const h = makeHarness({ asyncScheduling: true });
    const rng = seededRng(21);
    const r = submit(h, 0, randomPrompt(rng, 20), { maxTokens: 3 });
    h.clock.runUntilIdle();
    expect(r.outputTokens).toBe(3);
    expect(h.steps.map((s) => s.numDecodes)).toEqual([0, 1, 1]); // no fourth, wasted step
  });

  it('EOS is not known ahead: the step behind the last one still computes it, and its token is discarded', () => {
    const h = makeHarness({ asyncScheduling: true });
    const rng = seededRng(22);
    const eos = submit(h, 0, randomPrompt(rng, 20), { maxTokens: 50, naturalLength: 3, ignoreEos: false });
    const other = submit(h, 0, randomPrompt(rng, 20), { maxTokens: 8 });
    const outs: number[] = [];
    h.clock.runUntilIdle();
    for (const t of eos.outTimes) outs.push(h.steps.findIndex((s) => s.endMs === t));
    expect(eos.finish).toBe('stop');
    expect(eos.outputTokens).toBe(3);
    expect(outs).toEqual([0, 1, 2]);
    expect(h.steps[3].numDecodes).toBe(2); // step 4 still holds the EOS request's slot
    expect(h.steps[4].numDecodes).toBe(1);
    expect(other.outputTokens).toBe(8);
    expect(h.engine.stats()).toMatchObject({ running: 0, waiting: 0, kvUsage: 0, generationTokens: 11 });
  });

  it('blocks for the next token are allocated when the step behind is scheduled, one step ahead of sync', () => {
    const usage = (asyncScheduling: boolean) => {
      const h = makeHarness({ numGpuBlocksOverride: 101, asyncScheduling });
      submit(h, 0, randomPrompt(seededRng(5), 160), { maxTokens: 4 });
      const u: number[] = [];
      h.engine.onStep(() => u.push(h.engine.stats().kvUsage));
      h.clock.runUntilIdle();
      return u;
    };
    // 160 prompt tokens fill 10 of 100 usable blocks; the first decode's input (token 161) needs an 11th.
    expect(usage(false)[0]).toBeCloseTo(0.1, 12);
    expect(usage(true)[0]).toBeCloseTo(0.11, 12);
  });

  it('under KV pressure with preemption every request still gets each token once, in order, and the cache drains', () => {
    for (const asyncScheduling of [true, false]) {
      const h = makeHarness({ numGpuBlocksOverride: 40, maxNumBatchedTokens: 256, asyncScheduling });
      const rng = seededRng(33);
      const recs: Rec[] = [];
      for (let i = 0; i < 6; i++) recs.push(submit(h, i * 3, randomPrompt(rng, 120), { maxTokens: 60 }));
      h.clock.runUntilIdle();
      expect(h.engine.stats().numPreemptions).toBeGreaterThan(0);
      for (const r of recs) {
        expect(r.finish).toBe('length');
        expect(r.outputTokens).toBe(60);
        expect(r.outTimes.length).toBe(60);
        for (let k = 1; k < r.outTimes.length; k++) expect(r.outTimes[k]).toBeGreaterThan(r.outTimes[k - 1]);
      }
      expect(h.engine.stats()).toMatchObject({ running: 0, waiting: 0, kvUsage: 0, generationTokens: 360 });
    }
  });
});

describe('async scheduling at the scheduler: a request preempted while its step is in flight', () => {
  it('still gets the token that step computed, waits, and is re-admitted with it once blocks free up', () => {
    // 2 usable blocks of 16: two 16-token prompts fill them; a's first decode needs a third block.
    const cfg = { ...resolveEngineConfig({ numGpuBlocksOverride: 3, maxModelLen: 64 }), maxNumBatchedTokens: 64 };
    const s = new Scheduler(cfg);
    const outs = new Map<string, EngineOutput[]>();
    const mk = (id: string, base: number): SimRequest => {
      outs.set(id, []);
      const prompt = Array.from({ length: 16 }, (_, i) => base + i);
      const input = { id, promptTokenIds: prompt, maxTokens: 4, minTokens: 0, naturalLength: 4, ignoreEos: true };
      return newSimRequest(input, 0, base, (o) => outs.get(id)!.push(o));
    };
    const a = mk('a', 1000);
    const b = mk('b', 2000);
    s.add(a);
    s.add(b);
    const apply = (plan: ReturnType<Scheduler['schedule']>) => {
      const reqs: SimRequest[] = [];
      const o: EngineOutput[] = [];
      s.update(0, reqs, o, plan);
      reqs.forEach((r, i) => r.onOutput(o[i]));
      return reqs.map((r) => `${r.id}:${r.status}`);
    };
    const s1 = s.schedule();
    expect(s1.scheduled.map((r) => r.id)).toEqual(['a', 'b']);
    const s2 = s.schedule(); // step 1 in flight: a's decode needs a block, so b (newest) is preempted
    expect(s2.scheduled.map((r) => r.id)).toEqual(['a']);
    expect(s2.preemptions).toBe(1);
    expect(b.status).toBe('waiting');
    expect(apply(s1)).toEqual(['a:running', 'b:waiting']); // b still receives step 1's token
    expect(outs.get('b')!.map((o) => o.outputTokens)).toEqual([1]);
    let inflight = s2;
    for (let i = 0; i < 20 && (a.status !== 'finished' || b.status !== 'finished'); i++) {
      const next = s.schedule();
      apply(inflight);
      inflight = next;
    }
    apply(inflight);
    for (const id of ['a', 'b']) {
      const o = outs.get(id)!;
      expect(o.map((x) => x.outputTokens)).toEqual([1, 2, 3, 4]);
      expect(o[3].finishReason).toBe('length');
    }
    expect(s.kv.usage()).toBe(0);
    expect(s.generationTokens).toBe(8);
  });
});

describe('--async-scheduling flag', () => {
  it('defaults on, as vLLM 0.19; --no-async-scheduling turns it off', () => {
    expect(resolveEngineConfig({}).asyncScheduling).toBe(true);
    expect(resolveEngineConfig({ asyncScheduling: false }).asyncScheduling).toBe(false);
  });

  it('round-trips through parseServeArgs / toServeArgs, for the simulator and for real vLLM', () => {
    for (const v of [true, false]) {
      const argv = [v ? '--async-scheduling' : '--no-async-scheduling'];
      const flags = parseServeArgs(argv).flags;
      expect(flags).toEqual({ asyncScheduling: v });
      expect(toServeArgs(flags)).toEqual(argv);
      expect(toServeArgs(flags, { target: 'vllm' })).toEqual(argv);
      expect(parseServeArgs(toServeArgs(flags)).flags).toEqual(flags);
    }
  });
});
