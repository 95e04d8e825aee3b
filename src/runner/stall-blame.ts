/**
 * Who made the client's event loop late: this process's own work, garbage collection, or other
 * processes (issue #16). A late loop inflates TTFT and ITL with Node's delay; what to do about it
 * depends on the cause (fewer streams per process; less garbage; close other programs), so the
 * verdict must not guess it from the run's average CPU alone.
 *
 * How: a 10 ms ticker reads, for every interval, its own lateness (wall time beyond 10 ms),
 * this thread's CPU in that interval (`/proc/thread-self/schedstat`, ns precision; where unreadable,
 * the process's, `process.cpuUsage`) and the GC pauses that fell in it
 * (`perf_hooks` PerformanceObserver `gc` entries). Each interval late by more than
 * {@link LATE_TICK_MS} is classified by {@link classifyTick}:
 * - `gc`: GC pauses cover at least half of the lateness;
 * - `own-cpu`: the process was on the CPU for at least 60 % of the lateness (its own work blocked the loop);
 * - `other-processes`: it was waiting, not working: the kernel ran something else (on this
 *   machine that includes the simulator, when it runs here), or the VM's host did (steal).
 * The run's cause is the one with the most late milliseconds. Beside it: the 1-minute load
 * average minus this process's share (its CPU in cores), and the CPU steal from `/proc/stat`
 * where readable. `process.cpuUsage` counts every thread of the process (libuv pool, GC helpers, and
 * for a load worker inside a notebook kernel, the kernel's own thread), so it made a descheduled loop
 * read as `own-cpu`; the thread's own reading does not (`cpuOf: 'thread'` in the result).
 */

import { loadavg } from 'node:os';
import { type ClientStall, STEAL_NAMED_PERCENT, type StallCause } from '../client-stall';
import { type HostCpu, hostCpu, type ThreadSched, threadSchedReader } from '../proc/cpu-times';
import { thisThreadCpus } from '../proc/cpu-split';
import { watchGcPauses } from '../proc/gc-pauses';

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
}

/** A tick later than this counts toward the blame, ms. */
export const LATE_TICK_MS = 1;
const TICK_MS = 10;
/** Share of the lateness the process must have been on the CPU for the stall to be its own. */
const OWN_CPU_SHARE = 0.6;

/** The cause of one late interval (see the module comment). Pure. */
export function classifyTick(t: TickReading): Exclude<StallCause, 'none'> {
  if (t.gcMs >= 0.5 * t.lateMs) return 'gc';
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
    if (t.waitMs !== undefined) lateMs.inRunQueue = (lateMs.inRunQueue ?? 0) + Math.min(late, Math.max(0, t.waitMs));
  }
}

/** The cause with the most late ms (`none` when nothing was late). Pure. */
export function stallCause(lateMs: ClientStall['lateMs']): StallCause {
  const ranked: [StallCause, number][] = [
    ['own-cpu', lateMs.ownCpu],
    ['gc', lateMs.gc],
    ['other-processes', lateMs.otherProcesses],
  ];
  ranked.sort((a, b) => b[1] - a[1]);
  return ranked[0][1] > 0 ? ranked[0][0] : 'none';
}

const r2 = (x: number) => Math.round(x * 100) / 100;

/**
 * What to do about steal of `percent` (with a leading space), or '' below {@link STEAL_NAMED_PERCENT}: the
 * hypervisor ran other machines on this VM's CPUs, which no program inside it can see as a wait or change.
 */
export function stealAdvice(percent: number | undefined): string {
  if (percent === undefined || !(percent >= STEAL_NAMED_PERCENT)) return '';
  return (
    ` The VM's host took ${f1(percent)} % of this machine's CPU (steal): nothing here can change that; ` +
    'rerun later, or read the ITL/TPOT tails as upper bounds.'
  );
}

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
  const sched = threadSchedReader(); // this thread's, one pread per tick; closed at stop()
  const sched0 = sched?.read();
  if (sched0) lateMs.inRunQueue = 0;
  // This thread's CPU and run-queue time so far, ms (the process's CPU, and no wait, where the thread's are unreadable).
  const reading = sched
    ? (): ThreadSched => sched.read() ?? { cpuMs: Number.NaN, waitMs: Number.NaN }
    : (): ThreadSched => {
        const c = process.cpuUsage();
        return { cpuMs: (c.user + c.system) / 1000, waitMs: Number.NaN };
      };
  const loads: number[] = [loadavg()[0] ?? 0];
  let lastT = t0;
  let last = reading();
  let ticks = 0;
  // GC entries reach the observer after the pause, so an interval is judged one tick later.
  let pending: (Omit<TickReading, 'gcMs'> & { fromMs: number; toMs: number }) | undefined;
  const judgePending = () => {
    if (!pending) return;
    const { fromMs, toMs } = pending;
    const gcMs = gc.msBetween(fromMs, toMs);
    const { lateMs: late, cpuMs, waitMs } = pending;
    addTick(lateMs, { lateMs: late, cpuMs, gcMs, ...(Number.isFinite(waitMs) ? { waitMs } : {}) });
    pending = undefined;
  };
  const timer = setInterval(() => {
    const t = performance.now();
    const now = reading();
    judgePending();
    const [cpuMs, waitMs] = [now.cpuMs - last.cpuMs, now.waitMs - last.waitMs];
    if (t - lastT - TICK_MS > LATE_TICK_MS) pending = { fromMs: lastT, toMs: t, lateMs: t - lastT - TICK_MS, cpuMs, waitMs };
    if (++ticks % 100 === 0) loads.push(loadavg()[0] ?? 0);
    lastT = t;
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
        lateMs: {
          ownCpu: r2(lateMs.ownCpu),
          gc: r2(lateMs.gc),
          otherProcesses: r2(lateMs.otherProcesses),
          ...(lateMs.inRunQueue !== undefined ? { inRunQueue: r2(lateMs.inRunQueue) } : {}),
        },
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

const f1 = (x: number) => x.toFixed(1);

/** More workers, unless the thread had one core only (src/proc/cpu-split.ts gives a local simulator's engine one). */
function ownWorkAdvice(threadCpus: number | undefined, cores: number): string {
  if (threadCpus !== 1) return 'Run fewer streams per thread (more workers).';
  return `This thread could run on one core only${cores > 1 ? ` of this machine's ${cores}` : ''}, so more workers would share it: run fewer streams, or use a machine with more cores.`;
}

/**
 * One sentence naming the cause of a late loop, with the split of its lateness and the numbers behind
 * it, e.g. "Cause: garbage collection (41 GC pauses, 130.2 ms in all, the longest 12.5 ms; late ms:
 * 10.0 own work, 95.0 GC, 0.0 waiting for the CPU)." Pure.
 * @param cpuPercent this process's CPU over the run, % of one core; `cores` of the machine.
 */
export function stallSentence(s: ClientStall, cpuPercent: number, cores: number): string {
  const gc = `${s.gcCount} GC pauses, ${f1(s.gcPauseTotalMs)} ms in all, the longest ${f1(s.gcPauseMaxMs)} ms`;
  const steal = s.stealPercent !== undefined ? `, CPU steal ${f1(s.stealPercent)} %` : '';
  const others = `${f1(s.othersLoad1m)} of the load average on ${cores} cores was not this process${steal}`;
  const { ownCpu, gc: gcLate, otherProcesses, inRunQueue: queued } = s.lateMs;
  const queue =
    queued !== undefined && otherProcesses > 0
      ? ` (${f1(queued)} in the run queue, ${f1(otherProcesses - queued)} neither running nor queued: a blocking call, a late timer or the host's steal)`
      : '';
  const split = `late ms: ${f1(ownCpu)} own work, ${f1(gcLate)} GC, ${f1(otherProcesses)} waiting for the CPU${queue}`;
  switch (s.cause) {
    case 'gc':
      return `Cause: garbage collection (${gc}; ${split}). Run fewer streams per process, or shorter runs.`;
    case 'own-cpu':
      return s.cpuOf === 'thread'
        ? `Cause: this thread's own work (${split}; the thread used ${Math.round(s.threadCpuPercent ?? 0)} % of a core over the run). ` +
            ownWorkAdvice(s.threadCpus, cores)
        : `Cause: this process's own work (${split}; ${Math.round(cpuPercent)} % of a core over the run). ` +
            'Run fewer streams per process.';
    case 'other-processes':
      return s.cpuOf === 'thread'
        ? `Cause: other threads or processes took the CPU (${split}; the thread waited ${f1(s.threadWaitMs ?? 0)} ms for a core; ${others}). ` +
            `The notebook kernel, the simulator and other programs on this machine count. Close other busy programs.${stealAdvice(s.stealPercent)}`
        : `Cause: other processes took the CPU (${split}; ${others}). ` +
            `The simulator counts when it runs on this machine. Close other busy programs.${stealAdvice(s.stealPercent)}`;
    default:
      return `Cause not found: no 10 ms interval was late by more than ${LATE_TICK_MS} ms (${gc}; ${others}).`;
  }
}
