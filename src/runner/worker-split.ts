/**
 * How a run is shared among worker threads (`runLoad({ workers })`, `loadlab run --workers N`):
 * - closed loop of C: each worker keeps its share of the C slots busy (C split as evenly as possible:
 *   shares differ by at most one); the next request index comes from one counter shared by every
 *   worker (`Atomics.add` on a SharedArrayBuffer), so each index is sent once and the total in
 *   flight never exceeds C;
 * - burst / open / timeline: measured request i goes to worker i mod N, which sends it at the
 *   planned offset on its own loop; an open loop's `maxConcurrency` is split like C.
 * Refused with more than one worker: sessions (a conversation's turns depend on each other's
 * answers, one owner per conversation is not built) and `durationMs` (the deadline would have to be
 * agreed across threads; not built). Pure.
 */

import type { LoadShape } from '../schedule/shapes';

/** Most worker threads a run accepts. */
export const MAX_WORKERS = 64;

/** `total` split into `parts` integers as evenly as possible, larger shares first, e.g. (5, 2) → [3, 2]. */
export function splitEvenly(total: number, parts: number): number[] {
  const base = Math.floor(total / parts);
  const extra = total - base * parts;
  return Array.from({ length: parts }, (_, w) => base + (w < extra ? 1 : 0));
}

/** The measured indices of worker `w` of `workers` for a scheduled shape: i with i mod workers = w. */
export function roundRobin(n: number, workers: number, w: number): number[] {
  const out: number[] = [];
  for (let i = w; i < n; i += workers) out.push(i);
  return out;
}

/**
 * Check `workers` (and `thread`: one worker thread even for 1) against the run, throwing a TypeError
 * that names the fix. Returns the count (default 1 = one thread, the usual path).
 */
export function checkWorkers(
  workers: unknown,
  shape: LoadShape,
  durationMs: number | undefined,
  thread: unknown = false,
): number {
  if (thread !== undefined && typeof thread !== 'boolean') {
    throw new TypeError(`thread must be true or false, got ${String(thread)}; e.g. thread: true`);
  }
  if (workers === undefined) workers = 1;
  if (typeof workers !== 'number' || !Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS) {
    throw new TypeError(`workers must be an integer from 1 to ${MAX_WORKERS}, got ${String(workers)}; e.g. workers: 2`);
  }
  if (workers === 1 && thread !== true) return 1;
  const what = workers === 1 ? 'thread: true' : `workers: ${workers}`;
  const instead = workers === 1 ? 'leave thread unset' : 'use workers: 1';
  if (shape.kind === 'sessions') {
    throw new TypeError(
      `${what} does not apply to a sessions shape: a conversation's turns wait for each other's answers ` +
        `and are not run on worker threads; ${instead}`,
    );
  }
  if (durationMs !== undefined) {
    throw new TypeError(
      `${what} does not apply with durationMs: the stop rule is not shared across threads; ` +
        `give a request count instead, or ${instead}`,
    );
  }
  const slots = shape.kind === 'closed' ? shape.concurrency : shape.kind === 'open' ? shape.maxConcurrency : undefined;
  if (slots !== undefined && slots < workers) {
    throw new TypeError(
      `workers: ${workers} is more than the ${slots} requests allowed in flight: a worker would have no slot; ` +
        `use workers ≤ ${slots}`,
    );
  }
  return workers;
}
