import { describe, expect, it } from 'vitest';
import { randExp, randNormal, seededRng } from '../src/rng';
import { bootstrapDiffCI, bootstrapPercentileCI } from '../src/stats/bootstrap';
import { percentile } from '../src/stats/percentile';

// 50 lognormal TTFT-like values (median 200 ms), the seed course's N = 50.
const rng = seededRng(1);
const sample50 = Array.from({ length: 50 }, () => 200 * Math.exp(0.5 * randNormal(rng)));

/** The textbook bootstrap (copy, resample, sort, percentile), to check the count-walking shortcut. */
function naiveCI(values: number[], p: number, iterations: number, seed: number) {
  const r = seededRng(seed);
  const sorted = [...values].sort((a, b) => a - b);
  const est: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const res = sorted.map(() => sorted[Math.floor(r() * sorted.length)]);
    est.push(percentile(res, p));
  }
  return { lo: percentile(est, 2.5), hi: percentile(est, 97.5) };
}

describe('bootstrapPercentileCI', () => {
  it('is deterministic for a seed and changes with it', () => {
    const a = bootstrapPercentileCI(sample50, 95, { seed: 7 });
    expect(bootstrapPercentileCI(sample50, 95, { seed: 7 })).toEqual(a);
    expect(bootstrapPercentileCI(sample50, 95, { seed: 8 })).not.toEqual(a);
  });

  it('equals the naive resample-and-sort bootstrap exactly', () => {
    for (const p of [50, 90, 99]) {
      const fast = bootstrapPercentileCI(sample50, p, { iterations: 200, seed: 3 });
      const slow = naiveCI(sample50, p, 200, 3);
      expect(fast.lo).toBe(slow.lo);
      expect(fast.hi).toBe(slow.hi);
    }
  });

  it('contains the estimate, and is wider for p99 than p50 at n = 50', () => {
    const p50 = bootstrapPercentileCI(sample50, 50);
    const p99 = bootstrapPercentileCI(sample50, 99);
    for (const ci of [p50, p99]) {
      expect(ci.lo).toBeLessThanOrEqual(ci.estimate);
      expect(ci.hi).toBeGreaterThanOrEqual(ci.estimate);
      expect(ci.iterations).toBe(1000);
      expect(ci.confidence).toBe(0.95);
    }
    expect(p50.estimate).toBe(percentile(sample50, 50));
    // True for ~95% of such samples (190/200 seeds checked), not all: a resample never exceeds the
    // sample max, so when the top values happen to bunch, the bootstrap understates p99's uncertainty.
    expect(p99.hi - p99.lo).toBeGreaterThan(p50.hi - p50.lo);
  });

  it('higher confidence gives a wider interval', () => {
    const c80 = bootstrapPercentileCI(sample50, 90, { confidence: 0.8 });
    const c99 = bootstrapPercentileCI(sample50, 90, { confidence: 0.99 });
    expect(c99.hi - c99.lo).toBeGreaterThan(c80.hi - c80.lo);
  });

  it('handles empty and single samples, and rejects bad options', () => {
    expect(bootstrapPercentileCI([], 50).estimate).toBeNaN();
    expect(bootstrapPercentileCI([5], 99)).toMatchObject({ estimate: 5, lo: 5, hi: 5 });
    expect(() => bootstrapPercentileCI(sample50, 101)).toThrow(/0 to 100/);
    expect(() => bootstrapPercentileCI(sample50, 50, { iterations: 0 })).toThrow(/integer ≥ 1/);
    expect(() => bootstrapPercentileCI(sample50, 50, { confidence: 95 })).toThrow(/e\.g\. 0\.95/);
  });

  it('handles 100k samples quickly (200 iterations)', () => {
    const r = seededRng(1);
    const big = Array.from({ length: 100_000 }, () => randExp(r, 100));
    const t0 = performance.now();
    const ci = bootstrapPercentileCI(big, 99, { iterations: 200 });
    expect(performance.now() - t0).toBeLessThan(5000); // ~0.2 s here; generous for slow CI machines
    expect(ci.lo).toBeLessThan(ci.estimate);
    expect(ci.hi).toBeGreaterThan(ci.estimate);
  });
});

describe('bootstrapDiffCI', () => {
  it('estimates percentile(b) − percentile(a) and separates a real shift from none', () => {
    const r = seededRng(9);
    const a = Array.from({ length: 200 }, () => randExp(r, 100));
    const slower = a.map((x) => x + 50);
    const shifted = bootstrapDiffCI(a, slower, 50);
    expect(shifted.estimate).toBeCloseTo(50, 9);
    expect(shifted.lo).toBeGreaterThan(0);
    const same = bootstrapDiffCI(a, [...a].reverse(), 50);
    expect(same.estimate).toBe(0);
    expect(same.lo).toBeLessThan(0);
    expect(same.hi).toBeGreaterThan(0);
    expect(bootstrapDiffCI(a, slower, 50)).toEqual(shifted);
    expect(bootstrapDiffCI([], a, 50).estimate).toBeNaN();
  });
});
