import { describe, expect, it } from 'vitest';
import { arrivalOffsets, burstOffsets, closedLoopStarts, gapsOf, openLoopOffsets } from '../src/schedule/arrivals';
import { burst, closedLoop, openLoop, timeline } from '../src/schedule/shapes';

function meanStd(xs: number[]): { mean: number; cv: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const v = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
  return { mean, cv: Math.sqrt(v) / mean };
}

describe('open-loop arrivals (vllm bench serve get_request)', () => {
  it('is deterministic per seed and differs across seeds', () => {
    expect(openLoopOffsets(100, 5, 1, 7)).toEqual(openLoopOffsets(100, 5, 1, 7));
    expect(openLoopOffsets(100, 5, 1, 7)).not.toEqual(openLoopOffsets(100, 5, 1, 8));
  });

  it('rescales so the last arrival is exactly N/rate', () => {
    for (const [n, rate, b] of [
      [10, 2, 1],
      [1000, 37, 0.3],
      [57, 0.5, 4],
    ] as const) {
      const t = openLoopOffsets(n, rate, b, 3);
      expect(t).toHaveLength(n);
      expect(t[n - 1]).toBeCloseTo((n / rate) * 1000, 6);
      for (let i = 1; i < n; i++) expect(t[i]).toBeGreaterThanOrEqual(t[i - 1]);
      expect(t[0]).toBeGreaterThan(0); // like vLLM, the first request waits one gap
    }
  });

  it('constant rate (burstiness Infinity) gives gaps of exactly 1/rate', () => {
    const t = openLoopOffsets(5, 4, Infinity);
    expect(t).toEqual([250, 500, 750, 1000, 1250]);
  });

  it('Poisson: mean gap 1/rate and CV ≈ 1', () => {
    const gaps = gapsOf(openLoopOffsets(20000, 10, 1, 1));
    const { mean, cv } = meanStd(gaps);
    expect(mean).toBeCloseTo(100, 6); // exact after the rescale
    expect(cv).toBeGreaterThan(0.95);
    expect(cv).toBeLessThan(1.05);
  });

  it('gamma burstiness: CV of gaps ≈ 1/sqrt(burstiness)', () => {
    for (const b of [0.25, 4]) {
      const { cv } = meanStd(gapsOf(openLoopOffsets(20000, 10, b, 2)));
      expect(cv).toBeGreaterThan(0.93 / Math.sqrt(b));
      expect(cv).toBeLessThan(1.07 / Math.sqrt(b));
    }
  });

  it('rate Infinity sends everything at 0', () => {
    expect(openLoopOffsets(3, Infinity)).toEqual([0, 0, 0]);
  });
});

describe('arrivalOffsets by shape', () => {
  it('burst, closed, open and timeline', () => {
    expect(arrivalOffsets(burst(), 4)).toEqual(burstOffsets(4));
    expect(arrivalOffsets(closedLoop(3), 10)).toBeNull();
    expect(arrivalOffsets(openLoop(2, { seed: 5 }), 20)).toEqual(openLoopOffsets(20, 2, 1, 5));
    expect(arrivalOffsets(timeline([0, 50, 50]), 3)).toEqual([0, 50, 50]);
    expect(() => arrivalOffsets(timeline([0, 50]), 3)).toThrow('timeline has 2 entries but 3 requests');
  });
});

describe('closedLoopStarts', () => {
  it('sends when a slot frees', () => {
    // 2 slots, service times 100, 50, 30, 100, 10
    expect(closedLoopStarts(5, 2, [100, 50, 30, 100, 10])).toEqual([0, 0, 50, 80, 100]);
    // concurrency 1 is back-to-back
    expect(closedLoopStarts(3, 1, () => 10)).toEqual([0, 10, 20]);
    expect(() => closedLoopStarts(3, 0, [])).toThrow('concurrency must be an integer ≥ 1, got 0');
  });
});
