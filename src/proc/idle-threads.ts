/**
 * Helper threads that yield to the measuring ones: `SCHED_IDLE` for every other thread of a process
 * while its latency-critical thread works.
 *
 * With the cores split (./cpu-split), the simulator's engine thread has one CPU and the load threads the
 * others, but the helper threads of both processes (V8's garbage-collection and compiler threads, libuv's
 * pool, a notebook kernel's ZeroMQ threads) may run anywhere. Linux's fair scheduler lets a running thread
 * finish its slice before a woken one runs (EEVDF's `RUN_TO_PARITY`, kernel/sched/features.h: "inhibit (wakeup)
 * preemption until the current task has … exhausted its slice"), so a waking engine step or chunk read waited
 * behind them: in a lesson traced with `perf sched`, the kernel's V8 helper
 * threads ran 1.2 s on the simulator's CPU during its runs. A `SCHED_IDLE` thread runs only when nothing
 * else wants the CPU and is preempted at once by any other (`sched_setscheduler(2)`); nice values do not
 * do that (bench/README.md §16).
 *
 * - The simulator sets it on every thread but the engine's when it pins the engine (its tokenizer threads
 *   and the alarm thread start later, from the engine's thread, and keep the normal policy).
 * - A run's calling thread sets it on the other threads of its process while it is pinned, and sets them
 *   back after. Only a process with `CAP_SYS_NICE` may leave `SCHED_IDLE` (`sched_setscheduler(2)`:
 *   RLIMIT_NICE is 0 by default), so without it the run leaves its process's threads alone.
 * - A `SCHED_IDLE` thread is not always preempted at once: a kernel in `PREEMPT_NONE` mode (this VM's, from
 *   /proc/config.gz and no `preempt=` at boot) switches away from a thread that is inside a system call only when
 *   the call returns or yields. In a lesson traced with `perf sched`, a notebook kernel's idle V8 helpers ran
 *   0.7–4 ms at a time on the simulator's CPU while its engine waited: 26 of the 64 ms the engines waited during
 *   points (bench/README.md §22). So a run also keeps every thread of its process off the simulator's CPU
 *   ({@link confineThreads}), which needs no privilege.
 *
 * Through util-linux's `chrt` (Node has no `sched_setscheduler`); Linux only.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { statFields } from './cpu-times';

/** Linux scheduling policies, as `/proc/<pid>/task/<tid>/stat` field 41 gives them. */
export const SCHED_OTHER = 0;
export const SCHED_IDLE = 5;

/** The thread ids of process `pid` (default this one); [] where `/proc` has none (not Linux). */
export function processThreads(pid = process.pid): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number).filter(Number.isInteger);
  } catch {
    return [];
  }
}

/** Thread `tid`'s scheduling policy (of process `pid`, default this one), or undefined when it is gone. */
export function threadPolicy(tid: number, pid = process.pid): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const policy = Number(statFields(stat)[38]); // field 41
    return Number.isInteger(policy) ? policy : undefined;
  } catch {
    return undefined;
  }
}

/** Whether this process may set a thread back from `SCHED_IDLE`: `CAP_SYS_NICE` (bit 23) in its effective set. */
export function canLeaveIdle(status?: string): boolean {
  try {
    const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(status ?? readFileSync('/proc/self/status', 'utf8'));
    return m !== null && (BigInt(`0x${m[1]}`) & (1n << 23n)) !== 0n;
  } catch {
    return false;
  }
}

/**
 * Set each of `tids` to `SCHED_IDLE` (`idle`) or `SCHED_OTHER` with `chrt`: for one thread, `chrt` itself; for
 * more, one `sh` running `chrt` per thread (a thread that ended meanwhile is skipped). Returns the tids that are on
 * that policy after it. Throws only when `sh` cannot be run.
 */
export function setThreadsPolicy(tids: readonly number[], idle: boolean): number[] {
  if (tids.length === 0) return [];
  const flag = idle ? '-i' : '-o';
  if (tids.length === 1) {
    try {
      execFileSync('chrt', [flag, '-p', '0', String(tids[0])], { stdio: 'ignore', timeout: 10_000 });
    } catch {
      // as a failed chrt under sh: the policy read below says what happened
    }
  } else {
    const script = 'flag=$1; shift; for t; do chrt "$flag" -p 0 "$t" 2>/dev/null; done; exit 0';
    execFileSync('sh', ['-c', script, 'sh', flag, ...tids.map(String)], { stdio: 'ignore', timeout: 10_000 });
  }
  const want = idle ? SCHED_IDLE : SCHED_OTHER;
  return tids.filter((t) => threadPolicy(t) === want);
}

/** Every thread of this process back on `SCHED_OTHER` (one `chrt -a`); throws when `chrt` fails. */
function allThreadsBack(): void {
  execFileSync('chrt', ['-a', '-o', '-p', '0', String(process.pid)], { stdio: 'ignore', timeout: 10_000 });
}

/** Threads set idle, or why none was. */
export type Yield = { tids: number[] } | { reason: string };

/** Every thread of this process but `keepTid` on `SCHED_IDLE`, for good (the simulator's side). Never throws. */
export function idleOtherThreads(keepTid: number): Yield {
  const others = processThreads().filter((t) => t !== keepTid && threadPolicy(t) === SCHED_OTHER);
  try {
    const tids = setThreadsPolicy(others, true);
    return tids.length > 0 ? { tids } : { reason: others.length === 0 ? 'no other threads' : 'chrt did not set them' };
  } catch (err) {
    return { reason: `chrt failed: ${(err as Error).message}` };
  }
}

/**
 * For one run: every thread of this process but `keepTid` on `SCHED_IDLE`; `release` sets them back. Only
 * with `CAP_SYS_NICE` (else a thread could not come back, and the process would keep idle threads). Never throws.
 * When every thread is on `SCHED_OTHER` (as usual), three `chrt` calls do it whatever the thread count: `chrt -a`
 * sets the whole process idle and one more sets `keepTid` back (it waits in `spawnSync` meanwhile), and the release
 * is one `chrt -a` back, which also frees threads born idle during the run. One `chrt` per thread (a process started
 * per thread, twice) cost each run about 0.07 s more CPU on this project's VM (bench/README.md §25).
 */
export function idleOtherThreadsFor(keepTid: number, status?: string): { tids: number[]; release(): void } | { reason: string } {
  if (!canLeaveIdle(status)) return { reason: 'no CAP_SYS_NICE to set them back after the run' };
  const all = processThreads();
  const y = all.some((t) => threadPolicy(t) !== SCHED_OTHER) ? idleOtherThreads(keepTid) : idleAllBut(keepTid);
  if ('reason' in y) return y;
  let done = false;
  return {
    tids: y.tids,
    release() {
      if (done) return;
      done = true;
      try {
        if ('all' in y) allThreadsBack();
        else setThreadsPolicy(y.tids, false);
      } catch {
        // chrt vanished mid-run: the threads stay idle until the process ends
      }
    },
  };
}

/** Every thread idle through `chrt -a`, then `keepTid` back; the threads idle after it, `all` set. Never throws. */
function idleAllBut(keepTid: number): { tids: number[]; all: true } | { reason: string } {
  const script = 'chrt -a -i -p 0 "$1"; chrt -o -p 0 "$2"; exit 0';
  try {
    execFileSync('sh', ['-c', script, 'sh', String(process.pid), String(keepTid)], { stdio: 'ignore', timeout: 10_000 });
  } catch (err) {
    return { reason: `chrt failed: ${(err as Error).message}` };
  }
  if (threadPolicy(keepTid) !== SCHED_OTHER) {
    try {
      allThreadsBack();
    } catch {
      // as below: nothing more to try
    }
    return { reason: 'chrt could not set the calling thread back, so none stays idle' };
  }
  const tids = processThreads().filter((t) => t !== keepTid && threadPolicy(t) === SCHED_IDLE);
  return tids.length > 0 ? { tids, all: true } : { reason: 'chrt did not set them' };
}

/**
 * Thread `tid` of this process on `SCHED_IDLE` until `restore` sets it back to `SCHED_OTHER` (which needs
 * `CAP_SYS_NICE`: call it only where {@link canLeaveIdle}). One `chrt` each way. Never throws.
 */
export function yieldThread(tid: number): { restore(): boolean } | { reason: string } {
  if (threadPolicy(tid) !== SCHED_OTHER) return { reason: 'it is not at the normal policy' };
  if (setThreadsPolicy([tid], true).length === 0) return { reason: 'chrt did not set it' };
  let done = false;
  return {
    restore() {
      if (!done) {
        done = true;
        setThreadsPolicy([tid], false);
      }
      return threadPolicy(tid) === SCHED_OTHER;
    },
  };
}

/** Thread `tid`'s CPUs as Linux lists them (`Cpus_allowed_list`, e.g. `0-1`), or undefined when it is gone. */
export function threadCpuList(tid: number, pid = process.pid): string | undefined {
  try {
    return /^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * Every thread of this process on the CPUs `list` (a `taskset` list such as `0` or `0-2`) until `release`,
 * which gives each thread the CPUs it had: one `taskset -a` for the list most had, one `sh` for the others.
 * A thread started meanwhile inherits `list` and gets that commonest list back. Never throws.
 */
export function confineThreads(list: string): { release(): void } | { reason: string } {
  const before = new Map<number, string>();
  for (const t of processThreads()) {
    const l = threadCpuList(t);
    if (l !== undefined) before.set(t, l);
  }
  if (before.size === 0) return { reason: 'no /proc/self/task (not Linux)' };
  const all = (cpus: string) =>
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { stdio: 'ignore', timeout: 5000 });
  try {
    all(list);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { reason: e.code === 'ENOENT' ? 'no taskset (util-linux) on PATH' : `taskset failed: ${e.message}` };
  }
  let done = false;
  return {
    release() {
      if (done) return;
      done = true;
      const counts = new Map<string, number>();
      for (const l of before.values()) counts.set(l, (counts.get(l) ?? 0) + 1);
      const common = [...counts].sort((a, b) => b[1] - a[1])[0][0];
      const rest = [...before].filter(([, l]) => l !== common).flatMap(([t, l]) => [String(t), l]);
      try {
        all(common);
        const script = 'while [ $# -gt 1 ]; do taskset -p -c "$2" "$1" >/dev/null 2>&1; shift 2; done; exit 0';
        if (rest.length > 0) execFileSync('sh', ['-c', script, 'sh', ...rest], { stdio: 'ignore', timeout: 10_000 });
      } catch {
        // taskset vanished mid-run: the threads keep `list` until the process ends
      }
    },
  };
}
