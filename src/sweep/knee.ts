/**
 * Where a sweep stops paying, from its points' numbers (pure, stated rules, no thresholds hidden):
 * - saturation: `findSaturation` of src/view/saturation.ts (the same rule as the lessons' scaling
 *   chart): the first load after which a doubling adds less than `gainBelow` (default 10 %) output
 *   throughput. For a rate sweep the load is the request rate; "a doubling" is of the rate.
 * - knee: the load with the highest "power", throughput ÷ latency (requests/s ÷ E2E p50, Kleinrock's
 *   operating point): beyond it, latency grows faster than throughput. Reported only when a higher
 *   load was measured (otherwise the power was still rising at the highest load).
 */

import { findSaturation } from '../view/saturation';

/** A point as knee and saturation see it. */
export interface KneePoint {
  /** Concurrency, or request rate (req/s). */
  value: number;
  requestsPerSec: number;
  outputTokensPerSec: number;
  /** Median end-to-end latency, ms. */
  e2eP50Ms: number;
}

/** A located load (or why none is), and the rule that found it. */
export interface Located {
  value?: number;
  rule: string;
  why?: string;
}

/** Power of a point: requests/s per second of median E2E latency (NaN when either is missing). */
export function powerOf(p: KneePoint): number {
  return p.e2eP50Ms > 0 && Number.isFinite(p.requestsPerSec) ? p.requestsPerSec / (p.e2eP50Ms / 1000) : NaN;
}

/** The knee of `points` (any order): the highest-power load below the highest load measured. */
export function findKnee(points: readonly KneePoint[]): Located {
  const rule = 'highest throughput ÷ latency (req/s ÷ E2E p50)';
  const ps = points.filter((p) => Number.isFinite(powerOf(p))).sort((a, b) => a.value - b.value);
  if (ps.length < 2) return { rule, why: 'fewer than two points with throughput and latency' };
  let best = ps[0];
  for (const p of ps) if (powerOf(p) > powerOf(best)) best = p;
  if (best === ps[ps.length - 1])
    return { rule, why: `still rising at the highest load measured (${best.value}); add higher loads` };
  return { value: best.value, rule };
}

/** Saturation of `points` by `findSaturation` (output tokens/s; `gainBelow` default 0.1 per doubling). */
export function findSweepSaturation(points: readonly KneePoint[], gainBelow = 0.1): Located {
  const rule = `next doubling adds < ${+(gainBelow * 100).toFixed(2)} % output tokens/s`;
  const ps = points.filter((p) => Number.isFinite(p.outputTokensPerSec));
  if (ps.length < 2) return { rule, why: 'fewer than two points' };
  const at = findSaturation(
    ps.map((p) => ({ concurrency: p.value, outputTokensPerSec: p.outputTokensPerSec })),
    { gainBelow },
  );
  return at === undefined ? { rule, why: 'throughput still grows at the highest load measured' } : { value: at, rule };
}
