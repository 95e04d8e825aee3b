/**
 * A sweep's plan: which load variable it varies (`--max-concurrency` or `--request-rate`), over a
 * list of values or by searching the highest request rate that meets the SLOs, and the folder
 * name of each point (`c=4`, `rate=2.5`, as `vllm bench sweep` names its points `request_rate=2`,
 * vllm/benchmarks/sweep/serve_sla.py `_get_sla_iter_path`). Pure; a bad value throws naming the fix.
 */

import type { Slo } from '../types';

/** The load variable a sweep varies: `concurrency` (`--max-concurrency`) or `rate` (`--request-rate`, req/s). */
export type SweepVariable = 'concurrency' | 'rate';

/** A sweep over listed values, or the search for the highest rate meeting the SLOs. */
export type SweepPlan =
  | { mode: 'list'; variable: SweepVariable; values: number[]; slo?: Slo; attainment: number }
  | {
      mode: 'slo-search';
      variable: 'rate';
      /** Lowest and highest request rate searched, req/s. */
      bounds: [number, number];
      /** Most points the search measures (bounds included); default {@link DEFAULT_SLO_STEPS}. */
      steps: number;
      slo: Slo;
      attainment: number;
    };

/** Default share of a point's requests that must meet every SLO for the point to meet them (0.9 = 90 %). */
export const DEFAULT_ATTAINMENT = 0.9;
/** Default number of points an SLO search measures. */
export const DEFAULT_SLO_STEPS = 6;

/** A number as a folder name keeps it: at most 4 significant digits, no trailing zeros (`2.5`, `0.125`, `1000`). */
export function roundLoad(v: number): number {
  return Number(v.toPrecision(4));
}

/** The folder name of a point: `c=4` (concurrency) or `rate=2.5` (req/s). */
export function pointName(variable: SweepVariable, value: number): string {
  return variable === 'concurrency' ? `c=${value}` : `rate=${value}`;
}

/**
 * A comma list of loads (`1,4,16` or `0.5,1,2`) as sorted, distinct numbers. Concurrencies are
 * integers ≥ 1; rates are numbers > 0 (no `inf`: an infinite rate is no rate to sweep). Throws a
 * RangeError naming `flag` and the fix.
 */
export function parseLoadList(flag: string, text: string, variable: SweepVariable): number[] {
  const parts = text.split(',').map((s) => s.trim());
  const values = parts.map((s) => {
    const n = s === '' ? NaN : Number(s);
    const ok = variable === 'concurrency' ? Number.isInteger(n) && n >= 1 : Number.isFinite(n) && n > 0;
    if (!ok) {
      const want = variable === 'concurrency' ? 'integers ≥ 1, e.g. 1,4,16,64' : 'finite numbers > 0 (req/s), e.g. 1,2,4,8';
      throw new RangeError(`${flag} takes a comma list of ${want}; got '${s}' in '${text}'`);
    }
    return variable === 'rate' ? roundLoad(n) : n;
  });
  return [...new Set(values)].sort((a, b) => a - b);
}

/**
 * `--slo-search LO,HI`: the request-rate bounds of the search, req/s, `0 < LO < HI`. Throws a
 * RangeError naming the fix.
 */
export function parseBounds(text: string): [number, number] {
  const parts = text.split(',').map((s) => Number(s.trim()));
  const [lo, hi] = parts;
  if (parts.length !== 2 || !(lo > 0) || !(hi > lo) || !Number.isFinite(hi)) {
    throw new RangeError(
      `--slo-search takes the lowest and highest request rate to search, req/s, LO < HI, e.g. --slo-search 1,32; got '${text}'`,
    );
  }
  return [roundLoad(lo), roundLoad(hi)];
}

/** Check a share of requests in (0, 1]; throws a RangeError naming `flag` and the fix. */
export function checkAttainment(flag: string, v: number): number {
  if (!(v > 0 && v <= 1)) throw new RangeError(`${flag} must be a share in (0, 1], e.g. 0.9 for 90 % of requests; got ${v}`);
  return v;
}

/** How a plan reads in one line, e.g. `--max-concurrency 1,4,16` or `highest --request-rate in [1, 32] meeting ttft:200`. */
export function describePlan(plan: SweepPlan, sloText?: string): string {
  if (plan.mode === 'list') {
    return `${plan.variable === 'concurrency' ? '--max-concurrency' : '--request-rate'} ${plan.values.join(',')}`;
  }
  const [lo, hi] = plan.bounds;
  return `highest --request-rate in [${lo}, ${hi}] req/s meeting ${sloText ?? 'the SLOs'} (at most ${plan.steps} points)`;
}
