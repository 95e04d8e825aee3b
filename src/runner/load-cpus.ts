/**
 * Where a run's load threads run, against a simulator on this machine: off the CPU of its engine
 * thread (src/proc/cpu-split.ts says why). For the run, the calling thread keeps to the other CPUs
 * (in the lessons, the kernel's main thread, which writes the records) and so does each worker thread
 * (./worker-main); after it, the calling thread gets its CPUs back. Threads started during the run
 * keep the pin. Meanwhile the process's other threads (V8's helpers, libuv's pool) are on `SCHED_IDLE`, when it
 * can set them back after (../proc/idle-threads). The manifest's `client.cpuSplit` records what was done, or why
 * nothing was.
 */
import { cpuSplitEnabled, formatCpuList, loadThreadCpus, pinWithIdleHelpers, thisThreadCpus } from '../proc/cpu-split';
import { yieldThread } from '../proc/idle-threads';
import type { ResolvedTarget } from './target';

/** What a run does with its load threads' CPUs. */
export interface LoadCpuPlan {
  /** The CPUs each load thread keeps to; undefined: any. */
  cpus?: number[];
  /** Pin the calling thread to `cpus` (when any) for the load; returns the release. */
  pinHere(): () => void;
  /**
   * While worker threads send the load: this thread, pinned with them, only keeps records, so it yields to them
   * (`SCHED_IDLE`) until the returned function sets it back. Only when `pinHere` put the other threads on
   * `SCHED_IDLE`, so this process can set a thread back; otherwise it does nothing.
   */
  yieldHere(): () => void;
  /** For `manifest.client.cpuSplit`: the simulator's engine CPU, the load threads' CPUs, and what was done. */
  record(): Record<string, unknown>;
}

/**
 * This thread's pin, shared by the runs in flight on it (module state is per thread), so two
 * overlapping runs never leave the thread pinned: the first pins, the last one to end releases.
 */
const held = { runs: 0, release: () => {}, cpus: [] as number[], helpers: '', idled: false };

/** Pin this thread for one more run (or join the pin in place); the release counts it out. */
function holdPin(cpus: number[]): { cpus: number[]; helpers: string; idled: boolean; release: () => void } | { reason: string } {
  if (held.runs === 0) {
    const pin = pinWithIdleHelpers(cpus);
    if ('reason' in pin) return pin;
    held.helpers = pin.helpers;
    held.idled = pin.idled;
    held.release = pin.release;
    held.cpus = pin.cpus;
  }
  held.runs++;
  let done = false;
  const release = () => {
    if (done) return;
    done = true;
    if (--held.runs === 0) held.release();
  };
  return { cpus: held.cpus, helpers: held.helpers, idled: held.idled, release };
}

/** The plan for a run against `target`. Throws on a bad `LOADLAB_CPU_SPLIT`, never where pinning is not possible. */
export function planLoadCpus(target: Pick<ResolvedTarget, 'rootUrl' | 'probe'>): LoadCpuPlan {
  const { simulated, simEngineCpu, simBootId } = target.probe;
  cpuSplitEnabled(); // a bad LOADLAB_CPU_SPLIT throws here, whatever the target
  const plan: { cpus?: number[]; note: string } = simulated
    ? loadThreadCpus(target.rootUrl, simEngineCpu, simBootId)
    : { note: 'not pinned (not the simulator)' };
  let note = plan.note;
  let pinned: string | undefined;
  let idled = false;
  const base = simulated && simEngineCpu !== undefined ? { simEngineCpu } : {};
  return {
    ...(plan.cpus ? { cpus: plan.cpus } : {}),
    pinHere() {
      if (!plan.cpus) return () => {};
      const pin = holdPin(plan.cpus);
      if ('reason' in pin) {
        note = `not pinned (${pin.reason})`;
        return () => {};
      }
      pinned = formatCpuList(pin.cpus);
      idled = pin.idled;
      note = `load threads on CPUs ${pinned}, off the simulator's engine CPU ${simEngineCpu}; ${pin.helpers}`;
      return pin.release;
    },
    yieldHere() {
      const tid = idled ? thisThreadCpus()?.tid : undefined;
      const y = tid === undefined ? undefined : yieldThread(tid);
      if (!y || 'reason' in y) return () => {};
      note += '; this thread yielded to the worker threads (SCHED_IDLE) while they sent the load';
      return () => {
        if (!y.restore()) note += ', and could not be set back';
      };
    },
    record: () => ({ ...base, ...(pinned ? { loadCpus: pinned } : {}), note }),
  };
}
