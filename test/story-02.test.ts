/**
 * The pure builders behind lesson 02/02b (src/lesson/story-02.ts, story-02b.ts): the closed-loop
 * prediction's invariants, the course-shaped loadtest row and the capacity walk. No server.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE } from '../src/sim/engine/profile';
import { capacitySentences, closedLoopPrediction, healthVerdict, loadtestRow, loadtestTable } from '../src/lesson/helpers';
import { summarizeRun } from '../src/stats/summary';
import type { RequestRecord } from '../src/types';

const rec = (i: number, ttft: number, e2e: number, warmup = false): RequestRecord =>
  ({
    index: i,
    warmup,
    ok: true,
    ttftMs: ttft,
    e2eMs: e2e,
    outputTokens: 10,
    promptTokens: 5,
    intendedStartMs: 0,
    startMs: 0,
    firstTokenMs: ttft,
    endMs: e2e,
    itlMs: [],
    chunkMs: [],
    queueMs: 0,
  }) as unknown as RequestRecord;

describe('closedLoopPrediction', () => {
  const p = closedLoopPrediction(DEFAULT_PROFILE, { promptTokens: 46, maxTokens: 128, blockSize: 16 });
  it('computes only the tokens past the last whole block of a repeated prompt', () => {
    expect(p.cachedTokens).toBe(32);
    expect(p.uncachedTokens).toBe(14);
  });
  it('E2E = TTFT + (maxTokens − 1) × TPOT, and throughput = c × maxTokens / E2E', () => {
    for (const c of [1, 8, 64, 256]) {
      expect(p.e2eMs(c)).toBeCloseTo(p.ttftMs(c) + 127 * p.tpotMs(c), 9);
      expect(p.tokensPerSec(c)).toBeCloseTo((c * 128 * 1000) / p.e2eMs(c), 9);
    }
  });
  it('TPOT never falls and throughput never falls as the batch grows', () => {
    for (const [a, b] of [
      [1, 8],
      [8, 64],
      [64, 256],
    ]) {
      expect(p.tpotMs(b)).toBeGreaterThanOrEqual(p.tpotMs(a));
      expect(p.tokensPerSec(b)).toBeGreaterThan(p.tokensPerSec(a));
    }
  });
  it('throws naming the fix for a bad token count', () => {
    expect(() => closedLoopPrediction(DEFAULT_PROFILE, { promptTokens: 0, maxTokens: 128, blockSize: 16 })).toThrow(
      /promptTokens must be an integer ≥ 1/,
    );
  });
});

describe('loadtestRow', () => {
  const records = [rec(0, 99, 999, true), ...Array.from({ length: 10 }, (_, i) => rec(i + 1, 10 + i, 100 + i))];
  const summary = { ...summarizeRun(records), health: { clientBound: true, simBehind: false, warnings: ['busy'] } };
  it("has the course's { n, p50, p95, p99, mean } for E2E and TTFT apart, warm-up left out, and the health verdict", () => {
    const row = loadtestRow(4, { records, summary, peakInFlight: 4 });
    expect(Object.keys(row.e2eMs).sort()).toEqual(['mean', 'n', 'p50', 'p95', 'p99']);
    expect(row.e2eMs.n).toBe(10);
    expect(row.ttftMs.mean).toBeCloseTo(14.5, 9);
    expect(row.health).toEqual({ verdict: 'client-bound', clientBound: true, simBehind: false, warnings: ['busy'] });
    expect(row.peakInFlight).toBe(4);
    expect(Object.keys(loadtestTable([row])[0]).every((h) => /[\u4e00-\u9fff]/.test(h))).toBe(true);
  });
  it('reads the peak from the manifest when the run object has none; unknown health stays unknown', () => {
    const { health: _h, ...bare } = summary;
    const row = loadtestRow(2, { records, summary: bare, manifest: { client: { peakInFlight: 2 } } });
    expect(row.peakInFlight).toBe(2);
    expect(healthVerdict({ health: undefined })).toBe('unknown');
    expect(row.health.verdict).toBe('unknown');
  });
});

describe('capacitySentences', () => {
  const row = (concurrency: number, p95: number, limit = 100) => ({
    concurrency,
    p95,
    meets: p95 <= limit,
    meetsHigh: p95 * 1.05 <= limit,
    tokensPerSec: concurrency * 10,
  });
  it('stops at the first failure walking up', () => {
    expect(capacitySentences([row(1, 50), row(8, 90), row(16, 120), row(32, 200)], 'E2E', 100).capacity).toBe(8);
  });
  it('names a failure followed by a pass as disturbed, and keeps the walk honest', () => {
    const out = capacitySentences([row(1, 50), row(8, 120), row(16, 90), row(32, 200)], 'E2E', 100);
    expect(out.capacity).toBe(1);
    expect(out.sentences.join(' ')).toContain('c=8 超标');
  });
  it('says when not even the first point meets the SLO', () => {
    const out = capacitySentences([row(1, 500)], 'E2E', 100);
    expect(out.capacity).toBeUndefined();
    expect(out.sentences[0]).toContain('连 c=1 都不满足');
  });
});
