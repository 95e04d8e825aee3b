/**
 * Scheduling priority for the measurer's time-critical threads. On two shared cores, the simulator's
 * step deadlines and the client's stamps wait for a core whenever another thread (the notebook
 * kernel, say) holds it; a lower nice value makes Linux's scheduler hand them the core first.
 * Lowering nice below 0 needs root (as on AutoDL) or CAP_SYS_NICE; elsewhere it is skipped and said.
 * `os.setPriority(0, …)` applies to the calling thread on Linux, so each thread sets its own.
 */
import { getPriority, setPriority } from 'node:os';

/** The nice value LoadLab asks for (−20 highest … 19 lowest); `LOADLAB_NICE` overrides it (0 = leave alone). */
export const DEFAULT_NICE = -5;

/** `LOADLAB_NICE`: an integer from −20 to 19, or unset (the default). Throws naming the fix. */
export function niceFromEnv(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_NICE;
  const n = Number(value);
  if (!Number.isInteger(n) || n < -20 || n > 19) {
    throw new Error(
      `LOADLAB_NICE='${value}' is not a nice value; use an integer from -20 to 19 (0 = leave the priority alone), or unset it`,
    );
  }
  return n;
}

/** Set the calling thread's nice value; returns what happened, in words, for a log line. */
export function raiseThreadPriority(nice: number = niceFromEnv(process.env.LOADLAB_NICE)): string {
  if (nice === 0) return 'scheduling priority left alone (LOADLAB_NICE=0)';
  try {
    setPriority(0, nice);
    return `scheduling priority raised (nice ${getPriority(0)})`;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    return `scheduling priority not raised (${code}: lowering nice needs root or CAP_SYS_NICE); timings may suffer more from other programs`;
  }
}
