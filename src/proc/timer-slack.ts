/**
 * A thread's timer slack: how late Linux may end its timed sleeps so that it can batch wake-ups. Every
 * normal thread gets 50 µs by default (`prctl(2)`, `PR_SET_TIMERSLACK`), so a futex wait of 0.1 ms (the
 * simulator's spinning clock naps in such slices) lasts about 0.17 ms. With 1 ns it lasts about 0.12 ms
 * (bench/README.md §26). Node has no `prctl`, but Linux lets a thread set its own slack through
 * `/proc/<pid>/timerslack_ns`; that file exists only for a process's main thread (`fs/proc/base.c`,
 * `timerslack_ns_write`: a task may write its own, another task's needs `CAP_SYS_NICE`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

/** The slack the main thread asks for, ns (the kernel's smallest; 0 would mean "back to the default"). */
export const TIGHT_SLACK_NS = 1;

/** The main thread's timer slack, ns; undefined where it cannot be read (not Linux, no /proc). */
export function mainThreadSlackNs(): number | undefined {
  try {
    return Number(readFileSync('/proc/self/timerslack_ns', 'utf8'));
  } catch {
    return undefined;
  }
}

let tightened: boolean | undefined;

/**
 * Sets the calling thread's timer slack to {@link TIGHT_SLACK_NS}, once per process; true when it is set. Only on
 * the main thread: from a worker thread the file would set the main thread's slack, not the caller's, so it is
 * left alone there (false). False too where the file is missing or refuses the write.
 */
export function tightenTimerSlack(): boolean {
  if (!isMainThread) return false;
  if (tightened === undefined) {
    try {
      writeFileSync('/proc/self/timerslack_ns', String(TIGHT_SLACK_NS));
      tightened = mainThreadSlackNs() === TIGHT_SLACK_NS;
    } catch {
      tightened = false;
    }
  }
  return tightened;
}
