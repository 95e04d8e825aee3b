/**
 * Sending N requests the way a load shape says. The caller's `fire(i, intendedStartMs)` sends
 * measured request i and resolves when it is recorded; this module only decides WHEN.
 *
 * - closed: a pool of `concurrency`; request i is intended to go the moment a slot frees, and goes
 *   within the loop turn's budget for such work (./turn-budget): when a wave ends at once, a few
 *   sends per turn, the rest in the next turns (the wait shows in `queueMs`).
 * - burst / open / timeline: request i is intended at `start + offset[i]`, paced on the
 *   absolute clock (`sleepUntil`), in time order; an open loop's `maxConcurrency` makes late
 *   arrivals wait for a slot (their wait shows in the record's `queueMs`).
 * - abort: nothing new is sent; requests waiting for a slot are dropped (never sent).
 * - deadline (`deadlineMs`): nothing is issued at or after it (closed: a slot freeing then sends
 *   nothing; scheduled: arrivals due then are never sent); requests issued before it are still
 *   sent, even if they wait for a slot (their wait shows in `queueMs`).
 */

import { arrivalOffsets } from './arrivals';
import { sleepUntil } from './pacer';
import { createPool, type Pool, settleTasks } from './pool';
import type { LoadShape } from './shapes';
import { turnBudget } from './turn-budget';

/** Options of `dispatchLoad`. */
export interface DispatchOptions {
  /** The run's clock, ms. */
  now: () => number;
  /** Stop sending when aborted. */
  signal: AbortSignal;
  /** Run-clock ms at which issuing stops (a duration stop rule); default none. */
  deadlineMs?: number;
}

/** What the dispatcher saw. */
export interface DispatchReport {
  /** Scheduled shapes: how late each send left versus its intended time, ms (empty for closed loops). */
  latenessMs: number[];
  /** Requests handed to `fire` (dropped ones excluded). */
  dispatched: number;
}

/**
 * Send measured requests 0..n−1 through `fire` under `shape`; resolves when every sent one is
 * done. Rejects only if `fire` rejects while not aborted (a bug, not a failed request).
 */
export async function dispatchLoad(
  shape: LoadShape,
  n: number,
  fire: (i: number, intendedStartMs: number) => Promise<void>,
  opts: DispatchOptions,
): Promise<DispatchReport> {
  const { now, signal, deadlineMs = Infinity } = opts;
  if (shape.kind === 'sessions') throw new TypeError('a sessions shape is sent by runSessions (schedule/session-driver.ts)');
  const tasks: Array<Promise<void>> = [];
  const latenessMs: number[] = [];
  let dispatched = 0;
  let gate: Pool | undefined;
  const offsets = arrivalOffsets(shape, n);
  if (offsets === null) {
    gate = createPool((shape as { concurrency: number }).concurrency);
    // Sends of a wave that ends at once go a few per loop turn, so the loop reads its sockets between them.
    const work = turnBudget();
    for (let i = 0; i < n; i++) {
      tasks.push(
        gate.run(() => {
          const t = now(); // intended when the slot freed
          if (signal.aborted || t >= deadlineMs) return Promise.resolve();
          return work.later(() => {
            if (signal.aborted) return undefined;
            dispatched++;
            return fire(i, t);
          });
        }),
      );
    }
  } else {
    if (shape.kind === 'open' && shape.maxConcurrency !== undefined) gate = createPool(shape.maxConcurrency);
    const order = offsets.map((_, i) => i).sort((a, b) => offsets[a] - offsets[b] || a - b);
    const start = now();
    for (const i of order) {
      const due = start + offsets[i];
      if (due >= deadlineMs) break;
      latenessMs.push(due > now() ? await sleepUntil(due, { now, signal }) : now() - due);
      if (signal.aborted) break;
      const run = () => {
        if (signal.aborted) return Promise.resolve();
        dispatched++;
        return fire(i, due);
      };
      tasks.push(gate ? gate.run(run) : run());
    }
  }
  await settleTasks(tasks, signal, gate);
  return { latenessMs, dispatched };
}
