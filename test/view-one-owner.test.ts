// One owner per concept (issue #11): the charts compute percentiles with stats/percentile and
// counter increments with server/counters, so a chart never disagrees with the table beside it.
import { describe, expect, it } from 'vitest';
import { abComparison, itlTimeSeries, latencyCdf, serverTimeline } from '../src/view';
import { percentile } from '../src/stats/percentile';
import { summarizeRun } from '../src/stats/summary';
import { counterIncrease, counterRates, prefixHitRates } from '../src/stats/counters';
import { seededRng } from '../src/rng';
import type { MetricsSample } from '../src/types';
import { rec } from './helpers/view-fixtures';

/** Samples whose interpolation weights are awkward floats (where two formulas differ in the last bits). */
function samples(seed: number, n: number): number[] {
  const rng = seededRng(seed);
  return Array.from({ length: n }, () => rng() * 1000 + rng() * 1e-3);
}

describe('chart percentiles are stats/percentile, to the bit', () => {
  it('latencyCdf markers equal percentile() for 400 samples of varied size', () => {
    for (let k = 0; k < 400; k++) {
      const values = samples(k, 2 + (k % 97));
      const fig = latencyCdf([{ label: 'a', values }], { markers: [0.5, 0.9, 0.95, 0.99, 0.999, 0.07] });
      expect(fig.data[1].x).toEqual([50, 90, 95, 99, 99.9, 7].map((p) => percentile(values, p)));
    }
  });
  it('abComparison points equal percentile() and the summary table', () => {
    for (let k = 0; k < 200; k++) {
      const values = samples(1000 + k, 3 + (k % 53));
      for (const p of [50, 95, 99, 'p99.9']) {
        const pNum = typeof p === 'number' ? p : 99.9;
        expect(abComparison([{ label: 'A', values }], { metric: 'TTFT', percentile: p }).data[0].y).toEqual([
          percentile(values, pNum),
        ]);
      }
    }
  });
  it('the ITL median line of itlTimeSeries equals the summary p50 of ITL', () => {
    const rng = seededRng(7);
    const records = Array.from({ length: 12 }, (_, i) => {
      let t = 5 + rng() * 10;
      const chunks = [t];
      for (let k = 0; k < 9; k++) chunks.push((t += rng() * 40 + 1e-3));
      return rec(i, { start: 0, chunks });
    });
    const median = summarizeRun(records).itlMs.p50;
    const shape = (itlTimeSeries(records).layout.shapes ?? [])[0] as { y0: number };
    expect(shape.y0).toBe(median);
  });
});

describe('chart counters are server/counters, across a counter reset', () => {
  // The server restarts between 2 s and 3 s: every counter drops and counts again from 0.
  const metrics: MetricsSample[] = [
    { tMs: 0, preemptionsTotal: 5, generationTokensTotal: 1000, prefixQueriesTotal: 100, prefixHitsTotal: 50 },
    { tMs: 1000, preemptionsTotal: 9, generationTokensTotal: 1800, prefixQueriesTotal: 300, prefixHitsTotal: 170 },
    { tMs: 2000, preemptionsTotal: 9, generationTokensTotal: 2500, prefixQueriesTotal: 400, prefixHitsTotal: 200 },
    { tMs: 3000, preemptionsTotal: 3, generationTokensTotal: 400, prefixQueriesTotal: 80, prefixHitsTotal: 20 },
    { tMs: 4000, preemptionsTotal: 4, generationTokensTotal: 1300, prefixQueriesTotal: 180, prefixHitsTotal: 90 },
  ];
  const fig = serverTimeline([rec(0, { start: 0, chunks: [10, 20] })], metrics, {
    series: ['preemptions', 'generationTokensPerSec', 'prefixHitRate'],
  });
  const trace = (name: string) => fig.data.find((t) => t.name === name)!;

  it('preemption markers add up to counterIncrease, the reset included', () => {
    const ys = trace('preemptions (+n per scrape)').y as number[];
    expect(ys.reduce((a, b) => a + b, 0)).toBe(counterIncrease(metrics, 'preemptionsTotal'));
    expect(ys).toEqual([4, 3, 1]);
    expect(fig.layout.shapes).toHaveLength(3);
  });
  it('token rates equal counterRates, with no zero dip at the restart', () => {
    const ys = trace('generation tokens/s').y as number[];
    expect(ys).toEqual(counterRates(metrics, 'generationTokensTotal').map((r) => r.perSec));
    expect(Math.min(...ys)).toBeGreaterThan(0);
  });
  it('prefix-cache hit rate equals prefixHitRates (in %)', () => {
    expect(trace('prefix-cache hit rate (%)').y).toEqual(prefixHitRates(metrics).map((r) => 100 * r.hitRate));
  });
});
