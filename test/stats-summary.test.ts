import { describe, expect, it } from 'vitest';
import { summarizeRun } from '../src/stats/summary';
import type { ErrorCode, RequestRecord } from '../src/types';

/** A successful record from token arrival times, derived fields as src/client/timing.ts defines them. */
function okRecord(
  index: number,
  o: { intended: number; start: number; tokens: number[]; prompt: number; warmup?: boolean },
): RequestRecord {
  const first = o.tokens[0];
  const last = o.tokens[o.tokens.length - 1];
  const n = o.tokens.length;
  return {
    index,
    requestId: `r${index}`,
    warmup: o.warmup ?? false,
    ok: true,
    api: 'chat',
    status: 200,
    intendedStartMs: o.intended,
    startMs: o.start,
    firstTokenMs: first,
    chunkMs: o.tokens,
    chunkTokens: o.tokens.map(() => 1),
    endMs: last,
    promptTokens: o.prompt,
    outputTokens: n,
    ttftMs: first - o.start,
    e2eMs: last - o.start,
    tpotMs: n >= 2 ? (last - first) / (n - 1) : undefined,
    itlMs: o.tokens.slice(1).map((t, i) => t - o.tokens[i]),
    queueMs: o.start - o.intended,
    ttftFromIntendedMs: first - o.intended,
  };
}

function failed(index: number, intended: number, end: number, code: ErrorCode): RequestRecord {
  return {
    index,
    requestId: `r${index}`,
    warmup: false,
    ok: false,
    api: 'chat',
    intendedStartMs: intended,
    startMs: intended,
    chunkMs: [],
    chunkTokens: [],
    endMs: end,
    itlMs: [],
    queueMs: 0,
    error: { code, message: code },
  };
}

const records: RequestRecord[] = [
  okRecord(0, { intended: 0, start: 0, tokens: [100, 110], prompt: 1000, warmup: true }),
  okRecord(1, { intended: 1000, start: 1000, tokens: [1100, 1120, 1150], prompt: 10 }), // ttft 100, tpot 25
  okRecord(2, { intended: 1000, start: 1010, tokens: [1210, 1250], prompt: 20 }), // ttft 200, tpot 40, e2e 240
  okRecord(3, { intended: 1100, start: 1100, tokens: [1400], prompt: 5 }), // 1 token: ttft 300, no tpot
  failed(4, 1200, 3000, 'timeout'),
  failed(5, 1300, 1305, 'http_5xx'),
];
// The warm-up (huge prompt, t = 0) must not move anything below.

describe('summarizeRun', () => {
  const s = summarizeRun(records);

  it('excludes warm-up and counts failures by code', () => {
    expect(s.requests).toBe(5);
    expect(s.completed).toBe(3);
    expect(s.failed).toBe(2);
    expect(s.errors).toEqual({ timeout: 1, http_5xx: 1 });
  });

  it('measures the window from earliest intended start to latest end, failures included', () => {
    expect(s.durationS).toBe(2); // 1000 → 3000 ms
    expect(s.requestsPerSec).toBe(1.5);
    expect(s.totalOutputTokens).toBe(6);
    expect(s.totalPromptTokens).toBe(35);
    expect(s.outputTokensPerSec).toBe(3);
    expect(s.totalTokensPerSec).toBe(20.5);
  });

  it('builds distributions over successful requests; TPOT only where defined', () => {
    expect(s.ttftMs.n).toBe(3);
    expect(s.ttftMs.p50).toBe(200);
    expect(s.tpotMs.n).toBe(2); // the 1-token request has no TPOT
    expect(s.tpotMs.mean).toBe(32.5);
    expect(s.e2eMs.max).toBe(300);
    expect(s.queueMs.max).toBe(10);
    expect(s.ttftFromIntendedMs.max).toBe(300);
    expect(s.ttftFromIntendedMs.p50).toBe(210);
  });

  it('ITL is the concatenation of every per-chunk gap', () => {
    expect(s.itlMs.n).toBe(3); // [20, 30] + [40] + []
    expect(s.itlMs.min).toBe(20);
    expect(s.itlMs.max).toBe(40);
    expect(s.itlMs.mean).toBe(30);
  });

  it('has no goodput without SLOs', () => {
    expect(s.goodput).toBeUndefined();
  });

  it('goodput: every SLO inclusive (slo ≥ value)', () => {
    const g = summarizeRun(records, { slo: { ttftMs: 200, tpotMs: 25 } }).goodput!;
    expect(g.good).toBe(1); // #1 (tpot 25 = slo); #2 tpot 40 too slow; #3 ttft 300 too slow
    expect(g.requestsPerSec).toBe(0.5);
    expect(g.slo).toEqual({ ttftMs: 200, tpotMs: 25 });
    expect(summarizeRun(records, { slo: { e2eMs: 240 } }).goodput!.good).toBe(2); // 150 and 240
  });

  it('goodput treats TPOT as 0 for ≤ 1 output token', () => {
    expect(summarizeRun(records, { slo: { ttftMs: 300, tpotMs: 0 } }).goodput!.good).toBe(1); // only #3
  });

  it('rejects unknown or negative SLOs naming the fix', () => {
    expect(() => summarizeRun(records, { slo: { ttft: 200 } as never })).toThrow(/use ttftMs, tpotMs or e2eMs/);
    expect(() => summarizeRun(records, { slo: { ttftMs: -1 } })).toThrow(/≥ 0/);
  });

  it('no measured requests → zeros, NaN rates and empty distributions', () => {
    const e = summarizeRun([records[0]]);
    expect(e.requests).toBe(0);
    expect(e.durationS).toBe(0);
    expect(e.requestsPerSec).toBeNaN();
    expect(e.ttftMs.n).toBe(0);
    expect(e.ttftMs.p99).toBeNaN();
  });
});
