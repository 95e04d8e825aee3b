/**
 * The yardsticks' servers and readers on separate cores, as LoadLab runs a simulator and its client
 * (src/proc/cpu-split.ts): the server process's main thread on the last CPU, this bench's thread (its
 * in-process readers, and every reader process it spawns after, which inherit its CPUs) on the others.
 * `LOADLAB_CPU_SPLIT=0` leaves both alone, for the arrangement of earlier runs.
 */
import { execFileSync } from 'node:child_process';
import { cpuSplitEnabled, formatCpuList, pinThisThread, thisThreadCpus } from '../src/proc/cpu-split';

/** The arrangement in force, for the bench's lines, and how to undo this thread's part. */
export interface BenchSplit {
  line: string;
  release(): void;
}

/** The last CPU this thread may use, when there are two or more and the split is on. */
function lastCpu(): number | undefined {
  const here = thisThreadCpus();
  return cpuSplitEnabled() && here && here.cpus.length >= 2 ? here.cpus[here.cpus.length - 1] : undefined;
}

/** Put another server process's main thread on the last CPU of the machine's (as `splitCores` does); false if not done. */
export function pinServer(pid: number, cpu = lastCpu()): boolean {
  if (cpu === undefined) return false;
  try {
    execFileSync('taskset', ['-p', '-c', String(cpu), String(pid)], { stdio: 'ignore', timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

/** Put the server with main thread `serverPid` on the last CPU (unless it pinned itself there) and this thread on the rest. */
export function splitCores(serverPid: number, serverPinnedItself = false): BenchSplit {
  const none = (why: string) => ({ line: `cores: not split (${why})`, release: () => {} });
  if (!cpuSplitEnabled()) return none('LOADLAB_CPU_SPLIT=0');
  const here = thisThreadCpus();
  if (!here || here.cpus.length < 2) return none(here ? 'one CPU' : 'not Linux');
  const last = here.cpus[here.cpus.length - 1];
  const rest = here.cpus.filter((c) => c !== last);
  if (!serverPinnedItself && !pinServer(serverPid, last)) return none('taskset failed or is missing');
  const pin = pinThisThread(rest);
  if ('reason' in pin) return none(pin.reason);
  return {
    line: `cores: server's main thread on CPU ${last}, readers on CPUs ${formatCpuList(pin.cpus)} (LOADLAB_CPU_SPLIT=0: not split)`,
    release: pin.release,
  };
}
