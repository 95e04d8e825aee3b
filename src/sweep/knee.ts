/**
 * Where a sweep stops paying, from its points' numbers (pure, stated rules, no thresholds hidden):
 * - saturation: `findSaturation` of src/view/saturation.ts (the same rule as the lessons' scaling
 *   chart): the first load after which a doubling adds less than `gainBelow` (default 10 %) output
 *   throughput. For a rate sweep the load is the request rate; "a doubling" is of the rate.
 * - knee: the load with the highest "power", throughput ÷ latency (requests/s ÷ E2E p50, Kleinrock's
 *   operating point): beyond it, latency grows faster than throughput. Reported only when the highest
 *   load measured has at least 10 % less power (otherwise it may still be rising).
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

/**
 * The knee of `points` (any order): the highest-power load, reported only when the highest load measured
 * has at least `dropBy` (default 0.1 = 10 %) less power, a stated margin against noise. `near` lists
 * other loads within `dropBy` of the knee's power: the data cannot tell them apart.
 */
export function findKnee(points: readonly KneePoint[], dropBy = 0.1): Located & { near?: number[] } {
  const rule = `highest throughput ÷ latency (req/s ÷ E2E p50), ≥ ${+(dropBy * 100).toFixed(2)} % above the highest load's`;
  const ps = points.filter((p) => Number.isFinite(powerOf(p))).sort((a, b) => a.value - b.value);
  if (ps.length < 2) return { rule, why: 'fewer than two points with throughput and latency' };
  let best = ps[0];
  for (const p of ps) if (powerOf(p) > powerOf(best)) best = p;
  const last = ps[ps.length - 1];
  const floor = powerOf(best) * (1 - dropBy);
  if (best === last || powerOf(last) >= floor) {
    return { rule, why: `still rising, or within the margin, at the highest load measured (${last.value}); add higher loads` };
  }
  const near = ps.filter((p) => p !== best && powerOf(p) >= floor).map((p) => p.value);
  return { value: best.value, rule, ...(near.length > 0 ? { near } : {}) };
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
