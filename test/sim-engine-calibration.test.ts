/**
 * Calibration checks of the simulated engine against sim-calibration.md (virtual clock,
 * engine-side times): single-stream TPOT/TTFT, 4k prefill, throughput vs concurrency.
 */
import { describe, expect, it } from 'vitest';
import { addDecode, addPrefill, emptyBatch, stepBreakdown, stepTimeMs } from '../src/sim/engine/cost';
import { seededRng } from '../src/rng';
import { closedLoopThroughput, itls, makeHarness, median, randomPrompt, submit, ttft } from './sim-engine-harness';

describe('cost model (Part B table)', () => {
  it('reproduces the derived decode and prefill step times', () => {
    const decode = (b: number, ctx: number) => {
      const batch = emptyBatch();
      for (let i = 0; i < b; i++) addDecode(batch, ctx);
      return stepTimeMs(batch);
    };
    expect(decode(1, 512)).toBeCloseTo(6.7, 1);
    expect(decode(32, 1000)).toBeGreaterThan(8.6);
    expect(decode(32, 1000)).toBeLessThan(9.6);
    expect(decode(256, 512)).toBeGreaterThan(36);
    expect(decode(256, 512)).toBeLessThan(39);
    const chunk = (p: number, k: number) => {
      const batch = emptyBatch();
      addPrefill(batch, p, k);
      return stepTimeMs(batch);
    };
    expect(chunk(50, 0)).toBeCloseTo(7.9, 0);
    expect(chunk(2048, 0) + chunk(2048, 2048)).toBeGreaterThan(420);
    expect(chunk(2048, 0) + chunk(2048, 2048)).toBeLessThan(440);
  });

  it('charges swap traffic at PCIe bandwidth plus a per-copy cost', () => {
    const batch = emptyBatch();
    addDecode(batch, 100);
    const base = stepTimeMs(batch);
    batch.swapBytes = 100 * 917_504;
    batch.swapCopies = 100 * 56;
    const b = stepBreakdown(batch);
    expect(b.swapMs).toBeCloseTo(100 * 56 * 0.003 + (100 * 917_504) / 25e6, 6);
    expect(b.totalMs).toBeCloseTo(base + b.swapMs, 6);
  });
});

describe('single stream', () => {
  it('50-token prompt: TPOT 6–9 ms, TTFT 8–30 ms engine-side', () => {
    const h = makeHarness();
    const r = submit(h, 0, randomPrompt(seededRng(1), 50), { maxTokens: 100 });
    h.clock.runUntilIdle();
    const tpot = (r.outTimes[r.outTimes.length - 1] - r.outTimes[0]) / (r.outTimes.length - 1);
    console.log(
      `single stream: TTFT ${ttft(r).toFixed(2)} ms, TPOT ${tpot.toFixed(2)} ms, median ITL ${median(itls(r)).toFixed(2)} ms`,
    );
    expect(r.outputTokens).toBe(100);
    expect(r.finish).toBe('length');
    expect(tpot).toBeGreaterThan(6);
    expect(tpot).toBeLessThan(9);
    expect(ttft(r)).toBeGreaterThanOrEqual(8 - 0.5);
    expect(ttft(r)).toBeLessThan(30);
  });

  it('a ~4k-token prompt prefills in 0.35–0.6 s', () => {
    const h = makeHarness();
    const r = submit(h, 0, randomPrompt(seededRng(2), 4096), { maxTokens: 2 });
    h.clock.runUntilIdle();
    console.log(`4096-token prefill: TTFT ${ttft(r).toFixed(1)} ms in ${h.steps[0].prefillTokens}-token chunks`);
    expect(ttft(r)).toBeGreaterThan(350);
    expect(ttft(r)).toBeLessThan(600);
  });
});

describe('throughput vs concurrency (closed loop)', () => {
  it('grows ≥5× from 1 to 64 and flattens', () => {
    const tput: Record<number, number> = {};
    for (const c of [1, 8, 16, 32, 64]) {
      tput[c] = closedLoopThroughput(c, 100, [128, 256], 2000, 8000).tokensPerSec;
    }
    console.log(
      'output tok/s by concurrency: ' +
        Object.entries(tput)
          .map(([c, t]) => `${c}: ${t.toFixed(0)}`)
          .join(', '),
    );
    expect(tput[64]).toBeGreaterThanOrEqual(5 * tput[1]);
    for (const [a, b] of [
      [1, 8],
      [8, 16],
      [16, 32],
      [32, 64],
    ])
      expect(tput[b]).toBeGreaterThan(tput[a]);
    // Flattening: relative gain 32→64 much smaller than 1→8.
    expect(tput[64] / tput[32]).toBeLessThan(0.5 * (tput[8] / tput[1]));
  });
});
