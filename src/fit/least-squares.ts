/**
 * Fit the cost model's free perf parameters to observations by least squares in relative terms.
 * Parameters move in log space (u = ln θ/θ_prior), residuals are relative ((y − f)/y), so the
 * Jacobian Z is "fraction of the observed time per fraction of the parameter". Where a term is
 * linear in 1/θ (bytes/(η·BW), FLOPs/F, t0) one Gauss–Newton step is the linear least-squares
 * solution on that transform; the soft roofline knee (smax) needs a few more. The solve is
 * truncated to the directions of ZᵀZ the probes excite: a direction whose eigenvalue λ gives
 * rms(Z·v) = √(λ/n) below `minRmsSensitivity` is not identified, stays at the prior, and every
 * parameter with weight Σ v_j² > `maxNullLoading` on such directions is reported not identified.
 * Intervals: s² (residual variance, n − rank dof) × (ZᵀZ)⁺ on the identified subspace, Student-t 95 %.
 */
import { symmetricEigen, tQuantile } from './linalg';
import { type FitParam, type Observation, predictObservation, withPerf } from './step-model';
import type { Profile } from '../sim/engine/profile';

/** Options of `fitPerf`. */
export interface FitOptions {
  /** Parameters to fit; the others keep the prior's values. */
  params: readonly FitParam[];
  /** A parameter combination must move the observations by this rms fraction per 100 % change to count; default 0.001. */
  minRmsSensitivity?: number;
  /** Largest share of a parameter on unidentified directions that still counts as identified; default 0.01. */
  maxNullLoading?: number;
  /** Widest 95 % half-width, as a fraction of the value, of an identified parameter; default 0.1. */
  maxRelativeHalfWidth?: number;
  /** Gauss–Newton iterations at most; default 40. */
  maxIterations?: number;
}

/** One fitted parameter. */
export interface FittedParam {
  name: FitParam;
  prior: number;
  value: number;
  /** 95 % interval (identified parameters only). */
  low?: number;
  high?: number;
  identified: boolean;
  /** Why not identified, e.g. `collinear with stepOverheadMs, etaLmHead` or `interval ±23 %`. */
  reason?: string;
}

/** The fit. */
export interface PerfFit {
  profile: Profile;
  params: FittedParam[];
  /** Relative residual per observation, (measured − model)/measured. */
  residuals: number[];
  /** Root mean square of `residuals`. */
  rmsRelative: number;
  /** Residual degrees of freedom (observations − identified directions). */
  dof: number;
  iterations: number;
  /** How the intervals were computed, one sentence. */
  method: string;
}

function evaluate(obs: readonly Observation[], prior: Profile, names: readonly FitParam[], u: readonly number[]): number[] {
  const vals: Partial<Record<FitParam, number>> = {};
  names.forEach((n, j) => (vals[n] = prior.perf[n] * Math.exp(u[j])));
  const p = withPerf(prior, vals);
  return obs.map((o) => predictObservation(o, p));
}

function jacobian(obs: readonly Observation[], prior: Profile, names: readonly FitParam[], u: readonly number[]): number[][] {
  const h = 1e-5;
  const z = obs.map(() => names.map(() => 0));
  names.forEach((_, j) => {
    const up = [...u];
    const dn = [...u];
    up[j] += h;
    dn[j] -= h;
    const fu = evaluate(obs, prior, names, up);
    const fd = evaluate(obs, prior, names, dn);
    obs.forEach((o, i) => (z[i][j] = (fu[i] - fd[i]) / (2 * h) / o.ms));
  });
  return z;
}

const sumSq = (r: readonly number[]) => r.reduce((a, x) => a + x * x, 0);

/** ZᵀZ, its eigen decomposition and which eigen-directions the observations excite. */
function normalSystem(z: number[][], minRms: number) {
  const m = z[0]?.length ?? 0;
  const ztz = Array.from({ length: m }, (_, a) =>
    Array.from({ length: m }, (_, b) => z.reduce((s, row) => s + row[a] * row[b], 0)),
  );
  const eig = symmetricEigen(ztz);
  const kept = eig.values.map((l) => l > 0 && Math.sqrt(l / z.length) >= minRms);
  return { eig, kept };
}

/** Δu = Σ_kept v_k (v_kᵀ Zᵀr) / λ_k. */
function truncatedStep(z: number[][], r: number[], eig: ReturnType<typeof symmetricEigen>, kept: boolean[]): number[] {
  const m = eig.values.length;
  const g = Array.from({ length: m }, (_, j) => z.reduce((s, row, i) => s + row[j] * r[i], 0));
  const du = new Array<number>(m).fill(0);
  for (let k = 0; k < m; k++) {
    if (!kept[k]) continue;
    const proj = eig.vectors.reduce((s, row, j) => s + row[k] * g[j], 0) / eig.values[k];
    for (let j = 0; j < m; j++) du[j] += eig.vectors[j][k] * proj;
  }
  return du;
}

/**
 * Fit `opts.params` of `prior.perf` to `obs` (each `ms` > 0). Never throws on weak data: a parameter
 * the observations cannot pin down comes back `identified: false` with its reason.
 * @throws Error when there are no observations or no parameters.
 */
export function fitPerf(obs: readonly Observation[], prior: Profile, opts: FitOptions): PerfFit {
  const names = opts.params;
  if (obs.length === 0) throw new Error('fitPerf needs at least one observation; run the probe plan first');
  if (names.length === 0) throw new Error('fitPerf needs at least one parameter to fit');
  const minRms = opts.minRmsSensitivity ?? 0.001;
  let u = names.map(() => 0);
  const resid = (uu: number[]) => evaluate(obs, prior, names, uu).map((f, i) => (obs[i].ms - f) / obs[i].ms);
  let r = resid(u);
  let iterations = 0;
  for (; iterations < (opts.maxIterations ?? 40); iterations++) {
    const z = jacobian(obs, prior, names, u);
    const { eig, kept } = normalSystem(z, minRms);
    const du = truncatedStep(z, r, eig, kept);
    let scale = 1;
    let next = u.map((x, j) => x + du[j]);
    let rn = resid(next);
    while (sumSq(rn) > sumSq(r) && scale > 1e-4) {
      scale /= 2;
      next = u.map((x, j) => x + scale * du[j]);
      rn = resid(next);
    }
    const moved = Math.max(...du.map((d) => Math.abs(d * scale)));
    if (sumSq(rn) <= sumSq(r)) {
      u = next;
      r = rn;
    }
    if (moved < 1e-9) break;
  }
  return summarize(obs, prior, names, u, r, iterations, opts);
}

function summarize(
  obs: readonly Observation[],
  prior: Profile,
  names: readonly FitParam[],
  u: number[],
  r: number[],
  iterations: number,
  opts: FitOptions,
): PerfFit {
  const z = jacobian(obs, prior, names, u);
  const { eig, kept } = normalSystem(z, opts.minRmsSensitivity ?? 0.001);
  const rank = kept.filter(Boolean).length;
  const dof = obs.length - rank;
  const s2 = dof > 0 ? sumSq(r) / dof : NaN;
  const t = tQuantile(0.975, Math.max(dof, 1));
  const values: Partial<Record<FitParam, number>> = {};
  const params = names.map((name, j): FittedParam => {
    const value = prior.perf[name] * Math.exp(u[j]);
    values[name] = value;
    let nullLoad = 0;
    let variance = 0;
    eig.values.forEach((l, k) => {
      const vjk = eig.vectors[j][k];
      if (kept[k]) variance += (vjk * vjk) / l;
      else nullLoad += vjk * vjk;
    });
    const base = { name, prior: prior.perf[name], value };
    if (nullLoad > (opts.maxNullLoading ?? 0.01))
      return { ...base, identified: false, reason: unexcitedReason(j, names, eig, kept) };
    const half = t * Math.sqrt(Math.max(0, s2 * variance));
    if (!Number.isFinite(half)) return { ...base, identified: false, reason: 'too few probes for an interval' };
    const low = value * Math.exp(-half);
    const high = value * Math.exp(half);
    const rel = Math.expm1(half);
    if (rel > (opts.maxRelativeHalfWidth ?? 0.1))
      return { ...base, low, high, identified: false, reason: `95 % interval ±${(100 * rel).toFixed(0)} %` };
    return { ...base, low, high, identified: true };
  });
  return {
    profile: withPerf(prior, values),
    params,
    residuals: r,
    rmsRelative: Math.sqrt(sumSq(r) / r.length),
    dof,
    iterations,
    method:
      `Gauss–Newton on relative residuals in log-parameter space (${iterations} iterations), truncated to the ` +
      `${rank} parameter directions the probes excite; 95 % intervals = t(${dof} dof) × √(s²·(ZᵀZ)⁺) linearised at the fit.`,
  };
}

/** `not excited by the probes`, or `collinear with a, b` naming the other parameters on its weak directions. */
function unexcitedReason(j: number, names: readonly FitParam[], eig: ReturnType<typeof symmetricEigen>, kept: boolean[]): string {
  const partners = new Set<string>();
  eig.values.forEach((_, k) => {
    if (kept[k] || eig.vectors[j][k] ** 2 < 0.01) return;
    names.forEach((n, i) => i !== j && eig.vectors[i][k] ** 2 > 0.05 && partners.add(n));
  });
  return partners.size > 0 ? `collinear with ${[...partners].join(', ')}` : 'not excited by the probes';
}
