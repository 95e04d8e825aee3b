/**
 * Who made the client's event loop late in a run: the shape stored in `manifest.client.stall` and
 * `summary.health.clientStall` (and the `summary.health` block that holds it). Measured and judged by src/runner/stall-blame.ts (issue #16).
 * Also how every health verdict words a figure past its bound ({@link pastBound}).
 */

/**
 * CPU steal (the VM's host running other machines on its CPUs) at or above this share of the machine's CPU
 * over a run is named as a cause in the health verdicts and banners, %.
 */
export const STEAL_NAMED_PERCENT = 0.5;

/**
 * A measured value beside the bound it passed, as the verdicts word it: `2.04 ms > 2 ms`, never `2.0 ms > 2 ms`.
 * One decimal, or more (up to three) while the rounded value would not read as past the bound; past
 * that, `2.000 ms, just over 2 ms`.
 */
export function pastBound(value: number, bound: number, unit = 'ms'): string {
  let digits = 1;
  while (digits < 3 && Number(value.toFixed(digits)) <= bound) digits++;
  const shown = value.toFixed(digits);
  return Number(shown) > bound ? `${shown} ${unit} > ${bound} ${unit}` : `${shown} ${unit}, just over ${bound} ${unit}`;
}

/**
 * What delayed the client's loop most (late ms); `none`: no 10 ms interval was late by more than 1 ms.
 * `woken-late` (runs since bench/README.md §30): the thread was still asleep past its time, not kept off the CPU.
 */
export type StallCause = 'own-cpu' | 'gc' | 'other-processes' | 'woken-late' | 'none';

/**
 * Why a thread can be asleep past its time, for the verdicts that name it (the client's stall, the simulator's
 * late steps): no program on the machine took the CPU.
 */
export const WOKEN_LATE_WHY =
  'A thread asleep past its time was woken late by the kernel or, on a virtual machine, by its host (an idle virtual CPU ' +
  'can wake milliseconds late)';

/** The stall attribution of a run (all times ms). Stored in `manifest.client.stall` and `summary.health.clientStall`. */
export interface ClientStall {
  cause: StallCause;
  /** Lateness of 10 ms ticks beyond 1 ms, summed by cause (src/runner/stall-blame.ts), ms. */
  lateMs: {
    ownCpu: number;
    gc: number;
    otherProcesses: number;
    /**
     * Of `otherProcesses`, the part the thread was runnable but waiting for a core (schedstat; absent where
     * unreadable, and in runs saved before): other threads or programs on this machine. The rest it was
     * neither running nor queued: asleep in a blocking call, a timer fired late, or the VM's host ran something else (steal).
     */
    inRunQueue?: number;
    /**
     * Of `otherProcesses`, beyond `inRunQueue`: at least how long the thread was still asleep in the loop's poll past
     * the tick's time (the loop's idle time; the timer's first 1 ms of rounding left out). Absent in runs saved before.
     */
    wokenLate?: number;
  };
  /** GC pauses over the run: how many, their sum and the longest, ms. */
  gcCount: number;
  gcPauseTotalMs: number;
  gcPauseMaxMs: number;
  /** Mean 1-minute load average over the run minus this process's CPU in cores, ≥ 0. */
  othersLoad1m: number;
  /** CPU time stolen by the VM's host over the run, % of all CPU time (`/proc/stat`); absent where unreadable. */
  stealPercent?: number;
  /**
   * Whose CPU "own work" counts: `thread`, the watching thread alone (`/proc/thread-self/schedstat`,
   * Linux), or, when absent, the whole process (`process.cpuUsage()`, every thread: runs saved before).
   */
  cpuOf?: 'thread';
  /** With `cpuOf: 'thread'`: the thread's CPU over the run, % of one core, and its time runnable but waiting for a core, ms. */
  threadCpuPercent?: number;
  threadWaitMs?: number;
  /**
   * With `cpuOf: 'thread'`: how many CPUs the thread's affinity allowed at the end of the watch (1 where a run
   * against a simulator on a 2-core machine leaves the load threads one core); absent where unreadable.
   */
  threadCpus?: number;
}

/** One worker thread's verdict in `summary.health.workers` (runs with `workers > 1`, src/runner/worker-health.ts). */
export interface WorkerVerdict {
  worker: number;
  /** That thread's own verdict: from its CPU and, against the simulator, its own chunks' stamps (`stampLagP99Ms`), else its loop. */
  clientBound: boolean;
  /** Event-loop delay p99 of that worker's thread, ms. */
  eventLoopDelayP99Ms: number;
  /** Against the simulator: how late this worker stamped its token chunks at p99, ms (src/runner/stamp-lag.ts). */
  stampLagP99Ms?: number;
  /** That thread's own CPU, % of one core (Linux `/proc/thread-self/stat`); absent where unreadable. */
  threadCpuPercentOfOneCore?: number;
}

/**
 * How late the client stamped token chunks, checked against the simulator's own send times
 * (src/runner/stamp-lag.ts): arrival stamp − send time per chunk, the loopback hop included.
 */
export interface StampLag {
  /** Token chunks compared, and the measured requests they came from. */
  chunks: number;
  requests: number;
  /** Measured requests left out: unknown to the simulator's log, or with another number of token chunks. */
  unmatched: number;
  /** Arrival stamp − send time, ms. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The smallest: below 0 a chunk was stamped before it was sent (the loopback hop alone is about 0.05 ms). */
  minMs: number;
  /** ITL p99 as the client measured it, and as the simulator sent the same chunks, ms. */
  itlP99Ms: { measured: number; sent: number };
}

/** `summary.health`: the client-bound and sim-behind verdicts, their warnings, the stall blame, and with worker threads each worker's verdict. */
export interface RunHealth {
  clientBound: boolean;
  simBehind: boolean;
  warnings: string[];
  clientStall?: ClientStall;
  workers?: WorkerVerdict[];
  /** Against a simulator: how late chunks were stamped; the client-bound verdict is judged on it. */
  clientStampLag?: StampLag;
}
