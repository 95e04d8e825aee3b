import { describe, expect, it } from 'vitest';
import { scrapeGaps, startMetricsSampler } from '../src/observe/sampler';

describe('scrapeGaps (the /metrics sampler jitter)', () => {
  it('draws gaps within intervalMs × [1 − jitter, 1 + jitter], averaging intervalMs, repeatable by seed', () => {
    const a = scrapeGaps(250, 0.5, 7);
    const b = scrapeGaps(250, 0.5, 7);
    const gaps = Array.from({ length: 2000 }, () => a());
    expect(gaps).toEqual(Array.from({ length: 2000 }, () => b()));
    for (const g of gaps) {
      expect(g).toBeGreaterThanOrEqual(125);
      expect(g).toBeLessThanOrEqual(375);
    }
    const mean = gaps.reduce((s, g) => s + g, 0) / gaps.length;
    expect(Math.abs(mean - 250)).toBeLessThan(10);
    expect(new Set(gaps).size).toBeGreaterThan(1900);
    const c = scrapeGaps(250, 0.5, 8);
    expect(Array.from({ length: 5 }, () => c())).not.toEqual(gaps.slice(0, 5));
  });

  it('jitter 0 is a fixed period', () => {
    const g = scrapeGaps(250, 0, 1);
    expect([g(), g(), g()]).toEqual([250, 250, 250]);
  });

  it('cannot phase-lock with arrivals at the same period: sample phases spread over the whole period', () => {
    // Arrivals every 250 ms (4/s); each lasts 60 ms. A fixed 250 ms period sees the same phase every time.
    const phases = (jitter: number) => {
      const gap = scrapeGaps(250, jitter, 1);
      const out: number[] = [];
      let t = 100; // first scrape 100 ms after an arrival: outside every 60 ms request
      for (let i = 0; i < 200; i++, t += gap()) out.push(t % 250);
      return out;
    };
    const busy = (ps: number[]) => ps.filter((p) => p < 60).length;
    expect(busy(phases(0))).toBe(0); // aliasing: the server always looks idle
    const jittered = phases(0.5);
    expect(busy(jittered)).toBeGreaterThan(0);
    const bins = new Set(jittered.map((p) => Math.floor(p / 25)));
    expect(bins.size).toBe(10); // every tenth of the period is sampled
  });

  it('rejects a jitter outside 0..0.9 with a message naming the range', () => {
    expect(() => startMetricsSampler({ baseUrl: 'http://127.0.0.1:1', jitter: 1 })).toThrow(
      /jitter must be a fraction 0\.\.0\.9/,
    );
    expect(() => startMetricsSampler({ baseUrl: 'http://127.0.0.1:1', jitter: -0.1 })).toThrow(/jitter/);
  });
});
