/**
 * The simulator and the client on separate cores, when both run on this machine.
 *
 * On loopback, each chunk the simulator writes wakes the client's thread with a sync wake-up
 * (`sock_def_readable`, net/core/sock.c), and Linux places a thread woken that way on the writer's
 * CPU when the writer runs alone there (`wake_affine_idle`, kernel/sched/fair.c). The client then
 * waits in that CPU's queue behind the simulator's whole step of writes, even while the other core
 * is idle: on this project's 2-core VM, a client reading 256 streams waited 0.9 s for a core in a
 * 10 s run, 0.75 s of it behind the simulator (bench/README.md §15).
 *
 * So the simulator pins its engine thread to the last CPU it may use and says so in `GET /version`
 * (`loadlab_engine_cpu`, with the machine's `loadlab_boot_id`; LoadLab only), and a run against it on the
 * same machine pins each of its load threads to the other CPUs until it ends. `LOADLAB_CPU_SPLIT=0` turns
 * both off. Both sides also put their other threads on `SCHED_IDLE` meanwhile (./idle-threads). Linux only
 * (`/proc/thread-self` and util-linux's `taskset`); elsewhere, or with one CPU,
 * nothing is pinned. A thread started by a pinned thread keeps its CPUs (the simulator's tokenizer and
 * alarm threads take theirs back; the tokenizer then yields too, and starts with the server), and every simulator on
 * one machine takes the same last CPU.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { confineThreads, idleOtherThreads, idleOtherThreadsFor, threadCpuList } from './idle-threads';

/** `LOADLAB_CPU_SPLIT`: on unless `0`; anything but `0`/`1` throws, naming the fix. */
export function cpuSplitEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.LOADLAB_CPU_SPLIT;
  if (v === undefined || v === '' || v === '1') return true;
  if (v === '0') return false;
  throw new Error(`LOADLAB_CPU_SPLIT=${v}: use 1 (the simulator and the client on separate cores, the default) or 0 (off)`);
}

/** `0-2,5` → [0, 1, 2, 5] (Linux's cpu list format); undefined when it is not one. */
export function parseCpuList(s: string): number[] | undefined {
  const out: number[] = [];
  for (const part of s.trim().split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) return undefined;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo) return undefined;
    for (let c = lo; c <= hi; c++) out.push(c);
  }
  return out;
}

/** [0, 1, 2, 5] → `0-2,5`. */
export function formatCpuList(cpus: readonly number[]): string {
  const parts: string[] = [];
  const sorted = [...cpus].sort((a, b) => a - b);
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j > i ? `${sorted[i]}-${sorted[j]}` : `${sorted[i]}`);
    i = j;
  }
  return parts.join(',');
}

/** The calling thread's id and the CPUs it may run on; undefined where `/proc/thread-self` is not there. */
export function thisThreadCpus(): { tid: number; cpus: number[] } | undefined {
  try {
    // `<pid>/task/<tid>`; a /proc of another PID namespace names another process: then nothing is pinned.
    const m = /^(\d+)\/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'));
    const tid = m && Number(m[1]) === process.pid ? Number(m[2]) : Number.NaN;
    const line = Number.isInteger(tid) ? threadCpuList(tid) : undefined;
    const cpus = line === undefined ? undefined : parseCpuList(line);
    return cpus ? { tid, cpus } : undefined;
  } catch {
    return undefined;
  }
}

/** Set thread (or process main thread) `tid`'s CPUs through util-linux's `taskset -p`; throws when that fails. */
export function setThreadCpus(tid: number, cpus: readonly number[]): void {
  execFileSync('taskset', ['-p', '-c', formatCpuList(cpus), String(tid)], { stdio: 'ignore', timeout: 5000 });
}

/** A pinned thread, or why it was not pinned. */
export type Pin = { tid: number; cpus: number[]; release(): void } | { reason: string };

/**
 * Pin the calling thread (`tid`) to `cpus` (through `taskset -p`, which sets one thread's affinity); the
 * CPUs read back after it are the result. `release` gives the thread its former CPUs back. A thread already on
 * exactly those CPUs is left alone (no `taskset`, nothing to release). Never throws.
 */
export function pinThisThread(cpus: readonly number[]): Pin {
  const before = thisThreadCpus();
  if (!before) return { reason: 'no /proc/thread-self (not Linux)' };
  const want = cpus.filter((c) => before.cpus.includes(c));
  if (want.length === 0) return { reason: `none of CPUs ${formatCpuList(cpus)} is allowed here` };
  if (formatCpuList(want) === formatCpuList(before.cpus)) return { tid: before.tid, cpus: before.cpus, release: () => {} };
  const set = (list: readonly number[]) => setThreadCpus(before.tid, list);
  try {
    set(want);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { reason: e.code === 'ENOENT' ? 'no taskset (util-linux) on PATH' : `taskset failed: ${e.message}` };
  }
  const after = thisThreadCpus()?.cpus ?? want;
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    try {
      set(before.cpus);
    } catch {
      // the thread keeps its pin; a thread that ends drops it anyway
    }
  };
  return { tid: before.tid, cpus: after, release };
}

/**
 * {@link pinThisThread}, and meanwhile every other thread of the process kept to the same CPUs (`confineThreads`)
 * and on `SCHED_IDLE` (`idleOtherThreadsFor`, which needs `CAP_SYS_NICE`), as a run's load thread does against a
 * local simulator. `helpers` says what was done with them (`idled`: put on `SCHED_IDLE`, so this process can set
 * a thread back); `release` sets them back and unpins. Never throws.
 * Only the main thread moves the other threads' CPUs: its runs share one pin (src/runner/load-cpus.ts), while runs
 * started from two threads at once would each restore what they saw, and could leave the process on the load CPUs.
 * The main thread moves them first, itself included (one `taskset -a`), so its own pin then costs nothing and the
 * release gives every thread, this one too, the CPUs it had.
 */
export function pinWithIdleHelpers(
  cpus: readonly number[],
): { cpus: number[]; helpers: string; idled: boolean; release(): void } | { reason: string } {
  const here = isMainThread ? thisThreadCpus() : undefined;
  const allowed = here ? cpus.filter((c) => here.cpus.includes(c)) : [];
  const kept =
    allowed.length > 0
      ? confineThreads(formatCpuList(allowed))
      : { reason: isMainThread ? 'none of those CPUs is allowed here' : 'a worker thread: only the main thread moves them' };
  const pin = pinThisThread(cpus);
  if ('reason' in pin) {
    if ('release' in kept) kept.release();
    return pin;
  }
  const idle = idleOtherThreadsFor(pin.tid);
  const where = 'reason' in kept ? `not kept to them (${kept.reason})` : `kept to CPUs ${formatCpuList(pin.cpus)}`;
  return {
    cpus: pin.cpus,
    idled: 'tids' in idle,
    helpers:
      'tids' in idle
        ? `${idle.tids.length} other threads of this process on SCHED_IDLE, ${where}`
        : `other threads ${where}, at their policy (${idle.reason})`,
    release() {
      if ('tids' in idle) idle.release();
      pin.release();
      if ('release' in kept) kept.release();
    },
  };
}

/** The CPUs this process's main thread had before {@link pinSimEngine} pinned it (a `taskset` list), if it did. */
let spread: string | undefined;

/** The CPUs a helper thread of the simulator should take back (it inherits the engine thread's pin), if pinned. */
export function cpusBeforePin(): string | undefined {
  return spread;
}

/** The simulator's side: pin this (the engine's) thread to the last CPU it may use; undefined when not pinned, with why. */
export function pinSimEngine(env: NodeJS.ProcessEnv = process.env): { cpu?: number; note: string } {
  if (!cpuSplitEnabled(env)) return { note: 'not pinned (LOADLAB_CPU_SPLIT=0)' };
  const now = thisThreadCpus();
  if (!now) return { note: 'not pinned (no /proc/thread-self: not Linux)' };
  if (now.cpus.length < 2) return { note: `not pinned (one CPU: ${formatCpuList(now.cpus)})` };
  const cpu = now.cpus[now.cpus.length - 1];
  const pin = pinThisThread([cpu]);
  if ('reason' in pin) return { note: `not pinned (${pin.reason})` };
  spread = formatCpuList(now.cpus);
  const helpers = idleOtherThreads(now.tid);
  const yielded =
    'tids' in helpers
      ? `its ${helpers.tids.length} helper threads yield (SCHED_IDLE)`
      : `helper threads not idle (${helpers.reason})`;
  return {
    cpu,
    note: `engine thread on CPU ${cpu}, ${yielded}; a LoadLab run on this machine keeps its load threads off it (LOADLAB_CPU_SPLIT=0: off)`,
  };
}

/** This boot of this machine's kernel (`/proc/sys/kernel/random/boot_id`), or undefined where unreadable. */
export function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/** True when a server at `rootUrl` that gave `serverBootId` (`GET /version`) runs on this machine: a loopback URL and this boot's id. */
export function onThisMachine(rootUrl: string, serverBootId: string | undefined): boolean {
  return isLoopbackUrl(rootUrl) && serverBootId !== undefined && serverBootId === bootId();
}

/** Loopback hosts (a port forwarded there may still lead elsewhere: the boot id decides). */
export function isLoopbackUrl(url: string): boolean {
  try {
    const h = new URL(url).hostname;
    return h === 'localhost' || h === '[::1]' || h === '::1' || h === '0.0.0.0' || /^127\./.test(h);
  } catch {
    return false;
  }
}

/**
 * The client's side: the CPUs its load threads should keep to, against a simulator at `rootUrl`
 * whose engine thread is on `simCpu` of the machine booted as `simBootId` (both from `GET /version`):
 * every CPU this thread may use but that one. `cpus` undefined: leave the threads alone, for the
 * reason in `note`. Throws on a bad `LOADLAB_CPU_SPLIT`.
 */
export function loadThreadCpus(
  rootUrl: string,
  simCpu: number | undefined,
  simBootId: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { cpus?: number[]; note: string } {
  if (!cpuSplitEnabled(env)) return { note: 'not pinned (LOADLAB_CPU_SPLIT=0)' };
  if (simCpu === undefined)
    return {
      note: "not pinned (the simulator's engine thread is not pinned: one CPU, not Linux, no taskset, LOADLAB_CPU_SPLIT=0 where it runs, or an older simulator)",
    };
  if (!onThisMachine(rootUrl, simBootId))
    return { note: 'not pinned (the simulator is not on this machine, or did not say which machine it is on)' };
  const now = thisThreadCpus();
  if (!now) return { note: 'not pinned (no /proc/thread-self: not Linux)' };
  const cpus = now.cpus.filter((c) => c !== simCpu);
  if (cpus.length === 0) return { note: `not pinned (CPU ${simCpu} is the only one allowed)` };
  return { cpus, note: `load threads on CPUs ${formatCpuList(cpus)}, off the simulator's engine CPU ${simCpu}` };
}
