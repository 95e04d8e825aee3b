import { describe, expect, it } from 'vitest';
import { nextSearchRate, type SearchPoint, searchInterval } from '../src/sweep/bisect';
import { attainmentOf, capacities, sloCriteria } from '../src/sweep/capacity';
import { findKnee, findSweepSaturation, type KneePoint, powerOf } from '../src/sweep/knee';
import { parseBounds, parseLoadList, pointName, roundLoad } from '../src/sweep/plan';
import { type SweepPoint, verdictOf } from '../src/sweep/point';
import { analyseSweep, provenanceOf } from '../src/sweep/sweep-file';
import type { RequestRecord } from '../src/types';

describe('sweep plan: lists, bounds and point names', () => {
  it('parses comma lists into sorted distinct loads, and names points as folders', () => {
    expect(parseLoadList('--max-concurrency', '16,1,4,4', 'concurrency')).toEqual([1, 4, 16]);
    expect(parseLoadList('--request-rate', '2, 0.5,1', 'rate')).toEqual([0.5, 1, 2]);
    expect(pointName('concurrency', 4)).toBe('c=4');
    expect(pointName('rate', 2.5)).toBe('rate=2.5');
    expect(roundLoad(33.125)).toBe(33.13);
    expect(parseBounds('1,32')).toEqual([1, 32]);
  });

  it('refuses a bad value naming the flag and the fix', () => {
    expect(() => parseLoadList('--max-concurrency', '1,x', 'concurrency')).toThrow(
      /--max-concurrency takes a comma list of integers ≥ 1.*got 'x'/,
    );
    expect(() => parseLoadList('--max-concurrency', '0,4', 'concurrency')).toThrow(/integers ≥ 1/);
    expect(() => parseLoadList('--request-rate', '1,inf', 'rate')).toThrow(/finite numbers > 0/);
    expect(() => parseLoadList('--request-rate', '1,,2', 'rate')).toThrow(/got ''/);
    expect(() => parseBounds('8,2')).toThrow(/LO < HI, e.g. --slo-search 1,32/);
    expect(() => parseBounds('4')).toThrow(/LO < HI/);
  });
});

/** Run the search against a made-up monotone server whose SLO capacity is `cap` req/s. */
function search(bounds: [number, number], steps: number, cap: number): { tried: number[]; why: string; history: SearchPoint[] } {
  const history: SearchPoint[] = [];
  for (;;) {
    const s = nextSearchRate(bounds, steps, history);
    if (!('next' in s)) return { tried: history.map((p) => p.value), why: s.why, history };
    expect(history.some((p) => p.value === s.next)).toBe(false); // never measures a rate twice
    history.push({ value: s.next, meets: s.next <= cap });
  }
}

describe('SLO search by bisection (vLLM serve_sla order: upper bound, lower bound, then between)', () => {
  it('brackets the capacity between the highest passing and the lowest failing rate', () => {
    const r = search([1, 64], 8, 7.3);
    expect(r.tried.slice(0, 2)).toEqual([64, 1]);
    expect(r.tried.length).toBeLessThanOrEqual(8);
    const { maxPassing, minFailing } = searchInterval(r.history);
    expect(maxPassing).toBeLessThanOrEqual(7.3);
    expect(minFailing).toBeGreaterThan(7.3);
    for (const v of r.tried) expect(v >= 1 && v <= 64).toBe(true);
    expect(r.why).toMatch(/8 points measured/);
  });

  it('narrows the interval at every step', () => {
    const widths: number[] = [];
    const history: SearchPoint[] = [];
    for (let i = 0; i < 7; i++) {
      const s = nextSearchRate([2, 50], 7, history);
      if (!('next' in s)) break;
      history.push({ value: s.next, meets: s.next <= 13 });
      const { maxPassing, minFailing } = searchInterval(history);
      if (maxPassing !== undefined && minFailing !== undefined) widths.push(minFailing - maxPassing);
    }
    for (let i = 1; i < widths.length; i++) expect(widths[i]).toBeLessThan(widths[i - 1]);
  });

  it('stops at once when the upper bound meets, or when the lower bound misses', () => {
    expect(search([1, 16], 6, 100)).toMatchObject({
      tried: [16],
      why: expect.stringMatching(/upper bound 16 req\/s meets.*raise it/),
    });
    expect(search([4, 16], 6, 2)).toMatchObject({
      tried: [16, 4],
      why: expect.stringMatching(/lower bound 4 req\/s misses.*lower it/),
    });
  });
});

const kp = (value: number, rps: number, tok: number, e2e: number): KneePoint => ({
  value,
  requestsPerSec: rps,
  outputTokensPerSec: tok,
  e2eP50Ms: e2e,
});

describe('knee and saturation from made-up points', () => {
  // A server with 4 slots: throughput grows to c=4, then latency grows instead.
  const pts = [kp(1, 10, 160, 100), kp(4, 38, 600, 105), kp(16, 40, 640, 400), kp(64, 40, 640, 1600)];

  it('the knee is the highest throughput ÷ latency, the saturation the first doubling that adds < 10 %', () => {
    expect(powerOf(pts[1])).toBeCloseTo(38 / 0.105);
    expect(findKnee(pts)).toMatchObject({ value: 4, rule: expect.stringMatching(/throughput ÷ latency/) });
    expect(findSweepSaturation(pts)).toMatchObject({ value: 4, rule: expect.stringMatching(/< 10 %/) });
    expect(findKnee([...pts].reverse()).value).toBe(4); // order does not matter
  });

  it('says why there is no knee or saturation when throughput still grows at the highest load', () => {
    const rising = [kp(1, 10, 160, 100), kp(2, 20, 320, 100), kp(4, 40, 640, 101)];
    const knee = findKnee(rising);
    expect(knee.value).toBeUndefined();
    expect(knee.why).toMatch(/at the highest load measured \(4\)/);
    expect(findSweepSaturation(rising).why).toMatch(/still grows/);
    expect(findKnee([pts[0]]).why).toMatch(/fewer than two/);
  });

  it('needs a 10 % drop in power at the highest load, and names loads it cannot tell from the knee', () => {
    const flat = [kp(1, 10, 160, 100), kp(2, 20, 320, 100), kp(4, 38, 600, 200)]; // power 100, 200, 190
    expect(findKnee(flat).value).toBeUndefined();
    expect(findKnee(flat).why).toMatch(/within the margin/);
    const near = [kp(1, 10, 160, 100), kp(2, 19, 300, 100), kp(4, 20, 320, 100), kp(8, 20, 320, 200)];
    expect(findKnee(near)).toMatchObject({ value: 4, near: [2] });
  });
});

function rec(i: number, ok: boolean, ttftMs: number, tpotMs: number, warmup = false): RequestRecord {
  return { i, ok, ttftMs, tpotMs, e2eMs: ttftMs + 10 * tpotMs, outputTokens: 11, warmup } as unknown as RequestRecord;
}

describe('capacity under SLOs (vLLM --goodput per request, a share of requests per point)', () => {
  it('counts the share of measured requests meeting every SLO and each alone; failures miss', () => {
    const records = [
      rec(0, true, 50, 10),
      rec(1, true, 300, 10),
      rec(2, true, 50, 80),
      rec(3, false, 10, 10),
      rec(4, true, 999, 999, true),
    ];
    const a = attainmentOf(records, { ttftMs: 200, tpotMs: 50 });
    expect(Object.keys(a)).toEqual(['ttft:200 tpot:50', 'ttft:200', 'tpot:50']);
    expect(a['ttft:200 tpot:50']).toBe(1 / 4);
    expect(a['ttft:200']).toBe(2 / 4);
    expect(a['tpot:50']).toBe(2 / 4);
    expect(sloCriteria({ e2eMs: 500 }).map((c) => c.label)).toEqual(['e2el:500']);
  });

  it('is the highest load meeting the criterion, with the first miss, and a note when noise breaks monotony', () => {
    const pts = [1, 2, 4, 8].map((value, i) => ({ value, attainment: { 'ttft:200': [1, 0.95, 0.5, 0.1][i] } }));
    expect(capacities(pts, { ttftMs: 200 }, 0.9)).toEqual([{ criterion: 'ttft:200', attainment: 0.9, value: 2, firstMiss: 4 }]);
    const noisy = [1, 2, 4].map((value, i) => ({ value, attainment: { 'ttft:200': [1, 0.5, 0.95][i] } }));
    expect(capacities(noisy, { ttftMs: 200 }, 0.9)[0]).toMatchObject({
      value: 4,
      firstMiss: 2,
      note: expect.stringMatching(/load 2 missed it while 4 met it/),
    });
    expect(capacities(pts, { ttftMs: 200 }, 1)[0]).toMatchObject({ value: 1, firstMiss: 2 });
    const none = capacities([{ value: 3, attainment: { 'ttft:200': 0.2 } }], { ttftMs: 200 }, 0.9)[0];
    expect(none.value).toBeUndefined();
    expect(none.note).toMatch(/no measured load meets it \(lowest tried: 3\)/);
  });
});

const sp = (value: number, extra: Partial<SweepPoint>): SweepPoint => ({
  name: pointName('concurrency', value),
  value,
  status: 'complete',
  reused: false,
  key: '{}',
  requestsPerSec: value,
  outputTokensPerSec: 16 * value,
  e2eP50Ms: 100,
  ...extra,
});

describe('sweep summary from its points', () => {
  it('uses complete points only, and takes provenance from the points’ manifests', () => {
    const points = [
      sp(1, { simulated: true }),
      sp(4, { simulated: true }),
      sp(16, { status: 'interrupted', simulated: true, requestsPerSec: 999 }),
    ];
    const a = analyseSweep(points, undefined, 0.9);
    expect(a.knee.why).toMatch(/at the highest load measured \(4\)/); // the interrupted c=16 is not used
    expect(a.capacity).toEqual([]);
    expect(provenanceOf(points)).toBe('simulated');
    expect(provenanceOf([sp(1, { simulated: true }), sp(2, { simulated: false })])).toBe('mixed');
    expect(provenanceOf([sp(1, {})])).toBe('none');
  });

  it('gives each point the verdict of its run health', () => {
    expect(verdictOf({ clientBound: false, simBehind: false })).toBe('ok');
    expect(verdictOf({ clientBound: true, simBehind: false })).toBe('client-bound');
    expect(verdictOf({ clientBound: false, simBehind: true })).toBe('sim-behind');
    expect(verdictOf({ clientBound: true, simBehind: true })).toBe('client-bound+sim-behind');
    expect(verdictOf(undefined)).toBe('unknown');
  });
});
