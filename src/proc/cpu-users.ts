/**
 * Which processes on this machine used the CPU over a run (issue #16: a verdict that blames "other
 * programs" should say which). Two readings of every process's CPU time (`/proc/<pid>/stat`: `utime` +
 * `stime`, the whole thread group, in the kernel's `USER_HZ` ticks of 10 ms), one before the load and one
 * after; the difference per process, largest first. Kernel threads (`PF_KTHREAD` in the stat's flags, e.g.
 * `kdamond.0`, the kernel's DAMON memory monitor) are marked: no program can close them.
 *
 * Over the same interval the verdicts know how long a thread waited for a core; this says who held the
 * cores meanwhile, as far as whole-interval totals can: a process that used the CPU during the run may not
 * have been the one a given wait was behind. Linux only; elsewhere every reading is undefined. A reading
 * costs an `open`, a `read` and a `close` per process (medians of 1.5–2.4 ms for about 70 processes on this
 * project's 2-core VM, bench/README.md §28), so it is taken outside the measured load.
 */
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { statFields, USER_HZ } from './cpu-times';

/** `PF_KTHREAD` (include/linux/sched.h): the task is a kernel thread. */
const PF_KTHREAD = 0x00200000;

/** One process's CPU so far. */
export interface ProcCpuTime {
  /** `comm`: the kernel's name of the process (15 characters at most). */
  comm: string;
  /** User + system CPU of every thread of the process so far, ms (10 ms ticks). */
  cpuMs: number;
  /** True for a kernel thread. */
  kernelThread: boolean;
  /** When it started, seconds after boot (`starttime`); absent where not read. */
  startedS?: number;
}

/** Every process's CPU at one moment, by pid. */
export type CpuReading = Map<number, ProcCpuTime>;

/** A process's CPU over the interval, in a run's record. */
export interface CpuUser {
  pid: number;
  /** `comm`, or for a process with a command line, its program and first argument, e.g. `node sim/main.js`. */
  name: string;
  /** CPU over the interval, ms (10 ms ticks). */
  cpuMs: number;
  /** Set for a kernel thread. */
  kernelThread?: true;
  /** Set for the process that took the readings (`self`) and a local simulator (`simulator`). */
  role?: 'self' | 'simulator';
}

/** Who used the CPU between two readings. Stored as `manifest.client.cpuUsers`. */
export interface CpuUsers {
  /** Wall time between the readings, ms. */
  wallMs: number;
  /** CPU of every process over the interval, ms. */
  totalMs: number;
  /** The largest users, most first (at most {@link TOP_USERS}, each ≥ one 10 ms tick), this process and the simulator among them. */
  top: CpuUser[];
  /** The simulator's pid, when it runs on this machine (whether or not it made the top). */
  simulatorPid?: number;
}

/** How many users a record keeps. */
export const TOP_USERS = 6;

/** One `/proc/<pid>/stat` line as {@link ProcCpuTime} (its fields by `statFields`); undefined when it is not one. Pure. */
export function parseProcStat(line: string): ProcCpuTime | undefined {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const rest = statFields(line); // flags (9) at 6, utime (14) and stime (15) at 11 and 12, starttime (22) at 19
  const flags = Number(rest[6]);
  const ticks = Number(rest[11]) + Number(rest[12]);
  const start = Number(rest[19]);
  if (!Number.isFinite(flags) || !Number.isFinite(ticks) || !Number.isFinite(start)) return undefined;
  const kernelThread = (flags & PF_KTHREAD) !== 0;
  return { comm: line.slice(open + 1, close), cpuMs: ticks * (1000 / USER_HZ), kernelThread, startedS: start / USER_HZ };
}

/** One buffer for every stat line (a line is about 300 bytes; the fields read come well before 1 KiB). */
const LINE = Buffer.alloc(1024);

/**
 * A `/proc` stat file's text, in one `read` (`readFileSync` would also `fstat` and read again for the end: five
 * system calls instead of three); undefined when the process is gone or not ours to read.
 */
function statLine(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    return LINE.toString('latin1', 0, readSync(fd, LINE, 0, LINE.length, 0));
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Every process's CPU now; undefined where `/proc` cannot be listed (not Linux). A process that exits meanwhile is skipped. */
export function readCpuUsers(): CpuReading | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const out: CpuReading = new Map();
  for (const p of pids) {
    if (!(p.charCodeAt(0) >= 48 && p.charCodeAt(0) <= 57)) continue;
    const line = statLine(`/proc/${p}/stat`);
    const t = line === undefined ? undefined : parseProcStat(line);
    if (t) out.set(Number(p), t);
  }
  return out.size > 0 ? out : undefined;
}

/** The last `n` segments of a path. */
const tail = (a: string, n: number) => a.split('/').slice(-n).join('/');

/**
 * A process's program and its first argument: `node /x/dist/sim/main.js --port 0` → `node sim/main.js`,
 * `/usr/bin/python3 -m nbconvert …` → `python3 nbconvert`; undefined without a command line (a kernel thread).
 */
function programOf(pid: number): string | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const arg = argv.slice(1).find((a) => !a.startsWith('-'));
    return argv.length > 0 ? [tail(argv[0], 1), ...(arg ? [tail(arg, 2)] : [])].join(' ').slice(0, 60) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The CPU each process used between `before` and `after`, largest first: at most `TOP_USERS`, each at least
 * one tick. A process first seen in `after` counts from 0 (it started during the interval). Pure but for
 * naming the kept processes from their command lines (`opts.name`, default `/proc/<pid>/cmdline`).
 */
export function cpuUsersBetween(
  before: CpuReading,
  after: CpuReading,
  wallMs: number,
  opts: { selfPid?: number; simulatorPid?: number; name?: (pid: number) => string | undefined } = {},
): CpuUsers {
  const used: Array<{ pid: number; t: ProcCpuTime; cpuMs: number }> = [];
  let totalMs = 0;
  for (const [pid, t] of after) {
    const cpuMs = Math.max(0, t.cpuMs - (before.get(pid)?.cpuMs ?? 0));
    totalMs += cpuMs;
    if (cpuMs > 0) used.push({ pid, t, cpuMs });
  }
  used.sort((a, b) => b.cpuMs - a.cpuMs || a.pid - b.pid);
  const name = opts.name ?? programOf;
  const top = used.slice(0, TOP_USERS).map(({ pid, t, cpuMs }): CpuUser => {
    const role = pid === opts.selfPid ? 'self' : pid === opts.simulatorPid ? 'simulator' : undefined;
    return {
      pid,
      name: (t.kernelThread ? undefined : name(pid)) ?? t.comm,
      cpuMs: Math.round(cpuMs),
      ...(t.kernelThread ? { kernelThread: true as const } : {}),
      ...(role ? { role } : {}),
    };
  });
  const sim = opts.simulatorPid !== undefined ? { simulatorPid: opts.simulatorPid } : {};
  return { wallMs: Math.round(wallMs), totalMs: Math.round(totalMs), top, ...sim };
}

/** Reads every process's CPU now and again at `finish()`; undefined where `/proc` is unreadable. */
export function watchCpuUsers(opts: { simulatorPid?: number } = {}): { finish(): CpuUsers | undefined } | undefined {
  const before = readCpuUsers();
  if (!before) return undefined;
  const t0 = performance.now();
  return {
    finish() {
      const after = readCpuUsers();
      return after ? cpuUsersBetween(before, after, performance.now() - t0, { selfPid: process.pid, ...opts }) : undefined;
    },
  };
}

const s2 = (ms: number) => (ms / 1000).toFixed(2);

/** A process's name as the words give it: `kdamond.0 (a kernel thread)`, or the name alone. */
export const userName = (x: { name: string; kernelThread?: boolean }): string =>
  x.kernelThread ? `${x.name} (a kernel thread)` : x.name;

/**
 * The largest users but the excluded roles, as words: `kdamond.0 (a kernel thread) 0.21 s, python3 jupyter-lab
 * (pid 812) 0.05 s`; '' when none is left. Pure.
 */
export function usersWords(u: CpuUsers, exclude: ReadonlyArray<CpuUser['role']>, n = 3): string {
  const shown = u.top.filter((x) => !exclude.includes(x.role)).slice(0, n);
  const roles = { simulator: 'the simulator', self: 'this process' };
  const who = (x: CpuUser) => (x.kernelThread ? userName(x) : `${x.role ? roles[x.role] : x.name} (pid ${x.pid})`);
  return shown.map((x) => `${who(x)} ${s2(x.cpuMs)} s`).join(', ');
}

/**
 * One sentence on who else used this machine's CPU over the run, `besides` the excluded roles (e.g. `this
 * process`): their CPU in all and the largest of them, with a leading space; '' without a reading, or when no
 * other process used a tick. Pure.
 */
export function cpuUsersSentence(u: CpuUsers | undefined, exclude: ReadonlyArray<CpuUser['role']>, besides: string): string {
  if (!u) return '';
  const words = usersWords(u, exclude);
  if (words === '') return '';
  const left = u.top.filter((x) => exclude.includes(x.role)).reduce((s, x) => s + x.cpuMs, 0);
  const restMs = Math.max(0, u.totalMs - left);
  const share = u.wallMs > 0 ? ` (${Math.round((restMs / u.wallMs) * 100)} % of one core)` : '';
  return (
    ` Over the run's ${s2(u.wallMs)} s, the processes on this machine besides ${besides} used ${s2(restMs)} s of CPU` +
    `${share}; the most went to ${words}.`
  );
}
