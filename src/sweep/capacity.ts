/**
 * Capacity under SLOs: the highest load of a sweep whose point meets them. A request meets an SLO
 * as `vllm bench serve --goodput` counts it (vllm/benchmarks/serve.py `calculate_metrics`: succeeded,
 * and every given `ttft`/`tpot`/`e2el` ≤ its value in ms; `meetsSlo` in src/stats/summary.ts). A point
 * meets the SLOs when at least `attainment` (default 0.9) of its measured requests do, failed ones
 * counted as missing.
 * Deviation, named: `vllm bench sweep serve_sla` (vllm/benchmarks/sweep/serve_sla.py, sla_sweep.py)
 * judges a point by aggregate statistics instead (e.g. `{"p99_e2el_ms": "<=500"}`, averaged over
 * runs). LoadLab judges the share of requests that meet every SLO together, the goodput criterion
 * `--goodput` already states; `attainment` 0.99 with one SLO is close to vLLM's p99 rule. Pure.
 */

import { GOODPUT_KEYS, formatGoodput } from '../stats/goodput';
import { meetsSlo } from '../stats/summary';
import type { RequestRecord, Slo } from '../types';

/** Share of measured requests meeting each criterion: `all` (every SLO at once) and each SLO alone (`ttft:200`). */
export type Attainment = Record<string, number>;

/** The criteria of an SLO: `all` plus one per key, each as an Slo, labelled in `--goodput` syntax. */
export function sloCriteria(slo: Slo): Array<{ label: string; slo: Slo }> {
  const single = (Object.values(GOODPUT_KEYS) as Array<keyof Slo>)
    .filter((k) => slo[k] !== undefined)
    .map((k) => ({ [k]: slo[k] }) as Slo);
  const all = { label: formatGoodput(slo), slo };
  return single.length > 1 ? [all, ...single.map((s) => ({ label: formatGoodput(s), slo: s }))] : [all];
}

/** Share (0..1) of the measured (non-warm-up) records meeting each criterion of `slo`; NaN without records. */
export function attainmentOf(records: readonly RequestRecord[], slo: Slo): Attainment {
  const measured = records.filter((r) => !r.warmup);
  const out: Attainment = {};
  for (const c of sloCriteria(slo)) {
    out[c.label] = measured.length > 0 ? measured.filter((r) => meetsSlo(r, c.slo)).length / measured.length : NaN;
  }
  return out;
}

/** A point as capacity sees it: its load value and its attainment per criterion. */
export interface CapacityPoint {
  value: number;
  attainment: Attainment;
}

/** The capacity under one criterion: the highest load meeting it, or why there is none. */
export interface Capacity {
  /** The criterion in `--goodput` syntax, e.g. `ttft:200 tpot:50` (every SLO at once) or `ttft:200`. */
  criterion: string;
  /** Share of requests that must meet it (0..1). */
  attainment: number;
  /** Highest load (concurrency or req/s) whose point meets it; undefined when none does. */
  value?: number;
  /** Lowest measured load that misses it, when one does. */
  firstMiss?: number;
  /** A caution: a lower load missed while a higher one met, or none met. */
  note?: string;
}

/** Whether a point meets `criterion` at `attainment`. */
export function meets(p: CapacityPoint, criterion: string, attainment: number): boolean {
  return (p.attainment[criterion] ?? NaN) >= attainment;
}

/** Capacity under every criterion of `slo` over `points` (any order). */
export function capacities(points: readonly CapacityPoint[], slo: Slo, attainment: number): Capacity[] {
  const ps = [...points].sort((a, b) => a.value - b.value);
  return sloCriteria(slo).map(({ label }) => {
    const ok = ps.filter((p) => meets(p, label, attainment));
    const miss = ps.filter((p) => !meets(p, label, attainment));
    const c: Capacity = { criterion: label, attainment };
    if (ok.length > 0) c.value = ok[ok.length - 1].value;
    if (miss.length > 0) c.firstMiss = miss[0].value;
    if (ok.length === 0) c.note = `no measured load meets it (lowest tried: ${ps[0]?.value ?? 'none'})`;
    else if (c.firstMiss !== undefined && c.firstMiss < c.value!) {
      c.note = `load ${c.firstMiss} missed it while ${c.value} met it: noise or a non-monotone server; measure with more prompts`;
    }
    return c;
  });
}
