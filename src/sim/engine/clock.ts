/**
 * Clocks for the engine: a deterministic virtual clock for tests and notebooks, and a
 * real-time clock for the simulator process that fires callbacks at absolute times.
 */
import { startAlarmThread, type AlarmThread } from '../../proc/alarm-thread';
import { tightenTimerSlack } from '../../proc/timer-slack';
import { NAP_DEFAULT_SLACK, NAP_TIGHT_SLACK, SPIN_SLICE_MS, spinClock } from './spin-clock';
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
  /** `spin` and `busy`: the event loop's idle time so far, ms (default libuv's, `performance.nodeTiming.idleTime`); with `now`, for tests. */
  idleMs?: () => number;
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
  const idle = opts.idleMs;
  if (opts.mode === 'busy')
    return spinClock(now, opts.spinMs ?? 1.5, { sliceMs: SPIN_SLICE_MS, guardMs: Number.POSITIVE_INFINITY }, idle);
  return spinClock(now, opts.spinMs ?? 1.5, tightenTimerSlack() ? NAP_TIGHT_SLACK : NAP_DEFAULT_SLACK, idle);
}

/** `LOADLAB_SIM_CLOCK`: how the engine meets its step deadlines (`spin`, the default, `busy` or `thread`; see {@link RealClockOptions}). */
export function clockMode(value: string | undefined): 'thread' | 'spin' | 'busy' {
  if (value === undefined || value === '' || value === 'spin') return 'spin';
  if (value === 'thread' || value === 'busy') return value;
  throw new Error(`LOADLAB_SIM_CLOCK='${value}' is not a clock; use spin (the default), busy or thread, or unset it`);
}
