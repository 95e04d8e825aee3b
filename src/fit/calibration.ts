/**
 * A calibration end to end: probe the server (version, model, `vllm:cache_config_info`), read the GPU,
 * run the probe plan, fit the cost model's perf parameters (`least-squares.ts`), and estimate the API
 * overhead. The result records what it ran against; `profile-doc.ts` turns it into a profile file.
 * Assumes the server is otherwise idle: the `/metrics` deltas count every request it served meanwhile.
 */
import { createClient } from '../client/client';
import { probeTarget as probeServer, type TargetProbe } from '../observe/probe';
import { summarizeCacheConfig } from '../observe/vllm-metrics';
import type { Profile } from '../sim/engine/profile';
import { FIELDS, KINDS } from '../sim/engine/profile-fields';
import { readGpuInfo, type GpuInfo } from './gpu-info';
import { fitPerf, type FittedParam, type PerfFit } from './least-squares';
import { type ApiSample, observationsOf } from './observations';
import { type Probe, probePlan } from './probe-plan';
import { type ProbeMeasurement, probeTarget, runProbe, sendProbeRequest } from './probe-run';
import { scrapeMetrics } from './server-scrape';
import { FIT_PARAMS, type FitParam, type Observation } from './step-model';
import { tQuantile } from './linalg';

/** Options of `calibrate`. */
export interface CalibrateOptions {
  /** Server root, e.g. `http://127.0.0.1:8000`. */
  baseUrl: string;
  /** The profile whose GPU and model shapes the fit uses and whose perf values are the starting point. */
  prior: Profile;
  /** Model name; default the server's first served model. */
  model?: string;
  apiKey?: string;
  /** The shorter plan (about half the wall time); default false. */
  quick?: boolean;
  /** Seeds the prompts; default 14. */
  seed?: number;
  /** Progress lines (no newline), e.g. for stderr. */
  onProgress?: (line: string) => void;
  /** nvidia-smi executable; default `nvidia-smi`. */
  nvidiaSmi?: string;
}

/** What a calibration ran against. */
export interface CalibrationTarget {
  baseUrl: string;
  serverVersion?: string;
  engine?: string;
  /** True when the server said it is LoadLab's simulator: the fit is a fit to a simulator. */
  simulated: boolean;
  /** The simulator's own profile, when it is one. */
  simProfile?: string;
  model: string;
  maxModelLen?: number;
  /** `vllm:cache_config_info` labels (the server's cache flags). */
  cacheConfig?: Record<string, string>;
  kvCapacityTokens?: number;
  gpu: GpuInfo;
  /** `server /metrics` when the means came from its histograms, else `client timings`. */
  measuredFrom: 'server /metrics' | 'client timings';
}

/** A finished calibration. */
export interface CalibrationResult {
  target: CalibrationTarget;
  prior: Profile;
  plan: Probe[];
  measurements: ProbeMeasurement[];
  observations: Observation[];
  fit: PerfFit;
  /** Every fitted parameter, API overhead included, identified or not. */
  params: FittedParam[];
  notIdentified: FitParam[];
  wallSeconds: number;
  startedAt: string;
}

/** API overhead from per-probe estimates: their mean, a t interval over probes, identified when ±10 % or ±0.5 ms. */
export function apiOverheadFit(samples: readonly ApiSample[], prior: number): FittedParam {
  const base = { name: 'apiOverheadMs' as const, prior };
  if (samples.length < 2) return { ...base, value: prior, identified: false, reason: 'fewer than 2 probes timed it' };
  const xs = samples.map((s) => s.ms);
  const m = xs.reduce((a, x) => a + x, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
  const half = tQuantile(0.975, xs.length - 1) * (sd / Math.sqrt(xs.length));
  const value = Math.max(0, m);
  const ok = half <= Math.max(0.1 * value, 0.5);
  return {
    ...base,
    value: ok ? value : prior,
    low: Math.max(0, m - half),
    high: m + half,
    identified: ok,
    ...(ok ? {} : { reason: `95 % interval ±${half.toFixed(2)} ms around ${m.toFixed(2)} ms` }),
  };
}

/**
 * A value outside the profile format's range (`profile-fields.ts`, e.g. a fraction > 1) is clamped to
 * the bound. When the parameter was identified and its 95 % interval reaches the bound, the bound is a
 * value the probes allow (a hidden η of 0.99 fits as 1.01 ± 2.5 %): it stays identified, its interval
 * clamped too. Otherwise the fit ran off towards "no such cost", and the parameter is reported not identified.
 */
export function withinFormat(p: FittedParam): FittedParam {
  const kind = KINDS[FIELDS.perf[p.name]];
  const low = kind.openMin ? kind.min + Number.EPSILON : kind.min;
  if (p.value >= low && p.value <= kind.max) return p;
  const clamp = (x: number) => Math.min(kind.max, Math.max(low, x));
  const value = clamp(p.value);
  if (p.identified && p.low !== undefined && p.high !== undefined && p.low <= kind.max && p.high >= low)
    return { ...p, value, low: clamp(p.low), high: clamp(p.high) };
  const why = `the fit ran to ${p.value.toPrecision(3)} ${kind.unit}, outside the format's ${kind.openMin ? '(' : '['}${kind.min}, ${kind.max}]: the probes show no such cost`;
  return { name: p.name, prior: p.prior, value, identified: false, reason: why };
}

/**
 * The progress line of probe `i` (0-based) of `n`. A probe whose clean decode window was not caught
 * (`decode-window.ts`: the simulator resynced in every interval, or no scrape fell between the last
 * first token and the first finish) says so: its ITL is left out of the fit.
 */
export function probeLine(i: number, n: number, m: ProbeMeasurement): string {
  const failed = Object.values(m.failures).reduce((a, x) => a + x, 0);
  const noWindow = m.records.length > 0 && !m.window ? ', no clean decode window caught (its ITL is left out of the fit)' : '';
  return `[${i + 1}/${n}] ${m.probe.name}: ${m.records.length} ok${failed ? `, ${failed} failed` : ''}${noWindow}, ${m.wallSeconds.toFixed(1)} s`;
}

async function describeTarget(o: CalibrateOptions, probe: TargetProbe, metrics: boolean): Promise<CalibrationTarget> {
  const model = o.model ?? probe.model;
  if (!model) throw new Error(`${o.baseUrl} lists no model; pass --model NAME (the server's served model name)`);
  const cache = summarizeCacheConfig(probe.cacheConfig);
  return {
    baseUrl: o.baseUrl,
    ...(probe.serverVersion ? { serverVersion: probe.serverVersion } : {}),
    ...(probe.engine ? { engine: probe.engine } : {}),
    simulated: probe.simulated,
    ...(probe.simProfile ? { simProfile: probe.simProfile.id } : {}),
    model,
    ...(probe.maxModelLen ? { maxModelLen: probe.maxModelLen } : {}),
    ...(probe.cacheConfig ? { cacheConfig: probe.cacheConfig } : {}),
    ...(cache.kvCapacityTokens ? { kvCapacityTokens: cache.kvCapacityTokens } : {}),
    gpu: readGpuInfo(o.nvidiaSmi),
    measuredFrom: metrics ? 'server /metrics' : 'client timings',
  };
}

/**
 * Calibrate `opts.prior`'s perf parameters against the server at `opts.baseUrl`.
 * @throws Error naming the fix when the server does not answer or serves no model; a probe whose
 *   requests all fail is left out of the fit (its failures stay in `measurements`).
 */
export async function calibrate(opts: CalibrateOptions): Promise<CalibrationResult> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const say = opts.onProgress ?? (() => {});
  const probe = await probeServer(opts.baseUrl, opts.apiKey, opts.model ? { model: opts.model } : {});
  if (!probe.reachable) throw new Error(`cannot reach ${opts.baseUrl}: ${probe.error}; start the server or fix --base-url`);
  const metrics = (await scrapeMetrics(opts.baseUrl, opts.apiKey)) !== undefined;
  const target = await describeTarget(opts, probe, metrics);
  const plan = probePlan({
    ...(opts.quick ? { quick: true } : {}),
    ...(target.kvCapacityTokens ? { kvCapacityTokens: target.kvCapacityTokens } : {}),
    ...(target.maxModelLen ? { maxModelLen: target.maxModelLen } : {}),
  });
  say(
    `calibrating ${target.model} at ${opts.baseUrl} (${target.simulated ? 'LoadLab simulator' : probe.kind}), ${plan.length} probes, means from ${target.measuredFrom}`,
  );
  if (target.model !== opts.prior.model.name)
    say(
      `note: the server serves ${target.model} but the prior profile models ${opts.prior.model.name}; the fit keeps the prior's model shapes (pass --prior NAME for this model)`,
    );
  const connections = Math.max(...plan.map((p) => p.concurrency));
  const client = createClient({
    baseUrl: opts.baseUrl,
    model: target.model,
    connections,
    ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
  });
  const t = probeTarget(client, opts.baseUrl, metrics, opts.seed ?? 14, opts.apiKey);
  const measurements: ProbeMeasurement[] = [];
  try {
    for (let k = 0; k < 2; k++) await sendProbeRequest(t, 64, 4); // warm-up, outside every probe's scrapes
    for (const [i, p] of plan.entries()) {
      const m = await runProbe(t, p);
      measurements.push(m);
      say(probeLine(i, plan.length, m));
    }
  } finally {
    await client.close();
  }
  return finish(opts, target, plan, measurements, started, startedAt);
}

function finish(
  opts: CalibrateOptions,
  target: CalibrationTarget,
  plan: Probe[],
  measurements: ProbeMeasurement[],
  started: number,
  startedAt: string,
): CalibrationResult {
  const observations: Observation[] = [];
  const api: ApiSample[] = [];
  for (const m of measurements) {
    const o = observationsOf(m);
    observations.push(...o.observations);
    api.push(...o.api);
  }
  if (observations.length === 0)
    throw new Error(
      `every probe request to ${opts.baseUrl} failed; check the server log and \`loadlab doctor --base-url ${opts.baseUrl}\``,
    );
  const inFit = observations.some((o) => o.includesApi);
  const names = FIT_PARAMS.map((p) => p.name).filter((n) => inFit || n !== 'apiOverheadMs');
  const fit = fitPerf(observations, opts.prior, { params: names });
  const params = (inFit ? fit.params : [...fit.params, apiOverheadFit(api, opts.prior.perf.apiOverheadMs)]).map(withinFormat);
  const perf = { ...fit.profile.perf };
  for (const p of params) perf[p.name] = p.value;
  fit.profile = { ...fit.profile, perf };
  return {
    target,
    prior: opts.prior,
    plan,
    measurements,
    observations,
    fit,
    params,
    notIdentified: params.filter((p) => !p.identified).map((p) => p.name),
    wallSeconds: (performance.now() - started) / 1000,
    startedAt,
  };
}
