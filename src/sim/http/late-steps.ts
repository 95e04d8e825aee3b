/**
 * Why the simulator's late steps were late, as far as its engine thread can tell: for each step that
 * ended more than {@link LATE_STEP_MS} late, the part of its lateness during which the thread was
 * runnable but waiting for a core (`/proc/thread-self/schedstat`'s run-queue time since the previous
 * step ended, capped at the lateness) and the rest, when it was running its own work (or the VM's host
 * took the CPU, steal, which a thread cannot see). Exported as `loadlab:sim_late_step_seconds{cause}`
 * so a client can say who made the steps late (src/runner/sim-lateness.ts).
 */

import { sharedThreadSchedReader } from '../../proc/cpu-times';

/** A step later than this counts as late here, ms (half the sim-behind threshold of 2 ms at p99). */
export const LATE_STEP_MS = 1;

/** Seconds of lateness of late steps, by cause, so far. */
export interface LateSteps {
  /** The engine thread was runnable, waiting for a core (other programs or threads on the machine). */
  waitingForCpuS: number;
  /** The rest: the thread's own work, or time the VM's host took (steal). */
  otherS: number;
}

/** Reads the engine thread's run-queue time at every step end; undefined where schedstat is unreadable. */
export function createLateSteps(): { observe(latenessMs: number): void; readonly totals: LateSteps } | undefined {
  const sched = sharedThreadSchedReader(); // one pread per step
  let prev = sched?.read();
  if (!sched || !prev) return undefined;
  const totals: LateSteps = { waitingForCpuS: 0, otherS: 0 };
  return {
    observe(latenessMs) {
      const now = sched.read();
      if (!now || !prev) return;
      const waited = now.waitMs - prev.waitMs;
      prev = now;
      if (!(latenessMs > LATE_STEP_MS)) return;
      const wait = Math.min(latenessMs, Math.max(0, waited));
      totals.waitingForCpuS += wait / 1000;
      totals.otherS += (latenessMs - wait) / 1000;
    },
    totals,
  };
}
