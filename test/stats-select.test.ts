// Percentiles by selection (src/stats/select.ts) give what the sort-based ones give (src/stats/percentile.ts).
import { describe, expect, it } from 'vitest';
import { percentiles } from '../src/stats/percentile';
import { percentilesInPlace } from '../src/stats/select';
import { seededRng } from '../src/rng';

const PS = [0, 1, 25, 50, 90, 95, 99, 99.9, 100];

/** Both ways on one sample; the selection gets a copy (it reorders its input). */
function both(xs: number[]): [number[], number[]] {
  return [percentilesInPlace(Float64Array.from(xs), PS), percentiles(xs, PS)];
}

describe('percentilesInPlace', () => {
  it('pins [1..6] as numpy does: p50 3.5, p75 4.75, p99 5.95', () => {
    expect(percentilesInPlace(Float64Array.from([6, 2, 5, 1, 4, 3]), [50, 75, 99])).toEqual([3.5, 4.75, 5.95]);
  });

  it('equals the sorted method on random samples of many sizes, to the bit', () => {
    const rand = seededRng(16);
    for (const n of [1, 2, 3, 7, 100, 1001, 76_800]) {
      const xs = Array.from({ length: n }, () => rand() * 20 - 5);
      const [sel, sorted] = both(xs);
      expect(sel).toEqual(sorted);
    }
  });

  it('equals it on sorted, reversed, constant and heavily tied samples', () => {
    const rand = seededRng(7);
    const asc = Array.from({ length: 5000 }, (_, i) => i / 10);
    const ties = Array.from({ length: 5000 }, () => Math.floor(rand() * 4));
    for (const xs of [asc, [...asc].reverse(), new Array(999).fill(2.5), ties]) {
      const [sel, sorted] = both(xs);
      expect(sel).toEqual(sorted);
    }
  });

  it('gives NaN for an empty sample and for one with a NaN, as numpy', () => {
    expect(percentilesInPlace(new Float64Array(0), [50])).toEqual([NaN]);
    expect(percentilesInPlace(Float64Array.from([1, NaN, 3]), [50, 99])).toEqual([NaN, NaN]);
  });
});
