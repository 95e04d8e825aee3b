/**
 * Who made the client's event loop late: this process's own work, garbage collection, or other
 * processes (issue #16). A late loop inflates TTFT and ITL with Node's delay; what to do about it
 * depends on the cause (fewer streams per process; less garbage; close other programs), so the
 * verdict must not guess it from the run's average CPU alone.
 *
 * How: a 10 ms ticker reads, for every interval, its own lateness (wall time beyond 10 ms),
 * this thread's CPU in that interval (`/proc/thread-self/schedstat`, ns precision, brought up to now before each
 * reading, src/proc/cpu-times.ts `freshenThreadCpu`, or it lags by up to a scheduler tick; where unreadable,
 * the process's, `process.cpuUsage`) and the GC pauses that fell in it
 * (`perf_hooks` PerformanceObserver `gc` entries). Each interval late by more than
 * {@link LATE_TICK_MS} is classified by {@link classifyTick}:
 * - `gc`: GC pauses cover at least half of the lateness;
 * - `other-processes` when the loop was still asleep in its poll past the tick's time for at least half of the
 *   lateness (`sleptMs`, below): then its own work can have made at most half of it. This comes before the CPU
 *   test, because the thread's CPU can exceed the loop's busy time: in a run of lesson 06, 14 of the 68 late ticks
 *   with a sleep read 0.1–2.5 ms more CPU than the loop was busy in the interval (bench/README.md §30). That CPU
 *   was spent while the loop counted itself idle, in the kernel (whose interrupts, on this VM's kernel without
 *   `CONFIG_IRQ_TIME_ACCOUNTING`, are charged to the thread they interrupt), not in its own callbacks;
 * - `own-cpu`: the process was on the CPU for at least 60 % of the lateness (its own work blocked the loop);
 * - `other-processes`: it was waiting, not working: the kernel ran something else (on this
 *   machine that includes the simulator, when it runs here), or the VM's host did (steal).
 *
 * Of a waiting interval's lateness, the part the thread was runnable but queued for a core is `inRunQueue`
 * (schedstat), and the part beyond that it was still asleep in the loop's poll past the tick's time is
 * `wokenLate`: the loop's idle time (src/proc/loop-idle.ts) says how much of the interval it was busy, and
 * counting all of that busy time as after the deadline leaves a lower bound of the sleep past it. The first
 * {@link LATE_TICK_MS} of that sleep is the timer's own rounding (libuv counts timers in whole ms), so it is not
 * counted. When the sleep outweighs the rest of the waiting, the cause is `woken-late`: the kernel, or on a
 * virtual machine its host, woke the thread late; no other program took the CPU (bench/README.md §30).
 * The run's cause is the one with the most late milliseconds. Beside it: the 1-minute load
 * average minus this process's share (its CPU in cores), and the CPU steal from `/proc/stat`
 * where readable. `process.cpuUsage` counts every thread of the process (libuv pool, GC helpers, and
 * for a load worker inside a notebook kernel, the kernel's own thread), so it made a descheduled loop
 * read as `own-cpu`; the thread's own reading does not (`cpuOf: 'thread'` in the result).
 */

import { loadavg } from 'node:os';
import type { ClientStall, StallCause } from '../client-stall';
import { type HostCpu, hostCpu, type ThreadSched, threadSchedReader } from '../proc/cpu-times';
import { thisThreadCpus } from '../proc/cpu-split';
import { watchGcPauses } from '../proc/gc-pauses';
import { idlePastMs, loopIdleMs, wokenLateMs } from '../proc/loop-idle';

export type { ClientStall, StallCause } from '../client-stall';

/** One interval of the ticker, ms. */
export interface TickReading {
  /** Wall time beyond the 10 ms interval. */
  lateMs: number;
  /** This process's CPU (user + system) in the interval. */
  cpuMs: number;
  /** GC pauses that started in the interval. */
  gcMs: number;
  /** This thread's time runnable but waiting for a core in the interval (schedstat), where readable. */
  waitMs?: number;
  /**
   * Of `lateMs`, at least how long the loop was still idle in its poll past the tick's time: `lateMs` less the
   * loop's busy time in the interval (wall time − idle time), ≥ 0; absent where not read.
   */
  sleptMs?: number;
}

/** A tick later than this counts toward the blame, ms. */
export const LATE_TICK_MS = 1;
const TICK_MS = 10;
/** Share of the lateness the process must have been on the CPU for the stall to be its own. */
const OWN_CPU_SHARE = 0.6;

/** The cause of one late interval (see the module comment). Pure. */
export function classifyTick(t: TickReading): 'gc' | 'own-cpu' | 'other-processes' {
  if (t.gcMs >= 0.5 * t.lateMs) return 'gc';
  if (t.sleptMs !== undefined && t.sleptMs >= 0.5 * t.lateMs) return 'other-processes';
  if (t.cpuMs >= OWN_CPU_SHARE * t.lateMs) return 'own-cpu';
  return 'other-processes';
}

/** Add one interval to `lateMs` (only when later than {@link LATE_TICK_MS}). Pure apart from `lateMs`. */
export function addTick(lateMs: ClientStall['lateMs'], t: TickReading): void {
  if (!(t.lateMs > LATE_TICK_MS)) return;
  const late = t.lateMs - LATE_TICK_MS;
  const cause = classifyTick(t);
  if (cause === 'gc') lateMs.gc += late;
  else if (cause === 'own-cpu') lateMs.ownCpu += late;
  else {
    lateMs.otherProcesses += late;
    const queued = t.waitMs !== undefined ? Math.min(late, Math.max(0, t.waitMs)) : 0;
    if (t.waitMs !== undefined) lateMs.inRunQueue = (lateMs.inRunQueue ?? 0) + queued;
    if (t.sleptMs === undefined) return;
    lateMs.wokenLate = (lateMs.wokenLate ?? 0) + wokenLateMs(late, queued, t.sleptMs, LATE_TICK_MS);
  }
}

/**
 * The cause with the most late ms (`none` when nothing was late), `woken-late` standing for its part of
 * `otherProcesses`; the first of equals in the order own work, GC, other processes, woken late. Pure.
 */
export function stallCause(lateMs: ClientStall['lateMs']): StallCause {
  const woken = lateMs.wokenLate ?? 0;
  const ranked: [StallCause, number][] = [
    ['own-cpu', lateMs.ownCpu],
    ['gc', lateMs.gc],
    ['other-processes', lateMs.otherProcesses - woken],
    ['woken-late', woken],
  ];
  ranked.sort((a, b) => b[1] - a[1]);
  return ranked[0][1] > 0 ? ranked[0][0] : 'none';
}

const r2 = (x: number) => Math.round(x * 100) / 100;

/** The hypervisor's share of the machine's CPU between two readings, %; nothing where unreadable. */
export function stealShare(h0: HostCpu | undefined, h1: HostCpu | undefined): { stealPercent?: number } {
  const total = h0 && h1 ? h1.totalMs - h0.totalMs : 0;
  return h0 && h1 && total > 0 ? { stealPercent: r2(((h1.stealMs - h0.stealMs) / total) * 100) } : {};
}

/** The watching thread's share over `wallMs` since `sched0`, for the result; nothing where unreadable. */
function threadShare(sched0: ThreadSched | undefined, sched1: ThreadSched | undefined, wallMs: number): Partial<ClientStall> {
  if (!sched0 || !sched1 || !(wallMs > 0)) return {};
  const cpu = sched1.cpuMs - sched0.cpuMs;
  const cpus = thisThreadCpus()?.cpus.length;
  const share = { threadCpuPercent: r2((cpu / wallMs) * 100), threadWaitMs: r2(sched1.waitMs - sched0.waitMs) };
  return { cpuOf: 'thread', ...share, ...(cpus ? { threadCpus: cpus } : {}) };
}

/** This thread's CPU and run-queue time so far, ms (the process's CPU, and no wait, where the thread's are unreadable). */
function cpuReading(sched: ReturnType<typeof threadSchedReader>): () => ThreadSched {
  if (sched) return () => sched.read() ?? { cpuMs: Number.NaN, waitMs: Number.NaN };
  return () => {
    const c = process.cpuUsage();
    return { cpuMs: (c.user + c.system) / 1000, waitMs: Number.NaN };
  };
}

/** The late ms by cause, to 0.01 ms, for the result. */
function rounded(l: ClientStall['lateMs']): ClientStall['lateMs'] {
  return {
    ownCpu: r2(l.ownCpu),
    gc: r2(l.gc),
    otherProcesses: r2(l.otherProcesses),
    ...(l.inRunQueue !== undefined ? { inRunQueue: r2(l.inRunQueue) } : {}),
    ...(l.wokenLate !== undefined ? { wokenLate: r2(l.wokenLate) } : {}),
  };
}

/** A running stall watch; `stop()` may be called more than once (later calls return the first result). */
export interface StallWatch {
  stop(): ClientStall;
}

/** Start the 10 ms ticker, the GC observer and the steal and load readings (see the module comment). */
export function startStallWatch(): StallWatch {
  const lateMs: ClientStall['lateMs'] = { ownCpu: 0, gc: 0, otherProcesses: 0 };
  const gc = watchGcPauses();
  const host0 = hostCpu();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const sched = threadSchedReader({ fresh: true }); // this thread's, one pread per tick; closed at stop()
  const sched0 = sched?.read();
  if (sched0) lateMs.inRunQueue = 0;
  lateMs.wokenLate = 0;
  const reading = cpuReading(sched);
  const loads: number[] = [loadavg()[0] ?? 0];
  let lastT = t0;
  let last = reading();
  let lastIdle = loopIdleMs();
  let ticks = 0;
  // GC entries reach the observer after the pause, so an interval is judged one tick later.
  let pending: (Omit<TickReading, 'gcMs'> & { fromMs: number; toMs: number; sleptMs: number }) | undefined;
  const judgePending = () => {
    if (!pending) return;
    const { fromMs, toMs } = pending;
    const gcMs = gc.msBetween(fromMs, toMs);
    const { lateMs: late, cpuMs, waitMs, sleptMs } = pending;
    addTick(lateMs, { lateMs: late, cpuMs, gcMs, sleptMs, ...(Number.isFinite(waitMs) ? { waitMs } : {}) });
    pending = undefined;
  };
  const timer = setInterval(() => {
    const t = performance.now();
    const idle = loopIdleMs();
    const now = reading();
    judgePending();
    const [cpuMs, waitMs] = [now.cpuMs - last.cpuMs, now.waitMs - last.waitMs];
    const late = t - lastT - TICK_MS;
    if (late > LATE_TICK_MS) {
      pending = { fromMs: lastT, toMs: t, lateMs: late, cpuMs, waitMs, sleptMs: idlePastMs(late, t - lastT, idle - lastIdle) };
    }
    if (++ticks % 100 === 0) loads.push(loadavg()[0] ?? 0);
    lastT = t;
    lastIdle = idle;
    last = now;
  }, TICK_MS);
  timer.unref();
  let result: ClientStall | undefined;
  return {
    stop() {
      if (result) return result;
      clearInterval(timer);
      judgePending();
      const sched1 = sched?.read();
      sched?.close();
      gc.stop();
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const ourCores = wallMs > 0 ? (cpu.user + cpu.system) / 1000 / wallMs : 0;
      const meanLoad = loads.reduce((s, x) => s + x, 0) / loads.length;
      const host1 = hostCpu();
      result = {
        cause: stallCause(lateMs),
        lateMs: rounded(lateMs),
        gcCount: gc.count,
        gcPauseTotalMs: r2(gc.totalMs),
        gcPauseMaxMs: r2(gc.maxMs),
        othersLoad1m: r2(Math.max(0, meanLoad - ourCores)),
        ...stealShare(host0, host1),
        ...threadShare(sched0, sched1, wallMs),
      };
      return result;
    },
  };
}
