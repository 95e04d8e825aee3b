/**
 * Course scenarios on the simulated engine (virtual clock): chunked prefill and TTFT,
 * prefill interference in a short/long mix, KV overcommit (recompute and swap), prefix caching.
 */
import { describe, expect, it } from 'vitest';
import { randExp, randInt, seededRng } from '../src/rng';
import { DEFAULT_PROFILE } from '../src/sim/engine/profile';
import type { ServerFlags } from '../src/sim/engine/types';
import { itls, makeHarness, median, pct, randomPrompt, submit, ttft, type Rec } from './sim-engine-harness';

function chunkedScenario(flags: ServerFlags): { p99: number; p50: number } {
  const h = makeHarness(flags);
  const rng = seededRng(11);
  submit(h, 0, randomPrompt(rng, 4096), { maxTokens: 10 });
  const shorts: Rec[] = [];
  for (let i = 0; i < 20; i++) shorts.push(submit(h, 50, randomPrompt(rng, 30), { maxTokens: 10 }));
  h.clock.runUntilIdle();
  const t = shorts.map(ttft);
  for (const r of h.recs) expect(r.outputTokens).toBe(10);
  return { p99: pct(t, 0.99), p50: median(t) };
}

describe('chunked prefill and short-prompt TTFT', () => {
  it('V1: the running long prefill takes the budget first; only the threshold lets shorts in', () => {
    const a = chunkedScenario({ enableChunkedPrefill: false });
    const b = chunkedScenario({ maxNumBatchedTokens: 512 });
    const c = chunkedScenario({ maxNumBatchedTokens: 512, longPrefillTokenThreshold: 128 });
    console.log(
      `short-prompt TTFT p99/p50 ms: (a) chunked off ${a.p99.toFixed(0)}/${a.p50.toFixed(0)}, ` +
        `(b) 512 ${b.p99.toFixed(0)}/${b.p50.toFixed(0)}, (c) 512+threshold 128 ${c.p99.toFixed(0)}/${c.p50.toFixed(0)}`,
    );
    expect(Math.abs(b.p99 - a.p99) / a.p99).toBeLessThanOrEqual(0.3);
    expect(c.p99).toBeLessThanOrEqual(a.p99 / 3);
  });
});

function mixScenario(flags: ServerFlags): { itlP99: number; itlP50: number; maxItl: number } {
  const h = makeHarness(flags);
  const rng = seededRng(23);
  let t = 0;
  for (let i = 0; i < 80; i++) {
    t += randExp(rng, 50); // ≈20 req/s for ≈4 s
    const long = rng() < 0.1;
    submit(h, t, randomPrompt(rng, long ? randInt(rng, 3800, 4200) : randInt(rng, 50, 300)), {
      maxTokens: long ? 50 : randInt(rng, 100, 200),
    });
  }
  h.clock.runUntilIdle();
  const all = h.recs.flatMap(itls);
  for (const r of h.recs) expect(r.finish).toBe('length');
  return { itlP99: pct(all, 0.99), itlP50: median(all), maxItl: Math.max(...all) };
}

describe('90/10 short/long mix: prefill interference on decoding streams', () => {
  it('chunked prefill cuts the p99 ITL to ≤ 1/3 of chunked-off', () => {
    const off = mixScenario({ enableChunkedPrefill: false });
    const on2048 = mixScenario({});
    const on512 = mixScenario({ maxNumBatchedTokens: 512 });
    const f = (x: { itlP99: number; itlP50: number; maxItl: number }) =>
      `p99 ${x.itlP99.toFixed(0)} / p50 ${x.itlP50.toFixed(1)} / max ${x.maxItl.toFixed(0)}`;
    console.log(`mix ITL ms: off ${f(off)}; on 2048 ${f(on2048)}; on 512 ${f(on512)}`);
    expect(on512.itlP99).toBeLessThanOrEqual(off.itlP99 / 3);
    expect(on2048.itlP99).toBeLessThan(off.itlP99);
  });
});

function overcommit(flags: ServerFlags, profile = DEFAULT_PROFILE) {
  const h = makeHarness(flags, undefined, profile);
  const rng = seededRng(5);
  for (let i = 0; i < 60; i++) submit(h, 0, randomPrompt(rng, 1500), { maxTokens: 200, ignoreEos: true });
  h.clock.runUntilIdle();
  const all = h.recs.flatMap(itls);
  const prefillTokens = h.steps.reduce((s, x) => s + x.prefillTokens, 0);
  const makespanMs = Math.max(...h.recs.map((r) => r.outTimes[r.outTimes.length - 1]));
  return { h, stats: h.engine.stats(), maxItl: Math.max(...all), p50: median(all), prefillTokens, makespanMs };
}

describe('KV overcommit and preemption', () => {
  it('recompute: preemptions, ITL stalls, every request completes', () => {
    const { h, stats, maxItl, p50, prefillTokens } = overcommit({ numGpuBlocksOverride: 1500 });
    console.log(
      `overcommit (1500 blocks, recompute): preemptions ${stats.numPreemptions}, ITL p50 ${p50.toFixed(1)} max ${maxItl.toFixed(0)} ms, ` +
        `prefill tokens ${prefillTokens} (prompts 90000), steps ${stats.steps}`,
    );
    expect(stats.numPreemptions).toBeGreaterThan(0);
    expect(maxItl).toBeGreaterThan(10 * p50);
    expect(prefillTokens).toBeGreaterThan(60 * 1500); // recomputed work
    for (const r of h.recs) {
      expect(r.finish).toBe('length');
      expect(r.outputTokens).toBe(200);
      expect(r.outTimes.length).toBe(200);
    }
    expect(stats.kvUsage).toBe(0);
    expect(stats.running + stats.waiting).toBe(0);
    expect(stats.generationTokens).toBe(60 * 200);
    expect(stats.promptTokens).toBe(60 * 1500);
  });

  it('sized to fit: zero preemptions', () => {
    const { stats } = overcommit({});
    expect(stats.numPreemptions).toBe(0);
  });

  it('swap (V0): preemptions without recompute; PCIe time is charged', () => {
    const { h, stats, maxItl, p50, prefillTokens } = overcommit({ numGpuBlocksOverride: 1500, preemptionMode: 'swap' });
    console.log(
      `overcommit (1500 blocks, swap): preemptions ${stats.numPreemptions}, swapped out/in ${stats.swapOutBlocks}/${stats.swapInBlocks} blocks, ` +
        `ITL p50 ${p50.toFixed(1)} max ${maxItl.toFixed(0)} ms, prefill tokens ${prefillTokens}`,
    );
    expect(stats.numPreemptions).toBeGreaterThan(0);
    expect(stats.swapOutBlocks).toBeGreaterThan(0);
    expect(stats.swapInBlocks).toBe(stats.swapOutBlocks);
    expect(prefillTokens).toBe(60 * 1500); // nothing recomputed
    for (const r of h.recs) expect(r.outputTokens).toBe(200);
    // Same run over a 10× slower host link: the swap traffic shows up in the step times.
    const slowLink = { ...DEFAULT_PROFILE, gpu: { ...DEFAULT_PROFILE.gpu, pcieBytesPerSec: 2.5e9 } };
    const slow = overcommit({ numGpuBlocksOverride: 1500, preemptionMode: 'swap' }, slowLink);
    const swapMsAt = (bw: number) => (((stats.swapOutBlocks + stats.swapInBlocks) * 917_504) / bw) * 1e3;
    expect(slow.makespanMs - overcommit({ numGpuBlocksOverride: 1500, preemptionMode: 'swap' }).makespanMs).toBeCloseTo(
      swapMsAt(2.5e9) - swapMsAt(25e9),
      3,
    );
  });
});

describe('prefix caching', () => {
  function run(flags: ServerFlags, shared: boolean) {
    const h = makeHarness(flags);
    const rng = seededRng(9);
    const prefix = randomPrompt(rng, 2000);
    for (let i = 0; i < 10; i++) {
      const suffix = randomPrompt(rng, 20);
      const prompt = shared ? [...prefix, ...suffix] : randomPrompt(rng, 2020);
      submit(h, i * 500, prompt, { maxTokens: 20 });
    }
    let q0 = 0;
    let h0 = 0;
    h.clock.advance(400); // the first request is done: count lookups after it
    q0 = h.engine.stats().prefixCacheQueries;
    h0 = h.engine.stats().prefixCacheHits;
    h.clock.runUntilIdle();
    const s = h.engine.stats();
    const later = h.recs.slice(1);
    return {
      hitRate: (s.prefixCacheHits - h0) / (s.prefixCacheQueries - q0 || 1),
      queries: s.prefixCacheQueries,
      hits: s.prefixCacheHits,
      ttft: median(later.map(ttft)),
      cached: later.map((r) => r.cachedTokens),
    };
  }

  it('shared 2000-token prefix: >80% hit rate and much lower TTFT; off: 0 hits', () => {
    const shared = run({}, true);
    const unique = run({}, false);
    const off = run({ enablePrefixCaching: false }, true);
    console.log(
      `prefix caching: hit rate ${(100 * shared.hitRate).toFixed(1)}%, TTFT shared ${shared.ttft.toFixed(1)} ms vs unique ` +
        `${unique.ttft.toFixed(1)} ms; caching off: hits ${off.hits}, TTFT ${off.ttft.toFixed(1)} ms`,
    );
    expect(shared.hitRate).toBeGreaterThan(0.8);
    expect(shared.cached.every((c) => c === 2000)).toBe(true);
    expect(shared.ttft).toBeLessThan(unique.ttft / 3);
    expect(unique.hits).toBe(0);
    expect(off.hits).toBe(0);
    expect(off.queries).toBe(0);
    expect(off.ttft).toBeGreaterThan(shared.ttft * 3);
  });
});
