/**
 * Who made the client's event loop late in a run: the shape stored in `manifest.client.stall` and
 * `summary.health.clientStall`. Measured and judged by src/runner/stall-blame.ts (issue #16).
 */

/** What delayed the client's loop most (late ms); `none`: no 10 ms interval was late by more than 1 ms. */
export type StallCause = 'own-cpu' | 'gc' | 'other-processes' | 'none';

/** The stall attribution of a run (all times ms). Stored in `manifest.client.stall` and `summary.health.clientStall`. */
export interface ClientStall {
  cause: StallCause;
  /** Lateness of 10 ms ticks beyond 1 ms, summed by cause (src/runner/stall-blame.ts), ms. */
  lateMs: { ownCpu: number; gc: number; otherProcesses: number };
  /** GC pauses over the run: how many, their sum and the longest, ms. */
  gcCount: number;
  gcPauseTotalMs: number;
  gcPauseMaxMs: number;
  /** Mean 1-minute load average over the run minus this process's CPU in cores, ≥ 0. */
  othersLoad1m: number;
  /** CPU time stolen by the VM's host over the run, % of all CPU time (`/proc/stat`); absent where unreadable. */
  stealPercent?: number;
}
