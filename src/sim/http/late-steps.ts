/**
 * Why the simulator's late steps were late, as far as its engine thread can tell: for each step that
 * ended more than {@link LATE_STEP_MS} late, the part of its lateness during which the thread was
 * runnable but waiting for a core (`/proc/thread-self/schedstat`'s run-queue time since the previous
 * step ended, capped at the lateness), then the part it was still asleep past the deadline beyond that wait (the
 * clock's reading, src/sim/engine/spin-clock.ts: the kernel or the VM's host woke it late), then the part spent in
 * this thread's garbage collection (the `perf_hooks` `gc` entries that began since the previous step ended, capped
 * at what is left), and the rest, when it was running its own work (or the VM's host took the CPU, steal, which a
 * thread cannot see). Exported as `loadlab:sim_late_step_seconds{cause}` so a client can say who made the steps
 * late (src/runner/sim-lateness.ts).
 *
 * A `gc` entry reaches its observer a loop turn or two after the pause, so a late step is judged at the
 * second step after it, or when the totals are read; a pause not yet reported by then counts as `other`.
 */

import { sharedThreadSchedReader } from '../../proc/cpu-times';
import { type GcPauses, watchGcPauses } from '../../proc/gc-pauses';
import { wokenLateMs } from '../../proc/loop-idle';

/** A step later than this counts as late here, ms (half the sim-behind threshold of 2 ms at p99). */
export const LATE_STEP_MS = 1;

/** Seconds of lateness of late steps, by cause, so far. */
export interface LateSteps {
  /** The engine thread was runnable, waiting for a core (other programs or threads on the machine). */
  waitingForCpuS: number;
  /**
   * Asleep past the deadline, less the wait above (which includes any wait for a core after the wake-up): the
   * kernel or the VM's host woke the thread late. A lower bound; 0 where the clock cannot tell.
   */
  wokenLateS: number;
  /** The engine thread's own garbage collection (V8 paused it). */
  gcS: number;
  /** The rest: the thread's own work, or time the VM's host took (steal). */
  otherS: number;
}

/** This thread's GC pauses, watched from the first use on (one watch per thread, never stopped). */
let pauses: GcPauses | undefined;

/** A late step waiting for its GC entries: its window since the previous step's end, its lateness and run-queue wait. */
interface Pending {
  fromMs: number;
  toMs: number;
  lateMs: number;
  waitMs: number;
  /** How long the thread was still asleep past the deadline (the clock's reading). */
  sleptMs: number;
  /** Steps observed since; judged at 2. */
  age: number;
}

/** Reads the engine thread's run-queue time at every step end; undefined where schedstat is unreadable. */
export function createLateSteps():
  | { observe(latenessMs: number, sleptLateMs?: number): void; readonly totals: LateSteps }
  | undefined {
  const sched = sharedThreadSchedReader(); // one pread per step
  let prev = sched?.read();
  if (!sched || !prev) return undefined;
  pauses ??= watchGcPauses();
  const gc = pauses;
  const sums: LateSteps = { waitingForCpuS: 0, wokenLateS: 0, gcS: 0, otherS: 0 };
  const pending: Pending[] = [];
  let lastEndMs = performance.now();
  const judge = (p: Pending) => {
    const gcMs = gc.msBetween(p.fromMs, p.toMs);
    const woken = wokenLateMs(p.lateMs, p.waitMs, p.sleptMs);
    const inGc = Math.min(p.lateMs - p.waitMs - woken, gcMs);
    sums.waitingForCpuS += p.waitMs / 1000;
    sums.wokenLateS += woken / 1000;
    sums.gcS += inGc / 1000;
    sums.otherS += (p.lateMs - p.waitMs - woken - inGc) / 1000;
  };
  const judgeAged = (all: boolean) => {
    while (pending.length > 0 && (all || pending[0].age >= 2)) judge(pending.shift() as Pending);
  };
  return {
    observe(latenessMs, sleptLateMs = 0) {
      const endMs = performance.now();
      const fromMs = lastEndMs;
      lastEndMs = endMs;
      for (const p of pending) p.age++;
      judgeAged(false);
      const now = sched.read();
      if (!now || !prev) return;
      const waited = now.waitMs - prev.waitMs;
      prev = now;
      if (!(latenessMs > LATE_STEP_MS)) return;
      const waitMs = Math.min(latenessMs, Math.max(0, waited));
      pending.push({ fromMs, toMs: endMs, lateMs: latenessMs, waitMs, sleptMs: sleptLateMs, age: 0 });
    },
    /** The totals so far, every late step judged (those still waiting for their GC entries with what has come). */
    get totals() {
      judgeAged(true);
      return sums;
    },
  };
}
