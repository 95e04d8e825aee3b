/**
 * This thread's garbage-collection pauses as V8 reports them (`perf_hooks` `gc` entries, `performance.now()` ms):
 * how many, their sum and the longest, and the sum of those that began in a window. An entry reaches the observer a
 * loop turn or two after its pause, so a window is best judged a little later. Used by the client's stall blame
 * (src/runner/stall-blame.ts) and the simulator's late steps (src/sim/http/late-steps.ts).
 */
import { PerformanceObserver } from 'node:perf_hooks';

/** Pauses kept for {@link GcPauses.msBetween}: above `KEEP_MAX` the oldest go, down to `KEEP_MIN`. */
const KEEP_MAX = 256;
const KEEP_MIN = 64;

/** A running watch of this thread's GC pauses. */
export interface GcPauses {
  count: number;
  totalMs: number;
  maxMs: number;
  /** Ms of the reported pauses that began in `[fromMs, toMs)` (among the latest kept). */
  msBetween(fromMs: number, toMs: number): number;
  /** Stop watching; the figures stay. */
  stop(): void;
}

/** Start watching this thread's GC pauses. */
export function watchGcPauses(): GcPauses {
  const recent: { startMs: number; ms: number }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      watch.count++;
      watch.totalMs += e.duration;
      watch.maxMs = Math.max(watch.maxMs, e.duration);
      recent.push({ startMs: e.startTime, ms: e.duration });
    }
    if (recent.length > KEEP_MAX) recent.splice(0, recent.length - KEEP_MIN);
  });
  const watch: GcPauses = {
    count: 0,
    totalMs: 0,
    maxMs: 0,
    msBetween: (fromMs, toMs) => recent.filter((g) => g.startMs >= fromMs && g.startMs < toMs).reduce((s, g) => s + g.ms, 0),
    stop: () => observer.disconnect(),
  };
  observer.observe({ entryTypes: ['gc'] });
  return watch;
}
