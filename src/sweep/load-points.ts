/**
 * Measuring a sweep's points with `runLoad` from code (a notebook, a script): the same run options at
 * every point, the load shape from the point's value. `loadlab sweep` measures its points through
 * `loadlab run` instead, so that every run flag means what it means there.
 */

import { createHash } from 'node:crypto';
import { runLoad, type RunLoadOptions } from '../runner/runner';
import { stableJson } from '../runner/saved-point';
import { describeShape, type LoadShape } from '../schedule/shapes';
import type { PointJob } from './run-sweep';

/** What `runLoadPoints` gives `runSweep`: how to measure a point, and its key for resuming. */
export interface LoadPoints {
  measurePoint: (job: PointJob) => Promise<void>;
  keyOf: (value: number) => string;
}

/** The workload's identity: a hash of the request list, or `'function'` (a generator cannot be compared: its caller must keep it fixed). */
function workloadId(w: RunLoadOptions['workload']): string {
  if (w === undefined) return 'none';
  if (typeof w === 'function') return 'function';
  return createHash('sha256').update(stableJson(w)).digest('hex').slice(0, 16);
}

/**
 * Measure each point with `runLoad({...base, shape: shapeOf(value), out: job.dir})`; the key of a
 * point is its shape, request count, warm-up and workload. `base.signal` interrupts the current point.
 * @param base run options shared by every point (no `shape`, `out` or `replace`).
 * @param shapeOf the load shape of a point, e.g. `(c) => closedLoop(c)` or `(r) => openLoop(r, { seed: 0 })`.
 */
export function runLoadPoints(
  base: Omit<RunLoadOptions, 'shape' | 'out' | 'replace'>,
  shapeOf: (value: number) => LoadShape,
): LoadPoints {
  return {
    measurePoint: async (job) => {
      await runLoad({ ...base, shape: shapeOf(job.value), out: job.dir, replace: job.replace, name: base.name ?? job.name });
    },
    keyOf: (value) =>
      stableJson({
        shape: describeShape(shapeOf(value)),
        requests: base.requests,
        warmup: base.warmup ?? 0,
        workload: workloadId(base.workload),
        timeoutMs: base.timeoutMs,
        idleTimeoutMs: base.idleTimeoutMs,
        stamp: base.stamp ?? 'turn', // a point stamped another way is measured again
      }),
  };
}
