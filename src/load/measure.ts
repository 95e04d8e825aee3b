/**
 * `measure`: one load point of a lesson, saved under `data/<lesson>/<name>/` and resumable.
 * A point whose folder already holds a complete run is read back instead of measured again,
 * so re-running a notebook after a crash or an interrupted kernel continues where it stopped;
 * `force: true` (or `LOADLAB_FORCE=1`, which `loadlab lessons` sets) measures it again.
 * An incomplete folder is moved aside by the run store and measured afresh.
 */
import { join } from 'node:path';
import { fromRoot } from '../paths';
import { loadRun } from '../run/loader';
import { isRunComplete } from '../run/store';
import type { ServerFlags } from '../sim/types';
import type { MetricsSample } from '../types';
import { formatProgress, type Progress } from './progress';
import { runLoad, type RunLoadOptions, type RunResult } from './runner';

/** The server a point is measured against (a `LessonTarget` fits). */
export interface MeasureTarget {
  baseUrl: string;
  model: string;
  simulated?: boolean;
  flags?: ServerFlags;
  mode?: string;
}

/** Options of `measure`: `runLoad`'s, with the folder given as lesson + name. */
export interface MeasureOptions extends Omit<RunLoadOptions, 'baseUrl' | 'model' | 'out' | 'lesson' | 'name' | 'replace'> {
  /** Lesson folder under `data/`, e.g. `'02-concurrency'`. */
  lesson: string;
  /** Point name, e.g. `'c8'`; the folder is `<root>/<lesson>/<name>`. */
  name: string;
  /** Measure again even if a complete run is saved; default `LOADLAB_FORCE === '1'`. */
  force?: boolean;
  /** Root of run folders; default `<repo>/data`. */
  root?: string;
}

/** What `measure` returns: the run, plus whether it was read back from disk. */
export interface MeasureResult extends RunResult {
  dir: string;
  /** True when a complete saved run was reused instead of measured. */
  resumed: boolean;
  /** `/metrics` samples of the run (empty if none were taken). */
  metrics: MetricsSample[];
}

/** A progress printer for notebooks: one stdout line at most every `everyMs` (default 3 s), plus the last. */
export function notebookProgress(label: string, everyMs = 3000): (p: Progress) => void {
  let last = -Infinity;
  return (p) => {
    const t = p.elapsedS * 1000;
    if (p.phase !== 'done' && t - last < everyMs) return;
    last = t;
    console.log(`[${label}] ${formatProgress(p)}`);
  };
}

/**
 * Measure one load point of a lesson against `target` (or reuse its complete saved run).
 * Samples the server's `/metrics` during the run by default (and `nvidia-smi` on a real GPU).
 */
export async function measure(target: MeasureTarget, opts: MeasureOptions): Promise<MeasureResult> {
  const { lesson, name, force, root, ...load } = opts;
  const dir = join(root ?? fromRoot('data'), lesson, name);
  const redo = force ?? process.env.LOADLAB_FORCE === '1';
  if (!redo && isRunComplete(dir)) {
    const saved = loadRun(dir);
    if (saved.summary) {
      console.log(`[${name}] reusing the complete run saved in ${dir} (measured ${saved.manifest.startedAt}); pass force: true or set LOADLAB_FORCE=1 to measure again.`);
      return {
        dir,
        manifest: saved.manifest,
        records: saved.records,
        summary: saved.summary,
        peakInFlight: Number((saved.manifest.client as Record<string, unknown> | undefined)?.peakInFlight ?? NaN),
        resumed: true,
        metrics: saved.metrics ?? [],
        ...(saved.gpu ? { gpu: saved.gpu } : {}),
      };
    }
  }
  const extraTarget = { ...(target.flags ? { flags: target.flags as Record<string, unknown> } : {}), ...(target.mode ? { mode: target.mode } : {}) };
  const run = await runLoad({
    sampleMetrics: true,
    sampleGpu: target.simulated === false,
    progress: notebookProgress(name),
    ...load,
    baseUrl: target.baseUrl,
    model: target.model,
    out: dir,
    replace: true,
    lesson,
    name,
    manifestExtra: {
      ...(load.manifestExtra ?? {}),
      target: { ...(load.manifestExtra?.target ?? {}), ...extraTarget } as never,
    },
  });
  return { ...run, dir, resumed: false, metrics: run.metrics ?? [] };
}
