/**
 * Bootstrap intervals beside the percentiles of the `loadlab run` tables (`--ci`): each cell reads
 * `215.3 (201.2–230.9)`, the point estimate then its seeded 95 % percentile-bootstrap interval
 * (src/stats/bootstrap.ts, 1000 resamples, seed 1: same data, same interval). Requests are
 * resampled as independent draws; ITL has no interval, because its gaps come in runs from the
 * same request and are not independent.
 */

import { bootstrapPercentileCI } from '../stats/bootstrap';

/** The bootstrap settings of `--ci`. */
export const CI_OPTIONS = { iterations: 1000, confidence: 0.95, seed: 1 } as const;

/** The line printed above a table with intervals: the confidence level and what was resampled. */
export const CI_NOTE =
  'percentiles with 95% bootstrap intervals (lo–hi; 1000 resamples over requests, seed 1; ITL: none, its gaps within a request are not independent)';

const num = (x: number | null): string => (x === null || Number.isNaN(x) ? '–' : x.toFixed(1));

/** `point (lo–hi)` for the p-th percentile of `values`; `point` alone when `values` is undefined (no interval). */
export function ciCell(values: readonly number[] | undefined, p: number, point: number): string {
  if (values === undefined || values.length === 0) return num(point);
  const ci = bootstrapPercentileCI(values, p, CI_OPTIONS);
  return `${num(point)} (${num(ci.lo)}–${num(ci.hi)})`;
}
