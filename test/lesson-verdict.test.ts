/**
 * Verdict sentences that respect noise (src/lesson/verdict*.ts, issue #13): synthetic samples
 * whose truth is known, so "decided" and "undecided" are exact, never timed.
 */
import { describe, expect, it } from 'vitest';
import {
  compareMetric,
  compareValues,
  fmtNumber,
  queueVerdict,
  tableReading,
  tradeoffVerdict,
  trendVerdict,
  verdictSentence,
  type VerdictRun,
} from '../src/lesson/helpers';
import type { RequestRecord, RunSummary } from '../src/types';
import { verdictProblems } from './helpers/verdict-check';

/** `n` evenly spread values from `from`, step `step` (a deterministic "sample"). */
const spread = (n: number, from: number, step = 1) => Array.from({ length: n }, (_, i) => from + i * step);

function rec(i: number, ttftMs: number, e2eMs: number, extra: Partial<RequestRecord> = {}): RequestRecord {
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
    endMs: e2eMs,
    ttftMs,
    e2eMs,
    itlMs: [],
    queueMs: 0,
    ttftFromIntendedMs: ttftMs,
    ...extra,
  };
}
const HEALTHY: RunSummary['health'] = { clientBound: false, simBehind: false, warnings: [] };
function run(label: string, ttft: number[], e2e: number[], health = HEALTHY, outputTokensPerSec = 100): VerdictRun {
  return { label, records: ttft.map((t, i) => rec(i, t, e2e[i])), summary: { health, outputTokensPerSec } };
}

describe('compareMetric / verdictSentence', () => {
  it('a clear difference is decided, with its interval in the sentence', () => {
    const a = run('c=1', spread(50, 10), spread(50, 800));
    const b = run('c=8', spread(50, 40), spread(50, 1000));
    const c = compareMetric(a, b, 'e2eMs', 95);
    expect(c.direction).toBe('higher');
    expect(c.pct).toBe(95);
    expect(c.interval[0]).toBeGreaterThan(0);
    expect(c.diff).toBeCloseTo(200, 6);
    const s = verdictSentence(c);
    expect(s).toContain('E2E p95：c=8 比 c=1 高 200 ms');
    expect(s).toContain('不含 0');
    expect(verdictProblems(s)).toEqual([]);
    expect(compareMetric(b, a, 'e2eMs', 95).direction).toBe('lower');
    expect(verdictSentence(compareMetric(b, a, 'e2eMs', 95))).toContain('c=1 比 c=8 低 200 ms');
  });

  it('overlapping samples are undecided: the sentence says the data cannot decide and shows the interval holding 0', () => {
    const a = run('c=1', spread(50, 10), spread(50, 800, 4));
    const b = run('c=8', spread(50, 11), spread(50, 801, 4));
    const c = compareMetric(a, b, 'e2eMs', 95);
    expect(c.direction).toBe('undecided');
    expect(c.interval[0]).toBeLessThanOrEqual(0);
    expect(c.interval[1]).toBeGreaterThanOrEqual(0);
    const s = verdictSentence(c);
    expect(s).toMatch(/本次数据不足以判断（差值的 95% 区间 \[-?[\d.]+, [\d.]+\] ms 含 0）/);
    expect(s).not.toMatch(/比 c=1 高/);
    expect(verdictProblems(s)).toEqual([]);
  });

  it('a disturbed run is compared at p50, and the sentence says which run and why', () => {
    const busy = { clientBound: true, simBehind: true, warnings: ['…'] };
    const a = run('c=1', spread(50, 10), spread(50, 800));
    const b = run('c=8', spread(50, 40), spread(50, 1000), busy);
    const c = compareMetric(a, b, 'ttftMs', 99);
    expect([c.requestedPct, c.pct]).toEqual([99, 50]);
    expect(c.disturbed).toEqual(['c=8 测量时客户端是瓶颈、模拟器落后于实时']);
    const s = verdictSentence(c);
    expect(s.startsWith('TTFT p50：')).toBe(true);
    expect(s).toContain('这里改比 p50，不比 p99');
    expect(s).toContain('客户端是瓶颈');
    // Both runs disturbed the same way: one clause, not two.
    const both = compareMetric(run('c=1', spread(50, 10), spread(50, 800), busy), b, 'ttftMs', 99);
    expect(both.disturbed).toEqual(['c=1 和 c=8 测量时都受了干扰（客户端是瓶颈、模拟器落后于实时）']);
    expect(compareMetric(a, b, 'ttftMs', 99, { respectHealth: false }).pct).toBe(99);
    expect(verdictSentence(compareMetric(a, b, 'ttftMs', 99, { respectHealth: false }))).toContain('读数要打折扣');
  });

  it('a stated threshold turns a tiny difference into "no meaningful change" and names the threshold', () => {
    // +2 ms on ~1000 ms, nearly no spread: decided, but well inside ±5 %.
    const a = run('c=1', spread(50, 10), spread(50, 1000, 0.01));
    const b = run('c=8', spread(50, 10), spread(50, 1002, 0.01));
    const c = compareMetric(a, b, 'e2eMs', 95, { thresholdPct: 5 });
    expect(c.direction).toBe('higher');
    expect(c.negligible).toBe(true);
    const s = verdictSentence(c);
    expect(s).toContain('没有实质变化');
    expect(s).toContain('落在设定的 ±5% 阈值之内');
    expect(verdictProblems(s)).toEqual([]);
    // Without a threshold the same data give a (small) decided rise.
    expect(verdictSentence(compareMetric(a, b, 'e2eMs', 95))).toContain('c=8 比 c=1 高 2.0 ms');
  });

  it('the same inputs give the same interval (seeded), and bad options throw naming the fix', () => {
    const a = { label: 'A', values: spread(30, 5, 3) };
    const b = { label: 'B', values: spread(30, 9, 3) };
    expect(compareValues(a, b, 90).interval).toEqual(compareValues(a, b, 90).interval);
    expect(() => compareValues(a, b, 101)).toThrow(RangeError);
    expect(() => compareValues(a, b, 50, { thresholdPct: 0 })).toThrow(/thresholdPct must be a percent > 0/);
    const empty = compareValues({ label: 'A', values: [] }, b, 50);
    expect(empty.direction).toBe('undecided');
    expect(verdictSentence(empty)).toContain('无法比较');
  });

  it('values given by request (ITL gaps) are resampled by request: a shift carried by two slow requests is not decided', () => {
    // 20 requests × 30 gaps each side; B differs only in that two of its requests ran slow throughout.
    const req = (level: number) => Array.from({ length: 30 }, (_, k) => level + (k % 3) * 0.1);
    const ga = Array.from({ length: 20 }, () => req(10));
    const gb = Array.from({ length: 20 }, (_, i) => req(i < 2 ? 40 : 10));
    const side = (label: string, groups: number[][]) => ({ label, values: groups.flat(), groups });
    const byGap = compareValues({ label: 'A', values: ga.flat() }, { label: 'B', values: gb.flat() }, 95);
    const byRequest = compareValues(side('A', ga), side('B', gb), 95);
    expect(byGap.direction).toBe('higher'); // 60 of 600 gaps look like 60 independent draws
    expect(byRequest.direction).toBe('undecided'); // they are 2 requests of 20
    expect(byRequest.interval[1] - byRequest.interval[0]).toBeGreaterThan(byGap.interval[1] - byGap.interval[0]);
    expect(verdictSentence(byRequest)).toContain('本次数据不足以判断');
  });

  it('numbers are never rounded into a false zero', () => {
    expect([fmtNumber(0.004), fmtNumber(-0.0123), fmtNumber(1.04), fmtNumber(123.6), fmtNumber(0), fmtNumber(NaN)]).toEqual([
      '0.004',
      '-0.012',
      '1.0',
      '124',
      '0',
      '—',
    ]);
  });
});

describe('tableReading / tradeoffVerdict / trendVerdict / queueVerdict', () => {
  // TTFT +60 % (10 → 16 ms), E2E p95 flat within noise (≈ 900 ms): the course's N=50 picture.
  const c1 = run('c=1', spread(50, 10, 0.02), spread(50, 880, 1), HEALTHY, 150);
  const c8 = run('c=8', spread(50, 16, 0.02), spread(50, 880.5, 1), HEALTHY, 1100);

  it('tableReading: a TTFT rise far beyond the E2E p95 rise points at prefill/queueing', () => {
    const t = tableReading(c1, c8);
    expect(t.finding).toBe('prefill-or-queue');
    expect(t.ttft.direction).toBe('higher');
    expect(t.sentences.at(-1)).toContain('瓶颈在预填充（prefill）和排队');
    for (const s of t.sentences) expect(verdictProblems(s)).toEqual([]);
    // Both rising together: the rule does not fire.
    const both = tableReading(c1, run('c=8', spread(50, 16, 0.02), spread(50, 1400, 1)));
    expect(both.finding).toBe('decode-too');
    // No TTFT rise: the rule cannot be used.
    expect(tableReading(c1, c1).finding).toBe('undecided');
    expect(() => tableReading(c1, c8, { factor: 1 })).toThrow(/factor must be a number > 1/);
  });

  it('tradeoffVerdict: "延迟变差、吞吐变好" only when the latency rise is decided', () => {
    const flat = tradeoffVerdict(c1, c8);
    expect(flat.finding).toBe('undecided');
    expect(flat.sentences[1]).toContain('还不能说“延迟变差、吞吐变好”同时成立');
    const worse = tradeoffVerdict(c1, run('c=8', spread(50, 16), spread(50, 1000), HEALTHY, 1100));
    expect(worse.finding).toBe('both');
    expect(worse.sentences[1].startsWith('“延迟变差、吞吐变好”同时成立')).toBe(true);
    const noGain = tradeoffVerdict(c1, run('c=8', spread(50, 16), spread(50, 1000), HEALTHY, 155));
    expect(noGain.finding).toBe('no-gain');
    for (const s of [...flat.sentences, ...worse.sentences]) expect(verdictProblems(s)).toEqual([]);
    expect(() => tradeoffVerdict({ label: 'x', records: [] }, c8)).toThrow(/outputTokensPerSec/);
  });

  it('trendVerdict: "逐档上升" only when every neighbouring interval lies above 0', () => {
    const up = [10, 20, 30].map((m) => run(`c=${m}`, spread(40, m, 0.1), spread(40, 900)));
    expect(trendVerdict(up, 'ttftMs', 50).rising).toBe(true);
    const flatStep = [10, 20, 20.05].map((m, i) => run(`c=${i}`, spread(40, m, 0.5), spread(40, 900)));
    const t = trendVerdict(flatStep, 'ttftMs', 50);
    expect(t.rising).toBe(false);
    expect(t.sentences[0]).toContain('不能说');
    expect(t.sentences[0]).toContain('c=1 → c=2');
    for (const s of t.sentences) expect(verdictProblems(s)).toEqual([]);
    expect(() => trendVerdict(up.slice(0, 1), 'ttftMs', 50)).toThrow(/at least 2 runs/);
  });

  it('queueVerdict: the two TTFTs "coincide" only when queueMs lies within the stated threshold', () => {
    const withQueue = (label: string, q: number[], health = HEALTHY): VerdictRun => ({
      label,
      records: q.map((x, i) => rec(i, 50, 900, { queueMs: x, ttftFromIntendedMs: 50 + x })),
      summary: { health },
    });
    const none = queueVerdict(withQueue('quiet', spread(60, 0.1, 0.005)));
    expect(none.finding).toBe('none');
    expect(none.sentence).toContain('两种 TTFT 重合');
    const queued = queueVerdict(withQueue('busy', spread(60, 90, 0.5), { clientBound: true, simBehind: false, warnings: [] }));
    expect(queued.finding).toBe('queued');
    expect(queued.pct).toBe(50);
    expect(queued.sentence).toContain('并不重合');
    expect(queued.sentence).toContain('这里看 p50，不看 p99');
    const edge = queueVerdict(withQueue('edge', spread(60, 0.4, 0.02)), { pct: 50 }); // median ≈ 1 ms
    expect(edge.finding).toBe('undecided');
    for (const v of [none, queued, edge]) expect(verdictProblems(v.sentence)).toEqual([]);
  });

  it('the checker itself catches a claim inside its own interval', () => {
    expect(verdictProblems('E2E p95：c=8 比 c=1 高 1 ms（916 → 917 ms；差值的 95% 区间 [-14, 15] ms 不含 0）。')).toHaveLength(1);
    expect(verdictProblems('E2E p95：c=8 比 c=1 高 1 ms（差值的 95% 区间 [-14, 15] ms 含 0）。')).toHaveLength(1);
    expect(verdictProblems('差值的 95% 区间 [3, 15] ms。')).toEqual([
      'prints an interval but no verdict word: 差值的 95% 区间 [3, 15] ms',
    ]);
  });
});
