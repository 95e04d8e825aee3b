import { describe as group, expect, it } from 'vitest';
import { describe, describeOwned, percentile, percentiles, summarizeLatency } from '../src/stats/percentile';

// Pinned values computed with numpy 1.24.2 (Debian /usr/bin/python3), default method 'linear':
// /usr/bin/python3 -c "import numpy as np
// a=[1,2,3,4,5,6]; print([repr(float(np.percentile(a,p))) for p in (0,50,75,99,100)])
// b=[40,15,50,35,20]; print([repr(float(np.percentile(b,p))) for p in (0,5,30,40,50,95,99,100)])
// c=[1,1,1,2,2,3,100]; print([repr(float(np.percentile(c,p))) for p in (25,50,90,99)])
// d=[12.5,7.25,99.125,43.0,43.0,0.5,250.75,18.0,61.5,5.0]; print([repr(float(np.percentile(d,p))) for p in (1,10,33.3,50,90,95,99,99.9)])
// print(repr(float(np.mean(d))), repr(float(np.std(d))))"
const D = [12.5, 7.25, 99.125, 43.0, 43.0, 0.5, 250.75, 18.0, 61.5, 5.0];

group('percentile (numpy linear)', () => {
  it('matches tinybench/numpy on [1..6]', () => {
    const a = [1, 2, 3, 4, 5, 6];
    expect(percentile(a, 50)).toBe(3.5);
    expect(percentile(a, 75)).toBe(4.75);
    expect(percentile(a, 99)).toBe(5.95);
    expect(percentile(a, 0)).toBe(1);
    expect(percentile(a, 100)).toBe(6);
  });

  it('sorts unsorted input without mutating it', () => {
    const b = [40, 15, 50, 35, 20];
    const ps = [0, 5, 30, 40, 50, 95, 99, 100];
    expect(ps.map((p) => percentile(b, p))).toEqual([15, 16, 23, 29, 35, 48, 49.6, 50]);
    expect(b).toEqual([40, 15, 50, 35, 20]);
    expect(percentiles(b, ps)).toEqual([15, 16, 23, 29, 35, 48, 49.6, 50]);
  });

  it('handles duplicates and a far outlier', () => {
    const c = [1, 1, 1, 2, 2, 3, 100];
    expect([25, 50, 90, 99].map((p) => percentile(c, p))).toEqual([1, 2, 41.80000000000003, 94.17999999999995]);
  });

  it('matches numpy to the bit on fractional values and fractional p', () => {
    expect([1, 10, 33.3, 50, 90, 95, 99, 99.9].map((p) => percentile(D, p))).toEqual([
      0.905, 4.55, 12.48425, 30.5, 114.28749999999995, 182.51874999999984, 237.10375000000002, 249.3853750000002,
    ]);
  });

  it('n = 1 gives the value at every p; empty gives NaN; NaN in input gives NaN', () => {
    for (const p of [0, 37.5, 100]) expect(percentile([7], p)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
    expect(percentile([1, NaN, 3], 50)).toBeNaN();
  });

  it('rejects p outside 0..100 with a message naming the fix', () => {
    expect(() => percentile([1], 101)).toThrow(/from 0 to 100/);
    expect(() => percentile([1], -1)).toThrow(/from 0 to 100/);
    expect(() => percentile([1], NaN)).toThrow(/99 for p99, not 0.99/);
    expect(() => percentile([1], Infinity)).toThrow(RangeError);
  });
});

group('describe / summarizeLatency', () => {
  it('gives the full Distribution, population std like np.std', () => {
    const d = describe(D);
    expect(d.n).toBe(10);
    expect(d.mean).toBeCloseTo(54.0625, 12);
    expect(d.std).toBeCloseTo(71.7719315348974, 12);
    expect(d.min).toBe(0.5);
    expect(d.max).toBe(250.75);
    expect(d.p50).toBe(30.5);
    expect(d.p90).toBe(114.28749999999995);
    expect(d.p95).toBe(182.51874999999984);
    expect(d.p99).toBe(237.10375000000002);
  });

  it('empty → n 0 and NaN elsewhere', () => {
    const d = describe([]);
    expect(d.n).toBe(0);
    for (const k of ['mean', 'std', 'min', 'p50', 'p90', 'p95', 'p99', 'max'] as const) expect(d[k]).toBeNaN();
    expect(summarizeLatency([]).p99).toBeNaN();
  });

  it('describeOwned gives the figures of describe to the bit, sorting its own array in place', () => {
    const xs = Array.from({ length: 1001 }, (_, i) => 10 + Math.sin(i * 12.9898) * 0.7 + (i % 7) * 1e-9);
    const owned = Float64Array.from(xs);
    expect(describeOwned(owned)).toEqual(describe(xs));
    expect(owned[0]).toBe(Math.min(...xs));
    const withNan = Float64Array.from([1, NaN, 3]);
    expect(describeOwned(withNan)).toEqual(describe([1, NaN, 3]));
    expect(describeOwned(new Float64Array(0))).toEqual(describe([]));
  });

  it('summarizeLatency returns { n, mean, p50, p95, p99 }', () => {
    expect(summarizeLatency([1, 2, 3, 4, 5, 6])).toEqual({ n: 6, mean: 3.5, p50: 3.5, p95: 5.75, p99: 5.95 });
  });
});
