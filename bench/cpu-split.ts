/**
 * The yardsticks' servers and readers on separate cores, as LoadLab runs a simulator and its client
 * (src/proc/cpu-split.ts): a server process's main thread on the last CPU, this bench's thread (its
 * in-process readers, and every reader process it spawns while split, which inherit its CPUs) on the
 * others, with this process's other threads on `SCHED_IDLE` meanwhile, as a LoadLab run sets them. The
 * CPUs are read once, when this module loads, so a server started while this thread is pinned still goes
 * to the last one. `LOADLAB_CPU_SPLIT=0` leaves both alone, for the arrangement of earlier runs.
 */
import type { SimHandle } from '../src/sim/start';
import { cpuSplitEnabled, formatCpuList, pinWithIdleHelpers, setThreadCpus, thisThreadCpus } from '../src/proc/cpu-split';

/** The arrangement in force, for the bench's lines, and how to undo this thread's part. */
export interface BenchSplit {
  line: string;
  release(): void;
}

/** The last CPU and the rest, as this thread had them when the bench started; undefined: no split, with why. */
const layout: { last: number; rest: number[] } | { why: string } = (() => {
  if (!cpuSplitEnabled()) return { why: 'LOADLAB_CPU_SPLIT=0' };
  const here = thisThreadCpus();
  if (!here || here.cpus.length < 2) return { why: here ? 'one CPU' : 'not Linux' };
  const last = here.cpus[here.cpus.length - 1];
  return { last, rest: here.cpus.filter((c) => c !== last) };
})();

/** Put another process's main thread on the last CPU; false if not done. */
export function pinServer(pid: number): boolean {
  if ('why' in layout) return false;
  try {
    setThreadCpus(pid, [layout.last]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Put the server with main thread `serverPid` on the last CPU (unless it pinned itself there, as the
 * simulator does: then `serverCpu` is the CPU it reported) and this thread on the rest, until `release`.
 */
export function splitCores(serverPid: number, serverCpu?: number): BenchSplit {
  const none = (why: string) => ({ line: `cores: not split (${why})`, release: () => {} });
  if ('why' in layout) return none(layout.why);
  if (serverCpu !== undefined && serverCpu !== layout.last) return none(`the server is on CPU ${serverCpu}`);
  if (serverCpu === undefined && !pinServer(serverPid)) return none('taskset failed or is missing');
  const pin = pinWithIdleHelpers(layout.rest);
  if ('reason' in pin) return none(pin.reason);
  // As a LoadLab run does (src/runner/load-cpus.ts): this process's other threads (V8's compiler and GC helpers)
  // yield, so a cold reader's compiles do not take the server's CPU from it (bench/README.md §21).
  return {
    line: `cores: server's main thread on CPU ${layout.last}, readers on CPUs ${formatCpuList(pin.cpus)}; ${pin.helpers} (LOADLAB_CPU_SPLIT=0 turns the split off)`,
    release: pin.release,
  };
}

/** The CPU a simulator pinned its engine thread to (`GET /version` → `loadlab_engine_cpu`), if it did. */
export async function simEngineCpu(sim: Pick<SimHandle, 'baseUrl'>): Promise<number | undefined> {
  const v = (await (await fetch(`${sim.baseUrl}/version`)).json()) as { loadlab_engine_cpu?: number };
  return v.loadlab_engine_cpu;
}
