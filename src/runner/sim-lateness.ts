/**
 * Did the simulator keep real time? It reports its own clock discipline
 * (`loadlab:sim_step_lateness_seconds`, how late each engine step ended) and where its engine thread's
 * time went (`loadlab:sim_thread_*` and `loadlab:sim_host_*` seconds, `SIM_CPU_SERIES`). A run scrapes
 * `/metrics` before and after its load; the p99 lateness between the two scrapes is judged, and a
 * flagged verdict says what the CPU figures of the same interval show: the engine thread's own work, its
 * wait for a core (other programs or threads on this machine), or time the VM's host took (steal).
 */

import { httpGet } from '../client/http-get';
import { serverRoot, type TargetAuth } from '../client/url';
import { parsePrometheus, pickValue, type MetricFamily } from '../observe/prometheus';
import { simLateness } from '../observe/vllm-metrics';
import { SIM_CPU_SERIES, SIM_LATE_STEP_SERIES } from '../wire/sim-series';
import { pastBound, WOKEN_LATE_WHY } from '../client-stall';
import { stealAdvice } from './stall-sentence';

/** Simulator step lateness p99 above which its timings are less faithful, ms (as the simulator's own warning). */
export const SIM_LATENESS_THRESHOLD_MS = 2;

/** Where the simulator's engine thread's time went between two scrapes (fields absent where the server has no such series). */
export interface SimCpuShare {
  /** Wall time between the two scrapes, ms (the client's clock). */
  wallMs: number;
  /** The engine thread's CPU, % of one core. */
  threadCpuPercent?: number;
  /** How long the engine thread was runnable but waited for a core, ms. */
  threadWaitMs?: number;
  /** The machine's CPU time its hypervisor took (steal), % of all its CPU time. */
  stealPercent?: number;
  /**
   * Lateness of the steps more than 1 ms late, ms in all: while the engine thread waited for a core, while it was
   * still asleep past the deadline (woken late by the kernel or the VM's host), while its garbage collection paused
   * it, and the rest (its own work, or steal, which a thread cannot see; src/sim/http/late-steps.ts). `wokenLate`
   * and `gc` are absent from a simulator without those labels.
   */
  lateMs?: { waitingForCpu: number; wokenLate?: number; gc?: number; other: number };
}

/** The verdict on the simulator's own timing. */
export interface SimLatenessVerdict {
  /** Step lateness p99 over the run, ms (undefined when unknown: not the simulator, or no steps). */
  p99Ms: number | undefined;
  /** True when p99 > the threshold: the simulator fell behind real time. */
  simBehind: boolean;
  reasons: string[];
  /** Its engine thread's time over the same interval, when the simulator reports it. */
  cpu?: SimCpuShare;
  /** Steps the p99 was taken over (the histogram's count between the two scrapes), when known. */
  steps?: number;
}

const f1 = (x: number) => x.toFixed(1);
const r2 = (x: number) => Math.round(x * 100) / 100;

/** When the simulator's own garbage collection made most of the lateness: its cost, not the machine's or the server's. */
const GC_ADVICE =
  "That is the simulator's own cost (LoadLab's, not the modelled GPU's): rerun the point, or read the ITL/TPOT tails as upper bounds.";

/** When sleeps that ended late made most of the lateness: the machine's wake-ups, neither the modelled GPU nor LoadLab's work. */
const WOKEN_ADVICE = `${WOKEN_LATE_WHY}: that is this machine, not the modelled GPU. Rerun the point, or read the ITL/TPOT tails as upper bounds.`;

/** The late steps' lateness in all, ms: every cause the simulator reported. Pure. */
export function lateStepsTotalMs(late: NonNullable<SimCpuShare['lateMs']>): number {
  return late.waitingForCpu + (late.wokenLate ?? 0) + (late.gc ?? 0) + late.other;
}

/** The advice for the largest cause of the late steps' lateness (the first of equals). */
function lateAdvice(late: NonNullable<SimCpuShare['lateMs']>, steal: string, generic: string): string {
  const causes: [number, string][] = [
    [late.waitingForCpu, generic],
    [late.wokenLate ?? 0, WOKEN_ADVICE],
    [late.gc ?? 0, GC_ADVICE],
    [late.other, steal || 'Run fewer streams.'],
  ];
  return causes.reduce((a, b) => (b[0] > a[0] ? b : a))[1];
}

/** What the CPU figures show, and the advice that follows from them (the generic advice when there are none). */
function cpuSentence(c: SimCpuShare | undefined): string {
  const generic = 'Close other busy programs (or notebook cells), or run fewer streams.';
  if (!c) return ` ${generic}`;
  const seen: string[] = [];
  if (c.threadCpuPercent !== undefined) seen.push(`its engine thread used ${Math.round(c.threadCpuPercent)} % of a core`);
  if (c.threadWaitMs !== undefined) seen.push(`waited ${Math.round(c.threadWaitMs)} ms in all for a core`);
  if (c.stealPercent !== undefined) seen.push(`steal was ${f1(c.stealPercent)} % of this machine's CPU`);
  let text = seen.length > 0 ? ` Over the run's ${f1(c.wallMs / 1000)} s, ${seen.join(', ')}.` : '';
  const steal = stealAdvice(c.stealPercent).trim();
  const late = c.lateMs;
  const all = late ? lateStepsTotalMs(late) : 0;
  if (!late || all <= 0) return `${text} ${steal ? `${steal} ` : ''}${generic}`;
  text +=
    ` Its steps more than 1 ms late were late by ${Math.round(all)} ms in all: ` +
    `${Math.round(late.waitingForCpu)} ms waiting for a core (other programs or threads here), ` +
    (late.wokenLate !== undefined ? `${Math.round(late.wokenLate)} ms still asleep past the deadline (woken late), ` : '') +
    (late.gc !== undefined ? `${Math.round(late.gc)} ms in its own garbage collection, ` : '') +
    `${Math.round(late.other)} ms running its own work or stolen by the host.`;
  return `${text} ${lateAdvice(late, steal, generic)}`;
}

/** Below this many steps a p99 is the latest step or two, and the sentence says so. */
const FEW_STEPS = 100;

/** How many steps the p99 was taken over, as words ('' when unknown). */
function stepsWords(steps: number | undefined): string {
  if (steps === undefined) return '';
  return steps < FEW_STEPS ? ` over only ${steps} steps (so the p99 is the latest step or two)` : ` over ${steps} steps`;
}

/**
 * The verdict on the simulator's step lateness p99 (from the `loadlab:sim_step_lateness_seconds`
 * histogram delta between a scrape before and one after the run; `simLatenessMs(after, before)` in
 * `src/observe/vllm-metrics.ts` computes it). Undefined p99 (a real vLLM) is never flagged. Pure.
 * @param thresholdMs default {@link SIM_LATENESS_THRESHOLD_MS} (2 ms).
 * @param cpu the engine thread's time over the same interval ({@link simCpuShare}), for the reason.
 * @param steps how many steps the p99 was taken over, for the reason.
 */
export function assessSimLateness(
  p99Ms: number | undefined,
  thresholdMs: number = SIM_LATENESS_THRESHOLD_MS,
  cpu?: SimCpuShare,
  steps?: number,
): SimLatenessVerdict {
  const withCpu = { ...(cpu ? { cpu } : {}), ...(steps !== undefined ? { steps } : {}) };
  if (p99Ms === undefined || !Number.isFinite(p99Ms) || p99Ms <= thresholdMs) {
    return { p99Ms, simBehind: false, reasons: [], ...withCpu };
  }
  return {
    p99Ms,
    simBehind: true,
    reasons: [
      `The simulator fell behind real time: its step lateness p99 ${pastBound(p99Ms, thresholdMs)}${stepsWords(steps)}, so every ` +
        `token arrived up to that much later than the modelled GPU would send it, and ITL and TPOT read high.` +
        cpuSentence(cpu),
    ],
    ...withCpu,
  };
}

/** The change of counter `name` (`_total`) between two scrapes; undefined unless both have it. */
function delta(
  after: readonly MetricFamily[],
  before: readonly MetricFamily[],
  name: string,
  labels?: Record<string, string>,
): number | undefined {
  const a = pickValue(after, `${name}_total`, labels);
  const b = pickValue(before, `${name}_total`, labels);
  return a !== undefined && b !== undefined ? a - b : undefined;
}

/** {@link SimCpuShare} between two scrapes `wallMs` apart; undefined when the server reports none of it. Pure. */
export function simCpuShare(
  after: readonly MetricFamily[],
  before: readonly MetricFamily[],
  wallMs: number,
): SimCpuShare | undefined {
  const cpu = delta(after, before, SIM_CPU_SERIES.threadCpu);
  const wait = delta(after, before, SIM_CPU_SERIES.threadWait);
  const host = delta(after, before, SIM_CPU_SERIES.hostCpu);
  const steal = delta(after, before, SIM_CPU_SERIES.hostSteal);
  const lateWait = delta(after, before, SIM_LATE_STEP_SERIES, { cause: 'waiting_for_cpu' });
  const lateWoken = delta(after, before, SIM_LATE_STEP_SERIES, { cause: 'woken_late' });
  const lateGc = delta(after, before, SIM_LATE_STEP_SERIES, { cause: 'gc' });
  const lateOther = delta(after, before, SIM_LATE_STEP_SERIES, { cause: 'other' });
  if (!(wallMs > 0) || (cpu === undefined && wait === undefined && host === undefined)) return undefined;
  return {
    wallMs: r2(wallMs),
    ...(cpu !== undefined ? { threadCpuPercent: r2(((cpu * 1000) / wallMs) * 100) } : {}),
    ...(wait !== undefined ? { threadWaitMs: r2(wait * 1000) } : {}),
    ...(host !== undefined && steal !== undefined && host > 0 ? { stealPercent: r2((steal / host) * 100) } : {}),
    ...(lateWait !== undefined && lateOther !== undefined
      ? {
          lateMs: {
            waitingForCpu: r2(lateWait * 1000),
            ...(lateWoken !== undefined ? { wokenLate: r2(lateWoken * 1000) } : {}),
            ...(lateGc !== undefined ? { gc: r2(lateGc * 1000) } : {}),
            other: r2(lateOther * 1000),
          },
        }
      : {}),
  };
}

/** Reads the simulator's lateness over a run: one `/metrics` scrape now, one at `finish()`. */
export interface SimLatenessWatch {
  /** Scrape again; the verdict on the p99 lateness between the two scrapes (never throws). */
  finish(): Promise<SimLatenessVerdict>;
}

async function scrapeFamilies(root: string, timeoutMs: number, auth: TargetAuth): Promise<MetricFamily[] | undefined> {
  try {
    const res = await httpGet(`${root}/metrics`, { timeoutMs, ...auth });
    return res.status === 200 ? parsePrometheus(res.text) : undefined;
  } catch {
    return undefined; // no /metrics (or not Prometheus text): nothing to judge, never fatal
  }
}

/**
 * Start watching the simulator's step lateness over a run (call before the load, `finish()` after):
 * the p99 of `loadlab:sim_step_lateness_seconds` between the two scrapes, judged by
 * {@link assessSimLateness} with the engine thread's CPU figures of the same interval. Against a real
 * vLLM (no such series) or an unreachable `/metrics` the verdict has `p99Ms` undefined and is never flagged.
 * @param baseUrl server root (a trailing `/v1` is ignored).
 * @param opts.thresholdMs default 2; `opts.timeoutMs` per scrape, default 2000; `opts.auth`: the run's key and headers.
 */
export async function startSimLatenessWatch(
  baseUrl: string,
  opts: { thresholdMs?: number; timeoutMs?: number; auth?: TargetAuth } = {},
): Promise<SimLatenessWatch> {
  const root = serverRoot(baseUrl);
  const timeoutMs = opts.timeoutMs ?? 2000;
  const auth = opts.auth ?? {};
  const before = await scrapeFamilies(root, timeoutMs, auth);
  const t0 = performance.now();
  return {
    async finish() {
      const after = before ? await scrapeFamilies(root, timeoutMs, auth) : undefined;
      const late = after ? simLateness(after, before) : undefined;
      const cpu = after && before && late ? simCpuShare(after, before, performance.now() - t0) : undefined;
      return assessSimLateness(late?.p99Ms, opts.thresholdMs, cpu, late?.steps);
    },
  };
}
