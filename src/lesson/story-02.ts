/**
 * Lesson 02 (02-concurrency, 02b-gradient): the closed-loop prediction both notebooks start from,
 * the course's `loadtest-concurrency.json` rows (seed 000: per concurrency a `summarizeLatency`
 * `{ n, p50, p95, p99, mean }` for E2E and, kept apart, for TTFT), each with the run's
 * client-health verdict, and the sentences the notebooks print about them. Pure.
 */
import { type LatencySummary, summarizeLatency } from '../stats/percentile';
import { type StepBatch, stepTimeMs } from '../sim/engine/cost';
import type { Profile } from '../sim/engine/profile';
import type { RequestRecord, RunSummary } from '../types';
import { compareMetric, verdictSentence, type Comparison } from './verdict';

/** The closed-loop prediction of lesson 02 (all ms or tok/s). */
export interface ClosedLoopPrediction {
  /** Prompt tokens a repeat of the same prompt computes after the prefix cache hit. */
  uncachedTokens: number;
  /** Prompt tokens a repeat finds in the prefix cache (whole blocks; the last token is always computed). */
  cachedTokens: number;
  /** One decode step of `b` requests at the mid-answer context = TPOT, ms. */
  tpotMs(b: number): number;
  /** HTTP/tokenizer overhead plus one step holding `c` short prefills, ms. */
  ttftMs(c: number): number;
  /** ttftMs(c) + (maxTokens − 1) × tpotMs(c), ms. */
  e2eMs(c: number): number;
  /** c × maxTokens ÷ e2eMs(c): closed-loop output throughput, tok/s. */
  tokensPerSec(c: number): number;
}

/**
 * The roofline prediction of a closed loop at concurrency c when every answer has `maxTokens`
 * tokens and all requests repeat one prompt of `promptTokens` tokens (so, with vLLM V1's default
 * prefix caching, only the tokens past the last whole `blockSize` block are prefilled again).
 * @throws RangeError for a non-positive token count or block size.
 */
export function closedLoopPrediction(
  profile: Profile,
  opts: { promptTokens: number; maxTokens: number; blockSize: number },
): ClosedLoopPrediction {
  const { promptTokens, maxTokens, blockSize } = opts;
  for (const [k, v] of Object.entries(opts)) {
    if (!(Number.isInteger(v) && v > 0)) throw new RangeError(`${k} must be an integer ≥ 1 (e.g. 46), got ${v}`);
  }
  const cached = Math.floor((promptTokens - 1) / blockSize) * blockSize;
  const uncached = promptTokens - cached;
  const midContext = promptTokens + maxTokens / 2;
  const decode = (b: number): StepBatch => ({
    decodes: b,
    decodeContextTokens: b * midContext,
    prefillTokens: 0,
    prefillAttnPairs: 0,
    sampled: b,
  });
  const prefill = (c: number): StepBatch => ({
    decodes: 0,
    decodeContextTokens: 0,
    prefillTokens: c * uncached,
    prefillAttnPairs: c * uncached * (cached + uncached / 2),
    sampled: c,
  });
  const tpotMs = (b: number) => stepTimeMs(decode(b), profile);
  const ttftMs = (c: number) => profile.perf.apiOverheadMs + stepTimeMs(prefill(c), profile);
  const e2eMs = (c: number) => ttftMs(c) + (maxTokens - 1) * tpotMs(c);
  return {
    uncachedTokens: uncached,
    cachedTokens: cached,
    tpotMs,
    ttftMs,
    e2eMs,
    tokensPerSec: (c) => (c * maxTokens * 1000) / e2eMs(c),
  };
}

/** A run as the lesson holds it (a `MeasureResult` or a `LoadedRun` with its summary). */
export interface Story02Run {
  records: readonly RequestRecord[];
  summary: RunSummary;
  manifest?: { client?: unknown };
  peakInFlight?: number;
}

/** The client-health verdict of one row: `ok`, or which measurer was the bottleneck. */
export type HealthVerdict = 'ok' | 'client-bound' | 'sim-behind' | 'client-bound+sim-behind' | 'unknown';

/** One row of `loadtest-concurrency.json`: the course's columns, then throughput and health. */
export interface LoadtestRow {
  concurrency: number;
  /** End-to-end latency of the measured, successful requests (the course's `summarizeLatency`), ms. */
  e2eMs: LatencySummary;
  /** TTFT of the same requests, stored apart from E2E as the course asks, ms. */
  ttftMs: LatencySummary;
  outputTokensPerSec: number;
  requestsPerSec: number;
  /** Most requests the client had in flight at once (the pool's cap when it held). */
  peakInFlight: number;
  /** The run's own health flags; `verdict` `ok` means the numbers are the server's. */
  health: { verdict: HealthVerdict; clientBound: boolean; simBehind: boolean; warnings: string[] };
}

/** The health verdict of a run summary (`unknown` when it carries no health). */
export function healthVerdict(summary: Pick<RunSummary, 'health'>): HealthVerdict {
  const h = summary.health;
  if (!h) return 'unknown';
  if (h.clientBound && h.simBehind) return 'client-bound+sim-behind';
  return h.clientBound ? 'client-bound' : h.simBehind ? 'sim-behind' : 'ok';
}

const measured = (rs: readonly RequestRecord[]) => rs.filter((r) => !r.warmup && r.ok);
const valuesOf = (rs: readonly RequestRecord[], k: 'e2eMs' | 'ttftMs') =>
  measured(rs)
    .map((r) => r[k])
    .filter((v): v is number => v !== undefined);

/** The `loadtest-concurrency.json` row of the run at `concurrency`. */
export function loadtestRow(concurrency: number, run: Story02Run): LoadtestRow {
  const client = (run.manifest?.client ?? {}) as { peakInFlight?: number };
  const h = run.summary.health;
  return {
    concurrency,
    e2eMs: summarizeLatency(valuesOf(run.records, 'e2eMs')),
    ttftMs: summarizeLatency(valuesOf(run.records, 'ttftMs')),
    outputTokensPerSec: run.summary.outputTokensPerSec,
    requestsPerSec: run.summary.requestsPerSec,
    peakInFlight: run.peakInFlight ?? Number(client.peakInFlight),
    health: {
      verdict: healthVerdict(run.summary),
      clientBound: !!h?.clientBound,
      simBehind: !!h?.simBehind,
      warnings: h?.warnings ?? [],
    },
  };
}

/** The Simplified-Chinese table columns of `loadtestRow`s (one object per row, for `ll.table`). */
export function loadtestTable(rows: readonly LoadtestRow[]): Record<string, string | number>[] {
  const zh: Record<HealthVerdict, string> = {
    ok: '正常 ok',
    'client-bound': '客户端瓶颈 client-bound',
    'sim-behind': '模拟器落后 sim-behind',
    'client-bound+sim-behind': '客户端瓶颈 + 模拟器落后',
    unknown: '未知 unknown',
  };
  return rows.map((r) => ({
    '并发 concurrency': r.concurrency,
    '样本 n': r.e2eMs.n,
    '端到端 E2E p50 (ms)': r.e2eMs.p50,
    '端到端 E2E p95 (ms)': r.e2eMs.p95,
    '端到端 E2E p99 (ms)': r.e2eMs.p99,
    '端到端 E2E 均值 mean (ms)': r.e2eMs.mean,
    '首字 TTFT p50 (ms)': r.ttftMs.p50,
    '首字 TTFT p95 (ms)': r.ttftMs.p95,
    '首字 TTFT p99 (ms)': r.ttftMs.p99,
    '首字 TTFT 均值 mean (ms)': r.ttftMs.mean,
    '输出吞吐 (tok/s)': r.outputTokensPerSec,
    '峰值在飞 peak in-flight': r.peakInFlight,
    '测量健康 health': zh[r.health.verdict],
  }));
}

/** What the hand-written `Promise.race` pool and `ll.createPool` showed on the same server. */
export interface PoolComparison {
  /** Both pools held exactly `concurrency` requests in flight at their peak. */
  sameCap: boolean;
  /** E2E p50 of the hand pool against the `createPool` run (interval; ±10 % threshold). */
  e2e: Comparison;
  sentences: string[];
}

/**
 * Compare the learner's pool (`hand`) with `ll.createPool`'s run (`lib`) at the same concurrency:
 * the cap each observed, then E2E p50 through `compareMetric` with a ±10 % threshold. Pure.
 */
export function comparePools(
  concurrency: number,
  hand: { label: string; records: readonly RequestRecord[]; peakInFlight: number },
  lib: { label: string; records: readonly RequestRecord[]; peakInFlight: number; summary?: Pick<RunSummary, 'health'> },
): PoolComparison {
  const sameCap = hand.peakInFlight === concurrency && lib.peakInFlight === concurrency;
  const e2e = compareMetric(hand, lib, 'e2eMs', 50, { thresholdPct: 10 });
  const cap = sameCap
    ? `两个池的峰值在飞数都是 ${concurrency}，正好等于设定的并发度：手写的 \`Promise.race\` 池和 \`ll.createPool\` 守住了同一条不变式。`
    : `峰值在飞数：${hand.label} ${hand.peakInFlight}，${lib.label} ${lib.peakInFlight}，设定 ${concurrency}——有一个池没有守住上限，看上面的代码。`;
  return { sameCap, e2e, sentences: [cap, verdictSentence(e2e)] };
}
