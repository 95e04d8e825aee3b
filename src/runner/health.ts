/**
 * Is the load generator itself the bottleneck? A run watches its own event loop and CPU: a
 * blocked or starved loop sends requests late and stamps chunks late, which inflates TTFT and
 * ITL with Node's own delay instead of the server's. The numbers go into `manifest.client` so a
 * suspicious run can be told from a slow server, and a plain-words verdict goes to the user.
 *
 * Definitions:
 * - event-loop delay: how much later than asked a 10 ms repeating timer ran
 *   (`perf_hooks.monitorEventLoopDelay`, whose samples are whole intervals, so the 10 ms
 *   resolution is subtracted); p50/p99/max over the run, ms.
 * - CPU: `process.cpuUsage()` user + system over the run's wall time, percent of one core
 *   (JavaScript runs on one core; GC and libuv threads can push it past 100).
 * - stall: who made the loop late, this process's work, garbage collection or other processes
 *   (`./stall-blame`); the warning names it.
 * The simulator reports its own clock discipline (`loadlab:sim_step_lateness_seconds`);
 * `./sim-lateness` turns its p99 into the same kind of verdict (re-exported here).
 */

import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pastBound, type StampLag } from '../client-stall';
import { startStallWatch, type ClientStall } from './stall-blame';
import { stallSentence } from './stall-sentence';

export type { ClientStall, StallCause } from './stall-blame';
export {
  assessSimLateness,
  SIM_LATENESS_THRESHOLD_MS,
  type SimCpuShare,
  type SimLatenessVerdict,
  type SimLatenessWatch,
  startSimLatenessWatch,
} from './sim-lateness';

/** Client health over a run (all times ms). */
export interface ClientHealth {
  /** Event-loop delay beyond the 10 ms sampling interval: median, ms. */
  eventLoopDelayP50Ms: number;
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  /** CPU time of this process over the run, ms. */
  cpuUserMs: number;
  cpuSystemMs: number;
  /** Wall time watched, ms. */
  wallMs: number;
  /** (user + system) / wall, percent of one core. */
  cpuPercentOfOneCore: number;
  /** 1-minute load average of the machine at the end (0 where the OS has none, e.g. Windows). */
  loadAverage1m: number;
  /** Logical cores of the machine. */
  cores: number;
  /** Who made the loop late: own CPU, GC or other processes (`./stall-blame`); absent in runs saved before it. */
  stall?: ClientStall;
  /** Against the simulator: how late token chunks were stamped, from its send log (`./stamp-lag`); it decides the verdict. */
  stampLag?: StampLag;
  /** True when a threshold was crossed: the timings include the client's own delay. */
  clientBound: boolean;
  /** Why, in plain words (empty when healthy). */
  reasons: string[];
}

/** The measured part of {@link ClientHealth}, what {@link assessClientHealth} judges. */
export type ClientHealthNumbers = Omit<ClientHealth, 'clientBound' | 'reasons'>;

/** When a run counts as client-bound. */
export interface HealthThresholds {
  /** Event-loop delay p99 above this is client-bound, ms; default 5. */
  delayP99Ms: number;
  /** CPU above this percent of one core is client-bound; default 90. Only judged for runs ≥ 500 ms. */
  cpuPercent: number;
}

/** Defaults: delay p99 5 ms, CPU 90 % of one core. */
export const DEFAULT_HEALTH_THRESHOLDS: Readonly<HealthThresholds> = Object.freeze({ delayP99Ms: 5, cpuPercent: 90 });

/** The words that mark the event-loop delay's reason (./stamp-lag replaces it when the stamps can be checked). */
export const LOOP_DELAY_REASON = 'event-loop delay p99';

/** Runs shorter than this are not judged on CPU: a few ms of start-up work read as 100 %. */
const MIN_WALL_FOR_CPU_MS = 500;
const RESOLUTION_MS = 10;
const ADVICE = "Run fewer streams per process, and don't run other heavy cells at the same time.";

const f1 = (x: number) => x.toFixed(1);

/** A running watch; `stop()` may be called more than once (later calls return the first result). */
export interface ClientHealthWatch {
  stop(): ClientHealth;
}

/**
 * Start watching this process: event-loop delay (10 ms resolution) and CPU.
 * @param thresholds for the verdict in `stop()`; default {@link DEFAULT_HEALTH_THRESHOLDS}.
 */
export function startClientHealth(thresholds: Partial<HealthThresholds> = {}): ClientHealthWatch {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  const stall = startStallWatch();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let result: ClientHealth | undefined;
  return {
    stop() {
      if (result) return result;
      h.disable();
      const stalled = stall.stop();
      const cpu = process.cpuUsage(cpu0);
      const wallMs = performance.now() - t0;
      // Samples are whole intervals (≈ 10 ms + delay); the delay is what exceeds the interval.
      const late = (ns: number) => (h.count > 0 && Number.isFinite(ns) ? Math.max(0, ns / 1e6 - RESOLUTION_MS) : 0);
      const cpuUserMs = cpu.user / 1000;
      const cpuSystemMs = cpu.system / 1000;
      const numbers: ClientHealthNumbers = {
        eventLoopDelayP50Ms: late(h.percentile(50)),
        eventLoopDelayP99Ms: late(h.percentile(99)),
        eventLoopDelayMaxMs: late(h.max),
        cpuUserMs,
        cpuSystemMs,
        wallMs,
        cpuPercentOfOneCore: wallMs > 0 ? ((cpuUserMs + cpuSystemMs) / wallMs) * 100 : 0,
        loadAverage1m: loadavg()[0] ?? 0,
        cores: cpus().length,
        stall: stalled,
      };
      result = { ...numbers, ...assessClientHealth(numbers, thresholds) };
      return result;
    },
  };
}

/**
 * The verdict on measured client health: client-bound when the event-loop delay p99 or the CPU
 * crosses its threshold, with one plain-words reason per crossing, e.g. "The load generator was
 * the bottleneck: event-loop delay p99 12.3 ms > 5 ms. …". Pure.
 * @param thresholds default delay p99 5 ms, CPU 90 % of one core (CPU judged only for runs ≥ 500 ms).
 */
export function assessClientHealth(
  h: ClientHealthNumbers,
  thresholds: Partial<HealthThresholds> = {},
): { clientBound: boolean; reasons: string[] } {
  const t = { ...DEFAULT_HEALTH_THRESHOLDS, ...thresholds };
  const reasons: string[] = [];
  const cpu = h.cpuPercentOfOneCore;
  if (h.eventLoopDelayP99Ms > t.delayP99Ms) {
    // With the stall attribution: name its cause. Without (numbers saved before it): little CPU of
    // our own but a late loop reads as other programs taking the cores.
    const starved = h.stall
      ? ` ${stallSentence(h.stall, cpu, h.cores)}`
      : h.wallMs >= MIN_WALL_FOR_CPU_MS && cpu < 50
        ? ` This process used only ${Math.round(cpu)} % of a core, so other programs took the CPU` +
          (h.cores > 0 ? ` (load average ${f1(h.loadAverage1m)} on ${h.cores} cores).` : '.')
        : '';
    reasons.push(
      `The load generator was the bottleneck: ${LOOP_DELAY_REASON} ${pastBound(h.eventLoopDelayP99Ms, t.delayP99Ms)}` +
        ` (max ${f1(h.eventLoopDelayMaxMs)} ms). Its timings include Node's own delay.${starved}${h.stall ? '' : ` ${ADVICE}`}`,
    );
  }
  if (h.wallMs >= MIN_WALL_FOR_CPU_MS && cpu > t.cpuPercent) {
    reasons.push(
      `The load generator was the bottleneck: it used ${Math.round(cpu)} % of one core (> ${t.cpuPercent} %). ` +
        `Node runs JavaScript on one core, so sends and chunk stamps queued behind other work. ${ADVICE}`,
    );
  }
  return { clientBound: reasons.length > 0, reasons };
}
