/**
 * Clocks for the engine: a deterministic virtual clock for tests and notebooks, and a
 * real-time clock for the simulator process that fires callbacks at absolute times.
 */
import { startAlarmThread, type AlarmThread } from '../../proc/alarm-thread';
import { tightenTimerSlack } from '../../proc/timer-slack';
import type { EngineClock } from './types';

/** A clock that only moves when told to. */
export interface VirtualClock extends EngineClock {
  /** Run every callback due within the next `ms` ms, in time order, then set now += ms. */
  advance(ms: number): void;
  /** Run callbacks until none is left (an idle engine leaves none); returns how many ran. Throws after `maxCallbacks`. */
  runUntilIdle(maxCallbacks?: number): number;
  /** Callbacks scheduled and not yet run or cancelled. */
  readonly pending: number;
}

interface Timer {
  t: number;
  seq: number;
  fn: () => void;
  live: boolean;
}

/**
 * Virtual time starting at `startMs` (default 0). `at` callbacks run in (time, insertion)
 * order when `advance`/`runUntilIdle` reach them, with `now()` equal to their time, so an
 * engine on it has zero lateness and results repeat exactly.
 */
export function virtualClock(startMs = 0): VirtualClock {
  let now = startMs;
  let seq = 0;
  let live = 0;
  const heap: Timer[] = [];
  const less = (a: Timer, b: Timer) => a.t < b.t || (a.t === b.t && a.seq < b.seq);

  function push(x: Timer): void {
    heap.push(x);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(heap[i], heap[p])) break;
      [heap[i], heap[p]] = [heap[p], heap[i]];
      i = p;
    }
  }
  function pop(): Timer {
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && less(heap[l], heap[m])) m = l;
        if (r < heap.length && less(heap[r], heap[m])) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    }
    return top;
  }
  function runNext(limit: number): boolean {
    while (heap.length > 0 && !heap[0].live) pop();
    if (heap.length === 0 || heap[0].t > limit) return false;
    const x = pop();
    x.live = false;
    live--;
    now = Math.max(now, x.t);
    x.fn();
    return true;
  }

  return {
    now: () => now,
    at(atMs, fn) {
      const x: Timer = { t: Math.max(atMs, now), seq: seq++, fn, live: true };
      live++;
      push(x);
      return {
        cancel() {
          if (x.live) {
            x.live = false;
            live--;
          }
        },
      };
    },
    advance(ms) {
      const target = now + ms;
      while (runNext(target));
      now = Math.max(now, target);
    },
    runUntilIdle(maxCallbacks = 10_000_000) {
      let n = 0;
      while (runNext(Number.POSITIVE_INFINITY)) {
        if (++n > maxCallbacks)
          throw new Error(`virtual clock still busy after ${maxCallbacks} callbacks; is a loop rescheduling forever?`);
      }
      return n;
    },
    get pending() {
      return live;
    },
  };
}

/** Options of `realClock`. */
export interface RealClockOptions {
  /** Time source, ms (default `performance.now`); the alarm thread needs the default. */
  now?: () => number;
  /**
   * How a deadline is met: `spin` (default) sleeps with `setTimeout` until `spinMs` before the
   * deadline, then waits in place in slices with a loop turn between: it naps through each slice (a futex wait of
   * the main thread, with its timer slack cut to 1 ns where it can be: {@link NAP_TIGHT_SLACK}) until shortly before the deadline, and
   * polls the clock for the rest, so the loop is running when the deadline comes. `busy` polls the whole
   * `spinMs`, as `spin` did before it napped: exact too, but busy for up to `spinMs` per step (≈23 % of a core at
   * c=1, against 10–11 % napping; bench/README.md §14). `thread` sleeps
   * on an alarm thread (src/proc/alarm-thread.ts): half the CPU, but each deadline needs a thread
   * wake-up, which came late more often when the simulator shared two cores with a notebook kernel
   * and its client (bench/README.md §7). `thread` falls back to `spin` where worker threads are unavailable.
   */
  mode?: 'thread' | 'spin' | 'busy';
  /** `spin` and `busy`: how far before the deadline `setTimeout` hands over to waiting in place, ms (default 1.5). */
  spinMs?: number;
}

let alarms: AlarmThread | null | undefined; // one per process, started on first use; null: unavailable

function sharedAlarms(): AlarmThread | null {
  if (alarms === undefined) {
    try {
      alarms = startAlarmThread();
    } catch {
      alarms = null;
    }
  }
  return alarms;
}

/**
 * Real time for the simulator process: callbacks at absolute times. Node timers fire 0–2 ms late
 * (whole-millisecond loop time), a large fraction of a 7 ms decode step, so plain `setTimeout`
 * would stretch every step. The default waits in place for the last `spinMs` (napping, then polling the last
 * `guardMs` of its {@link NapTiming}; `mode: 'busy'` polls throughout); `mode: 'thread'` wakes from an alarm thread instead.
 * Either way the engine corrects residual lateness by planning each step from the previous planned end rather
 * than from the late callback.
 */
export function realClock(opts: RealClockOptions = {}): EngineClock {
  const now = opts.now ?? (() => performance.now());
  const thread = opts.mode === 'thread' && opts.now === undefined ? sharedAlarms() : null;
  if (thread) return { now, at: (atMs, fn) => thread.at(atMs, fn) };
  if (opts.mode === 'busy')
    return spinClock(now, opts.spinMs ?? 1.5, { sliceMs: SPIN_SLICE_MS, guardMs: Number.POSITIVE_INFINITY });
  return spinClock(now, opts.spinMs ?? 1.5, tightenTimerSlack() ? NAP_TIGHT_SLACK : NAP_DEFAULT_SLACK);
}

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
 */
function spinClock(now: () => number, spinMs: number, nap: NapTiming): EngineClock {
  const { sliceMs, guardMs } = nap;
  return {
    now,
    at(atMs, fn) {
      let cancelled = false;
      let timeout: ReturnType<typeof setTimeout> | undefined;
      let immediate: ReturnType<typeof setImmediate> | undefined;
      const fire = () => {
        timeout = immediate = undefined;
        if (cancelled) return;
        let t = now();
        if (atMs - t > spinMs) {
          timeout = setTimeout(fire, atMs - t - spinMs);
          return;
        }
        // Wait in place for up to a slice, then give the loop a turn: an Immediate per slice, not
        // per loop turn (20 requests × 128 tokens at c=1: 512 scavenges before, 61 after; `--trace-gc`).
        if (atMs - t > guardMs) {
          napCell ??= new Int32Array(new SharedArrayBuffer(4));
          Atomics.wait(napCell, 0, 0, Math.min(sliceMs, atMs - t - guardMs));
          t = now();
        } else {
          const until = Math.min(atMs, t + sliceMs);
          while (t < until) t = now();
        }
        if (t >= atMs) fn();
        else immediate = setImmediate(fire);
      };
      const remaining = atMs - now();
      if (remaining > spinMs) timeout = setTimeout(fire, remaining - spinMs);
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

/** `LOADLAB_SIM_CLOCK`: how the engine meets its step deadlines (`spin`, the default, `busy` or `thread`; see {@link RealClockOptions}). */
export function clockMode(value: string | undefined): 'thread' | 'spin' | 'busy' {
  if (value === undefined || value === '' || value === 'spin') return 'spin';
  if (value === 'thread' || value === 'busy') return value;
  throw new Error(`LOADLAB_SIM_CLOCK='${value}' is not a clock; use spin (the default), busy or thread, or unset it`);
}
