/**
 * Lesson 01's narrative builders (src/lesson/story-01.ts) on synthetic records: E2E / n against
 * vLLM's TPOT, the table's Chinese headers, and the pitfall's sentences (every comparison carries
 * its interval).
 */
import { describe, expect, it } from 'vitest';
import {
  naiveTpotValues,
  pitfallRows,
  pitfallSentences,
  rooflineSentences,
  warmupSentences,
  type PitfallPoint,
} from '../src/lesson/story-01';
import type { RequestRecord } from '../src/types';

/** A request with `n` output tokens, TTFT `ttft` and a constant TPOT `tpot` (ms). */
function rec(i: number, ttft: number, tpot: number, n: number, extra: Partial<RequestRecord> = {}): RequestRecord {
  const e2e = ttft + (n - 1) * tpot;
  return {
    index: i,
    requestId: `r${i}`,
    warmup: false,
    ok: true,
    api: 'chat',
    intendedStartMs: 0,
    startMs: 0,
    chunkMs: [],
    chunkTokens: [],
    endMs: e2e,
    ttftMs: ttft,
    e2eMs: e2e,
    tpotMs: tpot,
    outputTokens: n,
    itlMs: [],
    queueMs: 0,
    ttftFromIntendedMs: ttft,
    ...extra,
  };
}
const point = (label: string, ttft: number, addedDelayMs: number): PitfallPoint => ({
  label,
  addedDelayMs,
  records: Array.from({ length: 30 }, (_, i) => rec(i, ttft + i * 0.1, 6.6 + (i % 3) * 0.01, 128)),
});

describe('story-01: the remote-API pitfall', () => {
  it('E2E / n skips warm-up, failed and token-less requests', () => {
    const rs = [
      rec(0, 10, 5, 11),
      rec(1, 10, 5, 11, { warmup: true }),
      rec(2, 10, 5, 11, { ok: false }),
      rec(3, 10, 5, 11, { outputTokens: 0 }),
    ];
    expect(naiveTpotValues(rs)).toEqual([(10 + 10 * 5) / 11]);
  });

  it('the table has Chinese headers and E2E / n above TPOT', () => {
    const rows = pitfallRows([point('a', 11, 0), point('b', 211, 200)]);
    for (const k of Object.keys(rows[0])) expect(k).toMatch(/[\u4e00-\u9fff]/);
    const naive = '朴素的 E2E / n p50 (ms)';
    const tpot = 'vLLM 的 TPOT = (E2E − TTFT)/(n − 1) p50 (ms)';
    expect(rows[0][naive]).toBeGreaterThan(rows[0][tpot] as number);
    expect(rows[1][naive] as number).toBeGreaterThan(rows[0][naive] as number);
    expect(rows[1][tpot]).toBeCloseTo(rows[0][tpot] as number, 9);
  });

  it('says TTFT and E2E / n rose and TPOT did not, each with an interval', () => {
    const s = pitfallSentences(point('串行', 11, 0), point('加延迟', 211, 200));
    expect(s).toHaveLength(4);
    expect(s[1]).toContain('TTFT p50：加延迟 比 串行 高');
    expect(s[2]).toContain('没有实质变化');
    expect(s[3]).toContain('E2E / n p50：加延迟 比 串行 高');
    for (const line of s) expect(line).toContain('95% 区间');
    expect(pitfallSentences(point('串行', 11, 0))).toHaveLength(1);
  });

  it('roofline sentences flag a TPOT below the floor as impossible', () => {
    const base = {
      floorMs: 4.44,
      predTpotMs: 6.6,
      etaLossMs: 0.7,
      overheadMs: 1.5,
      kvReadMs: 0.01,
      maxTokens: 128,
      predE2eMs: 850,
      fullLengthE2eMs: [],
      simulated: true,
    };
    expect(rooflineSentences({ ...base, tpotP50Ms: 6.7 })[0]).toContain('下限守住了');
    expect(rooflineSentences({ ...base, tpotP50Ms: 3 })[0]).toContain('物理上不可能');
  });

  it('warm-up sentences: the first request paid the connection, the summary left it out', () => {
    const records = [
      rec(0, 40, 6.6, 128, { warmup: true, queueMs: 3 }),
      ...Array.from({ length: 5 }, (_, i) => rec(i + 1, 11, 6.6, 128)),
    ];
    const s = warmupSentences({
      records,
      summarized: 5,
      peakInFlight: 1,
      client: { clientBound: false, eventLoopDelayP99Ms: 2, cpuPercentOfOneCore: 30 },
    });
    expect(s[1]).toContain('多花了 32.0 ms');
    expect(s[2]).toContain('只用了 5 个正式请求');
    expect(s[3]).toContain('客户端不是瓶颈');
    expect(warmupSentences({ records: records.slice(1), summarized: 5, peakInFlight: 1, client: {} })).toHaveLength(1);
  });
});
