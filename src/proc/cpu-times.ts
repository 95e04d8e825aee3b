/**
 * CPU times from Linux's /proc: the calling thread's, and the whole machine's (with the time its
 * hypervisor took, steal).
 *
 * The calling thread's own CPU time: Node 20 has no per-thread CPU clock (`process.threadCpuUsage`
 * came in Node 23.9; `process.cpuUsage()` counts every thread of the process), so on Linux this reads
 * `/proc/thread-self/stat` (utime + stime, fields 14 and 15, see proc(5)) in clock ticks of 1/100 s:
 * `USER_HZ` is 100 on Linux's common architectures (`getconf CLK_TCK`; Node cannot ask `sysconf`), so
 * a reading has a 10 ms resolution, fine over a run of seconds. Elsewhere: undefined.
 */

import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

/** Linux clock ticks per second (`USER_HZ`); see the module comment. */
export const USER_HZ = 100;

/**
 * The fields of a `/proc/…/stat` line after `pid (comm) `, from field 3 (state) on: field N is index N − 3
 * (proc(5)). The command name may hold spaces and parentheses, so the split starts after its last `)`.
 */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The calling thread's CPU time (user + system) so far, ms (10 ms resolution); undefined where unreadable. */
export function threadCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const f = statFields(stat); // utime (14) and stime (15) are 11 and 12
    const ticks = Number(f[11]) + Number(f[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}

/** The calling thread's scheduler times so far, ms: on a CPU, and runnable but waiting for one. */
export interface ThreadSched {
  cpuMs: number;
  waitMs: number;
}

/**
 * Make the kernel bring the calling thread's CPU time up to now. A thread's schedstat holds its CPU time as of
 * its last scheduler tick or switch, so a running thread reading its own lags by up to a tick (4 ms at this VM's
 * `CONFIG_HZ=250`: a 3 ms spin read 0.0–6.7 ms). `getrusage(RUSAGE_SELF)` (`process.cpuUsage()`) updates the
 * calling thread's runtime first (the kernel's `thread_group_cputime()`, `kernel/sched/cputime.c`, calls
 * `task_sched_runtime(current)`), after which the same spin read 3.0–3.2 ms (bench/README.md §30). The run-queue
 * time needs none: a wait is added when it ends, before the thread can read it.
 */
export function freshenThreadCpu(): void {
  process.cpuUsage();
}

/**
 * The calling thread's time on a CPU and in the run queue so far, in ns precision, from
 * `/proc/thread-self/schedstat` (fields 1 and 2, see the kernel's Documentation/scheduler/sched-stats.rst),
 * the CPU time brought up to now ({@link freshenThreadCpu}); undefined where unreadable (not Linux, or a kernel
 * without schedstats). Fine enough for a 10 ms interval, which the 10 ms ticks of {@link threadCpuMs} are not.
 */
export function threadSched(): ThreadSched | undefined {
  try {
    freshenThreadCpu();
    return parseSchedstat(readFileSync('/proc/thread-self/schedstat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** Fields 1 and 2 of a schedstat line (ns) as {@link ThreadSched} (ms); undefined unless both are numbers. */
function parseSchedstat(text: string): ThreadSched | undefined {
  const [cpu, wait] = text.split(' ', 2).map(Number);
  return Number.isFinite(cpu) && Number.isFinite(wait) ? { cpuMs: cpu / 1e6, waitMs: wait / 1e6 } : undefined;
}

/** Reads {@link ThreadSched} of the thread that opened it, again and again; `close()` when done. */
export interface ThreadSchedReader {
  read(): ThreadSched | undefined;
  close(): void;
}

/**
 * A {@link ThreadSched} reader for frequent reads (every engine step, every 10 ms tick): it keeps
 * `/proc/thread-self/schedstat` open, which names the calling thread from then on, and re-reads it
 * from offset 0: one `pread` per reading, 3.6 µs here against 13.4 µs for `readFileSync`'s open,
 * read and close (20,000 reads each, bench/README.md §9). Undefined where the file is unreadable.
 * `fresh`: bring the CPU time up to now before each reading ({@link freshenThreadCpu}, one more system call),
 * for a reader that compares the CPU of short intervals; without it the CPU time may lag by a scheduler tick.
 */
export function threadSchedReader(opts: { fresh?: boolean } = {}): ThreadSchedReader | undefined {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return undefined;
  }
  const buf = Buffer.alloc(96);
  const read = (): ThreadSched | undefined => {
    try {
      if (opts.fresh) freshenThreadCpu();
      return parseSchedstat(buf.toString('latin1', 0, readSync(fd, buf, 0, buf.length, 0)));
    } catch {
      return undefined;
    }
  };
  if (!read()) {
    closeSync(fd);
    return undefined;
  }
  let open = true;
  return {
    read: () => (open ? read() : undefined),
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

let shared: ThreadSchedReader | null | undefined; // per thread: module state is per thread

/**
 * One {@link threadSchedReader} for every caller on the calling thread, opened on first use and kept open
 * for the thread's life (never close it); undefined where unreadable.
 */
export function sharedThreadSchedReader(): ThreadSchedReader | undefined {
  if (shared === undefined) shared = threadSchedReader() ?? null;
  return shared ?? undefined;
}

/** The machine's CPU time over all its CPUs since boot, ms: all of it, and the part its hypervisor took (steal). */
export interface HostCpu {
  totalMs: number;
  stealMs: number;
}

/**
 * {@link HostCpu} from the first line of `/proc/stat` (user … steal, fields 1–8, in `USER_HZ` ticks;
 * proc(5)); undefined where unreadable. Steal is time a virtual machine's CPUs were runnable but the host
 * ran something else: no program in the VM can see or change it.
 */
export function hostCpu(): HostCpu | undefined {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
    if (cpu.length < 8 || cpu.some((x) => !Number.isFinite(x))) return undefined;
    const ms = 1000 / USER_HZ;
    return { totalMs: cpu.reduce((s, x) => s + x, 0) * ms, stealMs: cpu[7] * ms };
  } catch {
    return undefined;
  }
}
