import { describe, expect, it } from 'vitest';
import { formatGoodput, goodputOf, parseGoodput } from '../src/stats/goodput';
import { summarizeRun } from '../src/stats/summary';
import type { RequestRecord } from '../src/types';

/**
 * A successful record started at `start` ms whose first token came `ttft` ms later and whose
 * remaining `out − 1` tokens came every `tpot` ms, as src/client/timing.ts derives them:
 * e2e = ttft + (out − 1)·tpot.
 */
function rec(index: number, start: number, ttft: number, tpot: number, out: number, warmup = false): RequestRecord {
  const tokens = Array.from({ length: out }, (_, k) => start + ttft + k * tpot);
  return {
    index,
    requestId: `r${index}`,
    warmup,
    ok: true,
    api: 'chat',
    status: 200,
    intendedStartMs: start,
    startMs: start,
    firstTokenMs: tokens[0],
    chunkMs: tokens,
    chunkTokens: tokens.map(() => 1),
    endMs: tokens[out - 1],
    promptTokens: 10,
    outputTokens: out,
    ttftMs: ttft,
    e2eMs: ttft + (out - 1) * tpot,
    tpotMs: out >= 2 ? tpot : undefined,
    itlMs: tokens.slice(1).map((t, k) => t - tokens[k]),
    queueMs: 0,
    ttftFromIntendedMs: ttft,
  };
}

function failedRec(index: number, start: number, end: number): RequestRecord {
  return {
    index,
    requestId: `r${index}`,
    warmup: false,
    ok: false,
    api: 'chat',
    status: 500,
    intendedStartMs: start,
    startMs: start,
    chunkMs: [],
    chunkTokens: [],
    endMs: end,
    error: { code: 'http_5xx', message: 'boom' },
    itlMs: [],
    queueMs: 0,
  };
}

// The hand-checked example. SLOs: ttft ≤ 200 ms, tpot ≤ 50 ms, e2el ≤ 1000 ms (vLLM: good iff slo ≥ value for all).
//   A: ttft 150, tpot 40, 10 tokens → e2e 150 + 9·40 = 510                 → good
//   B: ttft 200, tpot 50, 10 tokens → e2e 200 + 9·50 = 650 (SLOs inclusive) → good
//   C: ttft 250, tpot 10, 10 tokens → e2e 250 + 9·10 = 340                 → bad (ttft 250 > 200)
//   D: ttft 100, 1 token            → tpot counts as 0, e2e 100            → good
//   E: ttft 180, tpot 60, 5 tokens  → e2e 180 + 4·60 = 420                 → bad (tpot 60 > 50)
//   F: ttft 190, tpot 45, 21 tokens → e2e 190 + 20·45 = 1090               → bad (e2el 1090 > 1000)
//   G: failed (HTTP 500)                                                   → never good
//   W: a warm-up with good numbers                                         → not measured
// Window: earliest intended start 0 ms, latest end: G at 2000 ms → 2.0 s.
// good = 3 (A, B, D); goodput = 3 / 2.0 s = 1.5 req/s; throughput = 6 completed / 2.0 s = 3 req/s.
const records: RequestRecord[] = [
  rec(0, 0, 150, 40, 10),
  rec(1, 100, 200, 50, 10),
  rec(2, 200, 250, 10, 10),
  rec(3, 300, 100, 0, 1),
  rec(4, 400, 180, 60, 5),
  rec(5, 500, 190, 45, 21),
  failedRec(6, 600, 2000),
  rec(7, -5000, 10, 1, 5, true),
];

describe('goodput as vllm bench serve (vllm/benchmarks/serve.py calculate_metrics)', () => {
  it('the hand-checked example: 3 good of 6 completed in 2.0 s → 1.5 req/s', () => {
    const slo = parseGoodput(['ttft:200', 'tpot:50', 'e2el:1000']);
    expect(slo).toEqual({ ttftMs: 200, tpotMs: 50, e2eMs: 1000 });
    const s = summarizeRun(records, { slo });
    expect(s.durationS).toBe(2);
    expect(s.completed).toBe(6);
    expect(s.requestsPerSec).toBe(3);
    expect(s.goodput).toEqual({ slo, good: 3, requestsPerSec: 1.5 });
    expect(goodputOf(records, slo, s.durationS)).toEqual({ good: 3, requestsPerSec: 1.5 });
  });

  it('only the SLOs given count: ttft ≤ 200 alone passes A, B, D, E, F → 5 good, 2.5 req/s', () => {
    const s = summarizeRun(records, { slo: parseGoodput(['ttft:200']) });
    expect(s.goodput?.good).toBe(5);
    expect(s.goodput?.requestsPerSec).toBe(2.5);
  });

  it('e2el alone at 650 keeps exactly the ones at or under it: A 510, B 650, C 340, D 100, E 420 → 5', () => {
    expect(goodputOf(records, parseGoodput(['e2el:650']), 2).good).toBe(5);
    expect(goodputOf(records, parseGoodput(['e2el:649.9']), 2).good).toBe(4);
  });

  it('no measured time gives NaN, never a made-up rate', () => {
    expect(goodputOf([], { ttftMs: 1 }, 0)).toEqual({ good: 0, requestsPerSec: NaN });
  });
});

describe('parseGoodput: vLLM parse_goodput + check_goodput_args', () => {
  it('accepts what Python float() accepts; a repeated key keeps the last value', () => {
    expect(parseGoodput(['ttft:1e3', 'tpot:1_000', 'e2el: 2.5 '])).toEqual({ ttftMs: 1000, tpotMs: 1000, e2eMs: 2.5 });
    expect(parseGoodput(['ttft:100', 'ttft:300'])).toEqual({ ttftMs: 300 });
    expect(parseGoodput(['tpot:0'])).toEqual({ tpotMs: 0 });
  });

  const formatMsg =
    'Invalid format found for service level objectives. Specify service level objectives for goodput as "KEY:VALUE" pairs';
  for (const bad of ['ttft=200', 'ttft:1:2', 'ttft:abc', 'ttft:', 'ttft']) {
    it(`'${bad}' → vLLM's format error with an example`, () => {
      expect(() => parseGoodput([bad])).toThrow(formatMsg);
      expect(() => parseGoodput([bad])).toThrow('e.g. --goodput ttft:200 tpot:50 e2el:1000');
    });
  }

  it("an unknown name and a negative value use vLLM's messages", () => {
    expect(() => parseGoodput(['ttfb:100'])).toThrow(
      "Invalid metric name found, ttfb: 100.0. The service level objective name should be one of ['ttft', 'tpot', 'e2el'].",
    );
    expect(() => parseGoodput(['tpot:-5'])).toThrow(
      'Invalid value found, tpot: -5.0. The service level objective value should be non-negative.',
    );
  });

  it('refuses inf and nan (a deviation: vLLM takes them), naming the fix', () => {
    expect(() => parseGoodput(['ttft:inf'])).toThrow('leave ttft out');
    expect(() => parseGoodput(['ttft:nan'])).toThrow('Give a finite number of milliseconds');
    expect(() => parseGoodput([])).toThrow('at least one KEY:VALUE pair');
  });

  it('formatGoodput writes the SLO back in the flag syntax', () => {
    expect(formatGoodput({ e2eMs: 1000, ttftMs: 200 })).toBe('ttft:200 e2el:1000');
  });
});
