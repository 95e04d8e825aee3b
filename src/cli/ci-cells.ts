/**
 * Bootstrap intervals beside the percentiles of the `loadlab run` tables (`--ci`): each cell reads
 * `215.3 (201.2–230.9)`, the point estimate then its seeded 95 % percentile-bootstrap interval
 * (src/stats/bootstrap.ts, 1000 resamples, seed 1: same data, same interval). Requests are
 * resampled as independent draws. ITL's gaps come in runs from the same request and are not
 * independent, so its interval resamples requests, each with all its gaps (src/stats/cluster-bootstrap.ts).
 */

import { bootstrapSampleCI, type Groups } from '../stats/cluster-bootstrap';

/** The bootstrap settings of `--ci`. */
export const CI_OPTIONS = { iterations: 1000, confidence: 0.95, seed: 1 } as const;

/** The line printed above a table with intervals: the confidence level and what was resampled. */
export const CI_NOTE =
  'percentiles with 95% bootstrap intervals (lo–hi; 1000 resamples over requests, seed 1; ITL: each request resampled with all its gaps)';

const num = (x: number | null): string => (x === null || Number.isNaN(x) ? '–' : x.toFixed(1));

/**
 * `point (lo–hi)` for the p-th percentile of `values`; `point` alone when `values` is undefined (no
 * interval). With `groups` (the same values by request: ITL), the interval resamples the groups.
 */
export function ciCell(values: readonly number[] | undefined, p: number, point: number, groups?: Groups): string {
  if (values === undefined || values.length === 0) return num(point);
  const ci = bootstrapSampleCI({ values, ...(groups ? { groups } : {}) }, p, CI_OPTIONS);
  return `${num(point)} (${num(ci.lo)}–${num(ci.hi)})`;
}
