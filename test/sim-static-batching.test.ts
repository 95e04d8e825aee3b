/**
 * `--loadlab-static-batching`: the simulator's static-batch mode, for lesson 03's demonstration only
 * (vLLM has no such mode: V1 admits WAITING every step, `vllm/v1/core/sched/scheduler.py`). A new batch
 * is admitted only when RUNNING is empty, from the requests that had arrived by then. Engine-level, on
 * a virtual clock; invariants only (who runs with whom, in what order), no wall-clock figures.
 */
import { describe, expect, it } from 'vitest';
import { resolveEngineConfig } from '../src/sim/engine/config';
import { parseServeArgs, toServeArgs } from '../src/vllm/flags';
import type { ServerFlags } from '../src/sim/engine/types';
import { makeHarness, median, randomPrompt, type Rec, submit, ttft } from './sim-engine-harness';
import { seededRng } from '../src/rng';

/** Requests whose [first output, last output] intervals overlap, chained: the batches as the client sees them. */
function clusters(recs: Rec[]): Rec[][] {
  const sorted = [...recs].sort((a, b) => a.outTimes[0] - b.outTimes[0]);
  const out: Rec[][] = [];
  let end = Number.NEGATIVE_INFINITY;
  for (const r of sorted) {
    if (r.outTimes[0] > end) out.push([]);
    out[out.length - 1].push(r);
    end = Math.max(end, r.outTimes[r.outTimes.length - 1]);
  }
  return out;
}

/** A burst of 12 at t = 0 (distinct 40-token prompts), max_num_seqs 4; every 4th request is long (64 tokens), the rest 8. */
function burst(flags: ServerFlags) {
  const h = makeHarness({ maxNumSeqs: 4, ...flags });
  const rng = seededRng(3);
  const recs = Array.from({ length: 12 }, (_, i) => ({
    long: i % 4 === 0,
    rec: submit(h, 0, randomPrompt(rng, 40), { maxTokens: i % 4 === 0 ? 64 : 8 }),
  }));
  h.clock.runUntilIdle();
  h.engine.close();
  return { h, recs };
}

describe('static batching (simulator only, --loadlab-static-batching)', () => {
  it('is off by default, parsed from its flag, and never sent to a real vLLM', () => {
    expect(resolveEngineConfig({}).staticBatching).toBe(false);
    expect(resolveEngineConfig({ loadlabStaticBatching: true }).staticBatching).toBe(true);
    expect(parseServeArgs(['--loadlab-static-batching']).flags.loadlabStaticBatching).toBe(true);
    expect(toServeArgs({ loadlabStaticBatching: true, maxNumSeqs: 4 }, { target: 'sim' })).toContain('--loadlab-static-batching');
    expect(toServeArgs({ loadlabStaticBatching: true, maxNumSeqs: 4 }, { target: 'vllm' })).toEqual(['--max-num-seqs', '4']);
  });

  for (const asyncScheduling of [true, false]) {
    it(`admits a new batch only when the running batch is empty (async scheduling ${asyncScheduling})`, () => {
      const { h, recs } = burst({ loadlabStaticBatching: true, asyncScheduling });
      expect(recs.every((r) => r.rec.finish === 'length')).toBe(true);
      // Three disjoint batches of 4: nobody starts while a member of the batch before is still decoding.
      const batches = clusters(recs.map((r) => r.rec));
      expect(batches.map((b) => b.length)).toEqual([4, 4, 4]);
      // The engine never ran a step with more than max_num_seqs, and every batch waits for its longest member.
      expect(Math.max(...h.steps.map((s) => s.running))).toBeLessThanOrEqual(4);
      for (let b = 1; b < batches.length; b++) {
        const prevEnd = Math.max(...batches[b - 1].map((r) => r.outTimes[r.outTimes.length - 1]));
        const longest = batches[b - 1].reduce((a, r) => (r.outputTokens > a.outputTokens ? r : a));
        expect(longest.outputTokens).toBe(64);
        for (const r of batches[b]) expect(r.outTimes[0]).toBeGreaterThan(prevEnd);
      }
    });
  }

  it('continuous batching (the default) refills freed slots at once: one overlapping run, short requests served sooner', () => {
    const cont = burst({});
    const stat = burst({ loadlabStaticBatching: true });
    expect(clusters(cont.recs.map((r) => r.rec))).toHaveLength(1);
    const shortTtft = (x: typeof cont) => median(x.recs.filter((r) => !r.long).map((r) => ttft(r.rec)));
    const shortE2e = (x: typeof cont) =>
      median(x.recs.filter((r) => !r.long).map((r) => r.rec.outTimes.at(-1)! - r.rec.arrivalMs));
    expect(shortTtft(stat)).toBeGreaterThan(shortTtft(cont));
    expect(shortE2e(stat)).toBeGreaterThan(shortE2e(cont));
    // Same work either way: nothing lost, every token produced.
    const tokens = (x: typeof cont) => x.recs.reduce((s, r) => s + r.rec.outputTokens, 0);
    expect(tokens(stat)).toBe(tokens(cont));
  });

  it('admits a batch larger than one step budget over several steps, but not a request that arrived after it opened', () => {
    const h = makeHarness({ loadlabStaticBatching: true, maxNumSeqs: 8, maxNumBatchedTokens: 64 });
    const rng = seededRng(5);
    const members = Array.from({ length: 8 }, () => submit(h, 0, randomPrompt(rng, 32), { maxTokens: 16 }));
    const late = submit(h, 1, randomPrompt(rng, 32), { maxTokens: 4 });
    h.clock.runUntilIdle();
    h.engine.close();
    const firstSteps = new Set(members.map((r) => r.outTimes[0]));
    expect(firstSteps.size).toBeGreaterThan(1); // 8 × 32 prompt tokens do not fit in one 64-token step
    const batches = clusters([...members, late]);
    expect(batches.map((b) => b.length)).toEqual([8, 1]);
    expect(batches[1][0]).toBe(late);
  });
});
