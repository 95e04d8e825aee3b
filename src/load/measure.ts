/**
 * `measure`: one load point of a lesson, saved under `data/<lesson>/<name>/` and resumable.
 * A point whose folder already holds a complete run is read back instead of measured again,
 * so re-running a notebook after a crash or an interrupted kernel continues where it stopped;
 * `force: true` (or `LOADLAB_FORCE=1`, which `loadlab lessons` sets) measures it again.
 * A saved point measured with another load (shape, request count, warm-up) or other server
 * flags is measured again. An incomplete folder is moved aside by the run store and measured afresh.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromRoot } from '../paths';
import { loadRun } from '../run/loader';
import { isRunComplete } from '../run/store';
import type { RunManifest } from '../run/manifest';
import type { ServerFlags } from '../sim/types';
import { describeShape } from './shapes';
import { resolveRunOptions } from './validate';
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
  /** The server's recent log lines; saved as `server.log` in the run folder when given. */
  logTail?(n?: number): string;
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

function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'undefined';
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).filter((k) => o[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`).join(',')}}`;
}

/** Why a saved point is not this point (other load or other server flags), or '' when it is. */
function savedPointDiffers(saved: RunManifest, target: MeasureTarget, load: Omit<MeasureOptions, 'lesson' | 'name' | 'force' | 'root'>): string {
  const ro = resolveRunOptions({ ...load, baseUrl: target.baseUrl });
  const was = (saved.load?.options ?? {}) as Record<string, unknown>;
  const now = { label: describeShape(ro.shape), requests: ro.n, warmup: ro.warmup };
  const diffs: string[] = [];
  for (const [k, v] of Object.entries(now)) if (was[k] !== v) diffs.push(`${k} ${String(was[k])} (now ${String(v)})`);
  const wasFlags = stableJson(saved.target?.flags ?? {});
  const nowFlags = stableJson(target.flags ?? {});
  if (wasFlags !== nowFlags) diffs.push(`server flags ${wasFlags} (now ${nowFlags})`);
  return diffs.join(', ');
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
    const changed = savedPointDiffers(saved.manifest, target, load);
    if (changed) console.log(`[${name}] the run saved in ${dir} was measured with ${changed}; measuring again.`);
    if (saved.summary && !changed) {
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
  const log = target.logTail?.(400);
  if (log) writeFileSync(join(dir, 'server.log'), `${log}\n`);
  return { ...run, dir, resumed: false, metrics: run.metrics ?? [] };
}
