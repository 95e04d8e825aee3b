/**
 * The simulator's default real-time clock: it sleeps with `setTimeout` until shortly before each deadline, then
 * waits in place, napping and polling (bench/README.md §8, §14, §26), and can say how long past a deadline its
 * thread was still asleep (§29).
 */
import { idlePastMs, loopIdleMs } from '../../proc/loop-idle';
import type { EngineClock } from './types';

/**
 * The spinning clock's longest wait in place before the loop gets a turn, ms, with the default timer slack: sockets
 * wait about this long at most for their callbacks while a deadline is near, a nap's wake-up (0.1–0.2 ms on a quiet
 * VM) more (bench/README.md §8).
 */
export const SPIN_SLICE_MS = 0.1;

/** How the spinning clock naps near a deadline: the slice each futex wait asks for, and how close to the deadline it stops napping and polls the clock, ms. */
export interface NapTiming {
  sliceMs: number;
  guardMs: number;
}

/**
 * Naps with the default timer slack (50 µs): a futex wait on this kind of VM ends 0.1–0.2 ms past its time when the
 * machine is quiet (bench/wake-floor.ts), so napping stops 0.15 ms before the deadline; a slice of 0.1 ms lasts
 * about 0.17 ms.
 */
export const NAP_DEFAULT_SLACK: NapTiming = { sliceMs: SPIN_SLICE_MS, guardMs: 0.15 };

/**
 * Naps once the main thread's timer slack is 1 ns (src/proc/timer-slack.ts): a wait of 0.1 ms then ends 0.02–0.05 ms
 * past its time (p50–p99) instead of 0.07–0.1, so napping goes on to 0.07 ms before the deadline, and each slice
 * asks for 0.15 ms to last about as long as before (the same loop turns, the same wait for a socket). In the
 * simulator that saved 3 % of its CPU at 128 streams, lower in all 8 rounds side by side (bench/README.md §26).
 */
export const NAP_TIGHT_SLACK: NapTiming = { sliceMs: 0.15, guardMs: 0.07 };

/** The main thread's futex for napping: nothing ever notifies it, so `Atomics.wait` on it is a sleep with a µs timeout. */
let napCell: Int32Array | undefined;

/**
 * `setTimeout` until `spinMs` before the deadline, then waiting in slices of `nap.sliceMs` with a loop turn between:
 * napping through a slice while the deadline is more than `nap.guardMs` away, polling the clock after that.
 *
 * `sleptLateMs()`, read inside a callback, says how much of its lateness the thread spent asleep past the deadline:
 * in a nap that ended after it, or in the loop's poll waiting for a `setTimeout` that fired after it. For the timer,
 * the loop's busy time since the timer was set (the wall time less the poll's idle time, `idleMs`) is taken to have
 * come after the deadline, so the figure is a lower bound. Either way the thread ran none of its own work then: the
 * kernel (or the VM's host) woke it late, or it waited for a core after waking, which the late-step split counts
 * first (src/sim/http/late-steps.ts).
 */
export function spinClock(now: () => number, spinMs: number, nap: NapTiming, idleMs = loopIdleMs): EngineClock {
  const { sliceMs, guardMs } = nap;
  let sleptLate = 0; // of the callback running now
  return {
    now,
    sleptLateMs: () => sleptLate,
    at(atMs, fn) {
      let cancelled = false;
      let timeout: ReturnType<typeof setTimeout> | undefined;
      let immediate: ReturnType<typeof setImmediate> | undefined;
      let setAt = 0; // when the timer was set, and the loop's idle time then
      let idleAt = 0;
      const sleep = (t: number) => {
        setAt = t;
        idleAt = idleMs();
        timeout = setTimeout(fire, atMs - t - spinMs);
      };
      const fire = () => {
        const fromTimer = timeout !== undefined;
        timeout = immediate = undefined;
        if (cancelled) return;
        let t = now();
        let slept = 0;
        if (fromTimer && t > atMs) slept = idlePastMs(t - atMs, t - setAt, idleMs() - idleAt);
        if (atMs - t > spinMs) return sleep(t);
        // Wait in place for up to a slice, then give the loop a turn: an Immediate per slice, not
        // per loop turn (20 requests × 128 tokens at c=1: 512 scavenges before, 61 after; `--trace-gc`).
        if (atMs - t > guardMs) {
          napCell ??= new Int32Array(new SharedArrayBuffer(4));
          Atomics.wait(napCell, 0, 0, Math.min(sliceMs, atMs - t - guardMs));
          t = now();
          if (t > atMs) slept = t - atMs;
        } else {
          const until = Math.min(atMs, t + sliceMs);
          while (t < until) t = now();
        }
        if (t < atMs) {
          immediate = setImmediate(fire);
          return;
        }
        sleptLate = slept;
        try {
          fn();
        } finally {
          sleptLate = 0;
        }
      };
      const t0 = now();
      if (atMs - t0 > spinMs) sleep(t0);
      else immediate = setImmediate(fire);
      return {
        cancel() {
          cancelled = true;
          if (timeout !== undefined) clearTimeout(timeout);
          if (immediate !== undefined) clearImmediate(immediate);
        },
      };
    },
  };
}
