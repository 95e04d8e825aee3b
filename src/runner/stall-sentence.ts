/**
 * How the client's stall blame (src/runner/stall-blame.ts) is worded in a run's health verdict: one sentence naming
 * the cause of a late loop, with the split of its lateness and what to do about it, and the advice on CPU steal
 * that the simulator's verdict (src/runner/sim-lateness.ts) words the same way.
 */
import { type ClientStall, STEAL_NAMED_PERCENT, WOKEN_LATE_WHY } from '../client-stall';
import { LATE_TICK_MS } from './stall-blame';

const f1 = (x: number) => x.toFixed(1);

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

/** More workers, unless the thread had one core only (src/proc/cpu-split.ts gives a local simulator's engine one). */
function ownWorkAdvice(threadCpus: number | undefined, cores: number): string {
  if (threadCpus !== 1) return 'Run fewer streams per thread (more workers).';
  return `This thread could run on one core only${cores > 1 ? ` of this machine's ${cores}` : ''}, so more workers would share it: run fewer streams, or use a machine with more cores.`;
}

/**
 * The late ms by cause, e.g. "late ms: 10.0 own work, 95.0 GC, 3.0 off the CPU (1.0 in the run queue, 1.5
 * asleep past the tick's time, 0.5 neither running nor queued: a blocking call or the host's steal)". Runs saved
 * before a part was read leave it out.
 */
function splitWords(late: ClientStall['lateMs']): string {
  const { ownCpu, gc, otherProcesses, inRunQueue: queued, wokenLate: woken } = late;
  let waiting = '';
  if (queued !== undefined && otherProcesses > 0) {
    const rest = otherProcesses - queued - (woken ?? 0);
    waiting =
      woken === undefined
        ? ` (${f1(queued)} in the run queue, ${f1(rest)} neither running nor queued: a blocking call, a late timer or the host's steal)`
        : ` (${f1(queued)} in the run queue, ${f1(woken)} asleep past the tick's time, ${f1(rest)} neither running nor queued: a blocking call or the host's steal)`;
  } else if (woken !== undefined && otherProcesses > 0) {
    waiting = ` (${f1(woken)} asleep past the tick's time)`;
  }
  return `late ms: ${f1(ownCpu)} own work, ${f1(gc)} GC, ${f1(otherProcesses)} off the CPU${waiting}`;
}

/**
 * One sentence naming the cause of a late loop, with the split of its lateness and the numbers behind
 * it, e.g. "Cause: garbage collection (41 GC pauses, 130.2 ms in all, the longest 12.5 ms; late ms:
 * 10.0 own work, 95.0 GC, 0.0 off the CPU)." Pure.
 * @param cpuPercent this process's CPU over the run, % of one core; `cores` of the machine.
 */
export function stallSentence(s: ClientStall, cpuPercent: number, cores: number): string {
  const gc = `${s.gcCount} GC pauses, ${f1(s.gcPauseTotalMs)} ms in all, the longest ${f1(s.gcPauseMaxMs)} ms`;
  const steal = s.stealPercent !== undefined ? `, CPU steal ${f1(s.stealPercent)} %` : '';
  const others = `${f1(s.othersLoad1m)} of the load average on ${cores} cores was not this process${steal}`;
  const split = splitWords(s.lateMs);
  switch (s.cause) {
    case 'gc':
      return `Cause: garbage collection (${gc}; ${split}). Run fewer streams per process, or shorter runs.`;
    case 'own-cpu':
      return s.cpuOf === 'thread'
        ? `Cause: this thread's own work (${split}; the thread used ${Math.round(s.threadCpuPercent ?? 0)} % of a core over the run). ` +
            ownWorkAdvice(s.threadCpus, cores)
        : `Cause: this process's own work (${split}; ${Math.round(cpuPercent)} % of a core over the run). ` +
            'Run fewer streams per process.';
    case 'woken-late':
      return (
        `Cause: the loop was still asleep past its time (${split}; ${others}). ${WOKEN_LATE_WHY}: that is this machine, ` +
        `not this process's work or another program. Rerun, or read the ITL/TPOT tails as upper bounds.${stealAdvice(s.stealPercent)}`
      );
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
