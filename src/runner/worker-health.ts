/**
 * The health verdict of a run driven by worker threads: one per worker, and one for the run.
 * - Each worker watches its own event loop (`monitorEventLoopDelay` and the stall blame are per thread):
 *   a late worker loop stamps that worker's sends and chunks late.
 * - CPU: Node 20 has no per-thread CPU clock (`process.threadCpuUsage` came in Node 23.9) and
 *   `process.cpuUsage()` counts every thread of the process. So a worker's own CPU is read from
 *   `/proc/thread-self/stat` (src/proc/cpu-times.ts, Linux; absent elsewhere) and judged against one core
 *   (> 90 %: that worker is client-bound); the run's `cpu*` figures are the whole process's, read on the
 *   main thread. A worker's stall blame still reads `process.cpuUsage()`: its `own-cpu` means "this
 *   process's threads", which includes the other workers.
 * - The run is client-bound when any worker is, or when the whole process used more than 90 % of
 *   every core of the machine (then nothing was left for the load). Each reason names its worker.
 */

import type { WorkerVerdict } from '../client-stall';
import type { ClientHealth } from './health';

/** One worker's health as it reports it: its thread's own CPU, % of one core, and the CPUs it ran on, where readable. */
export type WorkerReport = ClientHealth & { threadCpuPercentOfOneCore?: number; cpus?: string };

/** One worker's health, as kept in `manifest.client.workers`. */
export type WorkerHealth = WorkerReport & { worker: number };

/** The run's health (the worst worker's event-loop figures, the process's CPU) plus each worker's. */
export type WorkersHealth = ClientHealth & { workers: WorkerHealth[] };

/** Percent of every core the whole process (or of one core a worker thread) may use before the run counts as client-bound. */
const CPU_SHARE = 90;

/**
 * Combine each worker's health (index = worker number) and the main thread's watch of the whole
 * process (its CPU figures; its loop does not stamp anything). Pure.
 */
export function combineWorkerHealth(per: WorkerReport[], whole: ClientHealth): WorkersHealth {
  const workers = per.map((h, worker) => judgeThreadCpu({ worker, ...h }));
  const worst = workers.reduce((a, b) => (b.eventLoopDelayP99Ms > a.eventLoopDelayP99Ms ? b : a));
  const reasons = workers.flatMap((h) => h.reasons.map((r) => `worker ${h.worker}: ${r}`));
  const cores = whole.cores > 0 ? whole.cores : 1;
  if (whole.wallMs >= 500 && whole.cpuPercentOfOneCore > CPU_SHARE * cores) {
    reasons.push(
      `The load generator was the bottleneck: its ${per.length} worker threads used ${Math.round(whole.cpuPercentOfOneCore)} % ` +
        `of one core, more than ${CPU_SHARE} % of all ${cores} cores. Use fewer streams or a bigger machine.`,
    );
  }
  return {
    eventLoopDelayP50Ms: worst.eventLoopDelayP50Ms,
    eventLoopDelayP99Ms: worst.eventLoopDelayP99Ms,
    eventLoopDelayMaxMs: Math.max(...workers.map((h) => h.eventLoopDelayMaxMs)),
    cpuUserMs: whole.cpuUserMs,
    cpuSystemMs: whole.cpuSystemMs,
    wallMs: whole.wallMs,
    cpuPercentOfOneCore: whole.cpuPercentOfOneCore,
    loadAverage1m: whole.loadAverage1m,
    cores: whole.cores,
    ...(worst.stall ? { stall: worst.stall } : {}),
    clientBound: reasons.length > 0,
    reasons,
    workers,
  };
}

/** A worker whose thread used more than 90 % of one core over a run of ≥ 500 ms is client-bound: say so. Pure. */
function judgeThreadCpu(h: WorkerHealth): WorkerHealth {
  const cpu = h.threadCpuPercentOfOneCore;
  if (cpu === undefined || h.wallMs < 500 || cpu <= CPU_SHARE) return h;
  const reason =
    `The load generator was the bottleneck: this worker's thread used ${Math.round(cpu)} % of one core (> ${CPU_SHARE} %), ` +
    'so its sends and chunk stamps queued behind its own work. Use more workers (up to the free cores) or fewer streams.';
  return { ...h, clientBound: true, reasons: [...h.reasons, reason] };
}

/** The summary's line per worker: its verdict and event-loop delay p99, ms. */
export function workerVerdicts(h: WorkersHealth): WorkerVerdict[] {
  return h.workers.map((w) => ({
    worker: w.worker,
    clientBound: w.clientBound,
    eventLoopDelayP99Ms: w.eventLoopDelayP99Ms,
    ...(w.stampLag ? { stampLagP99Ms: w.stampLag.p99Ms } : {}),
    ...(w.threadCpuPercentOfOneCore !== undefined ? { threadCpuPercentOfOneCore: w.threadCpuPercentOfOneCore } : {}),
  }));
}
