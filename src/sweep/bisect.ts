/**
 * The SLO search: the highest request rate whose point meets the SLOs, by bisection between two
 * bounds. Pure: given the points measured so far, it names the next rate or says why it stops, so
 * a resumed search replays the same rates and reuses their folders.
 *
 * vLLM's `vllm bench sweep serve_sla` (vllm/benchmarks/sweep/serve_sla.py `solve_sla`) also tests
 * the upper bound first, then the lower one, then a value between the highest passing and the
 * lowest failing rate, and assumes (its NOTE) that a higher rate never meets the SLAs better.
 * Deviations, named: vLLM picks the next value as the root of a PCHIP spline through each point's
 * margin (an older version bisected integers after doubling from an estimate); LoadLab bisects the
 * interval (the midpoint, 4 significant digits), which needs only pass/fail and stays readable with
 * few, noisy points. vLLM stops when the interval is 1 req/s wide; LoadLab after `steps` points or
 * when the midpoint rounds onto a measured rate.
 */

import { roundLoad } from './plan';

/** A measured point of the search: its rate (req/s) and whether it met the SLOs. */
export interface SearchPoint {
  value: number;
  meets: boolean;
}

/** What the search does next: measure `next` req/s, or stop and say why. */
export type SearchStep = { next: number } | { done: true; why: string };

/** The highest passing rate and the lowest failing rate above it, req/s (undefined when none). */
export function searchInterval(history: readonly SearchPoint[]): { maxPassing?: number; minFailing?: number } {
  const passing = history.filter((p) => p.meets).map((p) => p.value);
  const maxPassing = passing.length > 0 ? Math.max(...passing) : undefined;
  const failing = history.filter((p) => !p.meets && (maxPassing === undefined || p.value > maxPassing)).map((p) => p.value);
  return {
    ...(maxPassing !== undefined ? { maxPassing } : {}),
    ...(failing.length > 0 ? { minFailing: Math.min(...failing) } : {}),
  };
}

/**
 * The next rate to measure between `bounds` (req/s) given the points so far, at most `steps` in all.
 * Order: the upper bound, the lower bound, then the midpoint of (highest passing, lowest failing).
 */
export function nextSearchRate(bounds: readonly [number, number], steps: number, history: readonly SearchPoint[]): SearchStep {
  const [lo, hi] = bounds;
  const at = (v: number) => history.find((p) => p.value === v);
  const top = at(hi);
  if (!top) return { next: hi };
  if (top.meets)
    return { done: true, why: `the upper bound ${hi} req/s meets the SLOs: the capacity is at least that; raise it` };
  if (history.length >= steps) return { done: true, why: `${steps} points measured (--slo-steps)` };
  const bottom = at(lo);
  if (!bottom) return { next: lo };
  if (!bottom.meets)
    return { done: true, why: `the lower bound ${lo} req/s misses the SLOs: the capacity is below it; lower it` };
  const { maxPassing, minFailing } = searchInterval(history);
  if (maxPassing === undefined || minFailing === undefined) return { done: true, why: 'no interval left to bisect' };
  const mid = roundLoad((maxPassing + minFailing) / 2);
  if (at(mid) || mid <= maxPassing || mid >= minFailing) {
    return { done: true, why: `the interval (${maxPassing}, ${minFailing}) req/s is as narrow as the rates' 4 digits` };
  }
  return { next: mid };
}
