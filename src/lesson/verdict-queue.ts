/**
 * Did requests wait in the client? `queueMs` is the gap between TTFT from the intended send
 * (`ttftFromIntendedMs`) and TTFT from the actual send (`ttftMs`) of each request. Coordinated
 * omission hides exactly this wait, so a lesson may say "the two TTFTs coincide" only when the
 * bootstrap interval of `queueMs` lies within a stated threshold (issue #13: lesson 03 once said
 * they coincide in the closed loop while its own table showed a 103 ms p99 gap).
 */

import { bootstrapPercentileCI } from '../stats/bootstrap';
import { type CompareOptions, disturbance, fmtInterval, fmtNumber, metricValues, type VerdictRun } from './verdict';

/** What `queueVerdict` found. */
export interface QueueVerdict {
  /** The percentile asked for, and the one used (50 when the run was disturbed). */
  requestedPct: number;
  pct: number;
  /** `queueMs` at `pct`, ms, with its bootstrap interval. */
  valueMs: number;
  interval: [number, number];
  /** Waits up to this many ms count as no queueing; default 1. */
  thresholdMs: number;
  /** `queued`: the interval lies above the threshold; `none`: within it; else `undecided`. */
  finding: 'queued' | 'none' | 'undecided';
  /** Why the tail was not trusted (empty when the run was healthy). */
  disturbed: string[];
  sentence: string;
}

/**
 * Did the requests of `run` wait in the client before leaving? `queueMs` (= `ttftFromIntendedMs −
 * ttftMs` of each request) at `pct` (default 99; p50 when the run's health flags say it was
 * disturbed) with its bootstrap interval (2000 iterations, 95 %, seed 1), against a stated
 * threshold `thresholdMs` (default 1 ms): "the two TTFTs coincide" is said only when the whole
 * interval is within it. Pure.
 * @throws RangeError for a negative or non-finite threshold, or `pct` outside 0..100.
 */
export function queueVerdict(
  run: VerdictRun,
  opts: { pct?: number; thresholdMs?: number; bootstrap?: CompareOptions['bootstrap'] } = {},
): QueueVerdict {
  const requestedPct = opts.pct ?? 99;
  const thresholdMs = opts.thresholdMs ?? 1;
  if (!(Number.isFinite(thresholdMs) && thresholdMs >= 0))
    throw new RangeError(`thresholdMs must be a number of ms ≥ 0 (e.g. 1), got ${thresholdMs}`);
  const why = disturbance(run.label, run.summary?.health);
  const pct = why && requestedPct > 50 ? 50 : requestedPct;
  const ci = bootstrapPercentileCI(metricValues(run.records, 'queueMs'), pct, {
    iterations: 2000,
    confidence: 0.95,
    seed: 1,
    ...opts.bootstrap,
  });
  const interval: [number, number] = [ci.lo, ci.hi];
  const finding = ci.lo > thresholdMs ? 'queued' : ci.hi <= thresholdMs ? 'none' : 'undecided';
  const iv = `${Math.round(ci.confidence * 100)}% 区间 ${fmtInterval(interval)} ms`;
  const head = `${run.label}：客户端排队 queueMs（从计划时刻算的 TTFT 减去 ttftMs）p${pct} 为 ${fmtNumber(ci.estimate)} ms`;
  const body =
    finding === 'queued'
      ? `（${iv} 都在 ${thresholdMs} ms 阈值之上）：请求在客户端等过，两种 TTFT 并不重合，只报 ttftMs 会漏掉这段等待。`
      : finding === 'none'
        ? `（${iv} 都在 ${thresholdMs} ms 阈值之内）：看不出客户端排队，两种 TTFT 重合。`
        : `（${iv} 跨过 ${thresholdMs} ms 阈值）：本次数据不足以判断客户端是否排队。`;
  const note = why
    ? `（${why}${pct !== requestedPct ? `：尾部含测量者自己的延迟，这里看 p${pct}，不看 p${requestedPct}` : ''}。）`
    : '';
  return {
    requestedPct,
    pct,
    valueMs: ci.estimate,
    interval,
    thresholdMs,
    finding,
    disturbed: why ? [why] : [],
    sentence: head + body + note,
  };
}
