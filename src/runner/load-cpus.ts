/**
 * Where a run's load threads run, against a simulator on this machine: off the CPU of its engine
 * thread (src/proc/cpu-split.ts says why). Worker threads pin themselves (./worker-main); a run
 * without them pins the calling thread for the load and gives it its CPUs back after.
 * The manifest's `client.cpuSplit` records what was done, or why nothing was.
 */
import { formatCpuList, loadThreadCpus, pinThisThread } from '../proc/cpu-split';
import type { ResolvedTarget } from './target';

/** What a run does with its load threads' CPUs. */
export interface LoadCpuPlan {
  /** The CPUs each load thread keeps to; undefined: any. */
  cpus?: number[];
  /** Pin the calling thread to `cpus` (when any) for the load; returns the release. */
  pinHere(): () => void;
  /** For `manifest.client.cpuSplit`: the simulator's engine CPU, the load threads' CPUs, and what was done. */
  record(): Record<string, unknown>;
}

/** The plan for a run against `target`. Never throws on a machine where pinning is not possible. */
export function planLoadCpus(target: Pick<ResolvedTarget, 'rootUrl' | 'probe'>): LoadCpuPlan {
  const simCpu = target.probe.simulated ? target.probe.simEngineCpu : undefined;
  if (!target.probe.simulated) return { pinHere: () => () => {}, record: () => ({ note: 'not pinned (not the simulator)' }) };
  const plan = loadThreadCpus(target.rootUrl, simCpu);
  let note = plan.note;
  const base = simCpu !== undefined ? { simEngineCpu: simCpu } : {};
  return {
    ...(plan.cpus ? { cpus: plan.cpus } : {}),
    pinHere() {
      if (!plan.cpus) return () => {};
      const pin = pinThisThread(plan.cpus);
      if ('reason' in pin) {
        note = `not pinned (${pin.reason})`;
        return () => {};
      }
      note = `load thread on CPUs ${formatCpuList(pin.cpus)}, off the simulator's engine CPU ${simCpu}`;
      return pin.release;
    },
    record: () => ({ ...base, ...(plan.cpus ? { loadCpus: formatCpuList(plan.cpus) } : {}), note }),
  };
}
