/**
 * One run clock across worker threads. `performance.now()` counts from each thread's own start, so a
 * worker cannot use the main thread's origin as it is. Every thread reads the same CLOCK_MONOTONIC
 * (`process.hrtime`; src/proc/mono-clock.ts), so the main thread hands its origin over on that clock
 * and each worker shifts its own `performance.now()` onto it: the stamps of every thread are on one
 * clock, the one the simulator's send log is compared on (./stamp-lag).
 */
import { monoOffsetMs } from '../proc/mono-clock';

/** The run's origin (`performance.now()` ms of this thread) on CLOCK_MONOTONIC, ms. */
export function originMonoMs(originPerfMs: number): number {
  return originPerfMs + monoOffsetMs();
}

/** A run clock in this thread (ms since the run's origin) from {@link originMonoMs} taken in the main thread. */
export function threadRunClock(originMono: number): () => number {
  const shift = monoOffsetMs() - originMono;
  return () => performance.now() + shift;
}
