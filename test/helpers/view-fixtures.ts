/** Hand-built records, summaries and metrics for the src/view tests. */
import type { Distribution, MetricsSample, RequestRecord, RunSummary } from '../../src/types';

/** A record with derived fields computed from the stamps (ms). */
export function rec(
  index: number,
  s: { intended?: number; start: number; chunks: number[]; end?: number; ok?: boolean; tag?: string; warmup?: boolean },
): RequestRecord {
  const intended = s.intended ?? s.start;
  const first = s.chunks[0];
  const last = s.chunks[s.chunks.length - 1];
  const ok = s.ok ?? true;
  const r: RequestRecord = {
    index,
    requestId: `r${index}`,
    warmup: s.warmup ?? false,
    ok,
    api: 'chat',
    tag: s.tag,
    intendedStartMs: intended,
    startMs: s.start,
    firstTokenMs: first,
    chunkMs: s.chunks,
    chunkTokens: s.chunks.map(() => 1),
    endMs: s.end ?? last ?? s.start + 5,
    outputTokens: s.chunks.length,
    ttftMs: first === undefined ? undefined : first - s.start,
    e2eMs: last === undefined ? undefined : last - s.start,
    itlMs: s.chunks.slice(1).map((c, i) => c - s.chunks[i]),
    queueMs: s.start - intended,
  };
  if (!ok) r.error = { code: 'timeout', message: 'whole-request timeout' };
  return r;
}

/** A distribution with the given percentiles (others derived). */
export function dist(p50: number, p95: number, p99: number, n = 10): Distribution {
  return { n, mean: p50 * 1.1, std: 1, min: p50 / 2, p50, p90: (p50 + p95) / 2, p95, p99, max: p99 * 1.2 };
}

const NAN_DIST: Distribution = { n: 0, mean: NaN, std: NaN, min: NaN, p50: NaN, p90: NaN, p95: NaN, p99: NaN, max: NaN };

/** A run summary whose latencies scale with `k`. */
export function summary(k: number, outputTokensPerSec = 100 * k): RunSummary {
  return {
    requests: 10,
    completed: 9,
    failed: 1,
    errors: { timeout: 1 },
    durationS: 10,
    requestsPerSec: k,
    outputTokensPerSec,
    totalTokensPerSec: outputTokensPerSec * 2,
    totalPromptTokens: 1000,
    totalOutputTokens: 1000,
    ttftMs: dist(10 * k, 20 * k, 30 * k),
    tpotMs: dist(5, 6, 7),
    itlMs: NAN_DIST,
    e2eMs: dist(100 * k, 200 * k, 300 * k),
    queueMs: dist(0, 0, 0),
    ttftFromIntendedMs: dist(10 * k, 20 * k, 30 * k),
  };
}

/** Three requests: one queued, one with a 300 ms stall, one failed mid-stream. */
export function timelineRecords(): RequestRecord[] {
  return [
    rec(0, { start: 0, chunks: [100, 110, 120, 130, 140], tag: 'short' }),
    rec(1, { intended: 0, start: 50, chunks: [200, 210, 510, 520], tag: 'long' }),
    rec(2, { start: 60, chunks: [300, 310], end: 400, ok: false, tag: 'short' }),
  ];
}

/** Scrapes every 100 ms with one preemption at 300 ms. */
export function metricsSamples(): MetricsSample[] {
  return [0, 100, 200, 300, 400, 500].map((t, i) => ({
    tMs: t,
    running: Math.min(i, 3),
    waiting: i === 3 ? 1 : 0,
    kvUsage: i / 10,
    preemptionsTotal: t >= 300 ? 1 : 0,
    generationTokensTotal: i * 10,
    promptTokensTotal: i * 100,
  }));
}
