import { describe, expect, it } from 'vitest';
import { randNormal, seededRng } from '../src/rng';
import { bootstrapPercentileCI } from '../src/stats/bootstrap';
import { bootstrapClusterDiffCI, bootstrapClusterPercentileCI } from '../src/stats/cluster-bootstrap';
import { percentile } from '../src/stats/percentile';

/** 40 requests × 50 gaps: each request has its own level (a slow or fast batch), gaps vary little around it. */
function correlatedGroups(seed: number, scale = 1): number[][] {
  const rng = seededRng(seed);
  return Array.from({ length: 40 }, () => {
    const level = scale * 10 * Math.exp(0.4 * randNormal(rng));
    return Array.from({ length: 50 }, () => level * (1 + 0.02 * randNormal(rng)));
  });
}

/** The textbook cluster bootstrap (draw groups, concatenate, percentile), to check the weight-walking shortcut. */
function naiveClusterCI(groups: number[][], p: number, iterations: number, seed: number) {
  const r = seededRng(seed);
  const kept = groups.filter((g) => g.length > 0);
  const est: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const res: number[] = [];
    for (let k = 0; k < kept.length; k++) res.push(...kept[Math.floor(r() * kept.length)]);
    est.push(percentile(res, p));
  }
  return { lo: percentile(est, 2.5), hi: percentile(est, 97.5) };
}

describe('bootstrapClusterPercentileCI', () => {
  const groups = correlatedGroups(1);

  it('equals the naive draw-concatenate-percentile bootstrap exactly, and skips empty groups', () => {
    const withEmpty = [[], ...groups.slice(0, 20), [], ...groups.slice(20)];
    for (const p of [50, 90, 99]) {
      const fast = bootstrapClusterPercentileCI(withEmpty, p, { iterations: 200, seed: 3 });
      const slow = naiveClusterCI(groups, p, 200, 3);
      expect(fast.lo).toBe(slow.lo);
      expect(fast.hi).toBe(slow.hi);
      expect(fast.estimate).toBe(percentile(groups.flat(), p));
    }
  });

  it('is wider than resampling single gaps when the gaps of a request move together', () => {
    for (const p of [50, 99]) {
      const byRequest = bootstrapClusterPercentileCI(groups, p);
      const byGap = bootstrapPercentileCI(groups.flat(), p);
      expect(byRequest.hi - byRequest.lo).toBeGreaterThan(2 * (byGap.hi - byGap.lo));
      expect(byRequest.lo).toBeLessThanOrEqual(byRequest.estimate);
      expect(byRequest.hi).toBeGreaterThanOrEqual(byRequest.estimate);
    }
  });

  it('is deterministic for a seed; no values at all gives NaN; bad options throw', () => {
    expect(bootstrapClusterPercentileCI(groups, 99, { seed: 5 })).toEqual(bootstrapClusterPercentileCI(groups, 99, { seed: 5 }));
    expect(Number.isNaN(bootstrapClusterPercentileCI([[], []], 50).estimate)).toBe(true);
    expect(() => bootstrapClusterPercentileCI(groups, 101)).toThrow(RangeError);
    expect(() => bootstrapClusterPercentileCI(groups, 50, { iterations: 0 })).toThrow(/iterations/);
  });
});

describe('bootstrapClusterDiffCI', () => {
  it('the difference of two runs: its estimate, an interval that excludes 0 for a 2× shift, includes it for the same data', () => {
    const a = correlatedGroups(1);
    const b = correlatedGroups(2, 2);
    const d = bootstrapClusterDiffCI(a, b, 50);
    expect(d.estimate).toBeCloseTo(percentile(b.flat(), 50) - percentile(a.flat(), 50), 9);
    expect(d.lo).toBeGreaterThan(0);
    const same = bootstrapClusterDiffCI(a, a, 50);
    expect(same.lo).toBeLessThan(0);
    expect(same.hi).toBeGreaterThan(0);
    expect(Number.isNaN(bootstrapClusterDiffCI([], b, 50).estimate)).toBe(true);
  });
});
