/**
 * `measure`: one load point of a lesson, saved under `data/<lesson>/<name>/` and resumable.
 * A point whose folder already holds a complete run is read back instead of measured again,
 * so re-running a notebook after a crash or an interrupted kernel continues where it stopped;
 * `force: true` (or `LOADLAB_FORCE=1`, which `loadlab lessons` sets) measures it again.
 * A saved point measured with another load (shape, request count, warm-up), against another
 * server (kind, simulated or not, version, model) or another effective config (`max_model_len`,
 * cache config, requested flags) is measured again (`reuse.ts`): a point saved on the simulator is
 * never reused against a real GPU. An incomplete folder is moved aside by the run store and measured afresh.
 * Against an external server (`mode: 'external'`, the user started vLLM), the flags the server
 * reports are checked first: a difference throws with the `vllm serve` line to restart with,
 * before any load; flags it cannot show are named in the manifest (`target.unverifiedFlags`, notes).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromRoot } from '../paths';
import { loadRun } from '../run/loader';
import { lockHolder } from '../run/folder';
import { isRunComplete } from '../run/store';
import { assertFlagsMatch, unverifiedNote, type FlagCheck } from '../vllm/flag-check';
import { probeTarget, type TargetProbe } from '../observe/probe';
import type { ServerFlags } from '../vllm/flag-types';
import { describeServer, savedPointDiffers } from './reuse';
import { describeShape } from '../schedule/shapes';
import { resolveRunOptions } from '../runner/validate';
import type { MetricsSample } from '../types';
import { formatProgress, type Progress } from '../runner/progress';
import { runLoad, type RunLoadOptions, type RunResult } from '../runner/runner';
import { resolveApiKey } from '../client/url';

/** The server a point is measured against (a `LessonTarget` fits). */
export interface MeasureTarget {
  baseUrl: string;
  model: string;
  simulated?: boolean;
  flags?: ServerFlags;
  /** `sim`, `launched` or `external`; `external` (a server LoadLab did not start) has its flags checked first. */
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

/** Probe the server now; for an external server, throw unless it reports the requested flags. */
async function currentServer(target: MeasureTarget, apiKey?: string): Promise<{ probe: TargetProbe; check?: FlagCheck }> {
  const probe = await probeTarget(target.baseUrl, apiKey, target.model ? { model: target.model } : {});
  if (target.mode !== 'external' || !probe.reachable) return { probe };
  const seen = {
    ...(probe.cacheConfig ? { cacheConfig: probe.cacheConfig } : {}),
    ...(probe.maxModelLen !== undefined ? { maxModelLen: probe.maxModelLen } : {}),
    ...(probe.models ? { models: probe.models } : {}),
    simulated: probe.simulated,
  };
  return { probe, check: assertFlagsMatch(target.flags ?? {}, seen, target.model || probe.model || '') };
}

/** How long a re-run cell waits for this kernel's interrupted run of the same point to finish writing, ms. */
const OWN_RUN_WAIT_MS = 30_000;

/**
 * JupyterLab's "interrupt kernel" ends the cell at once, while the interrupted `runLoad` still aborts its
 * requests and writes its records and summary. A cell run again within that moment would find the folder
 * locked by this very process; wait (bounded) for that run to finish instead of failing or racing it.
 */
export async function waitForOwnRun(dir: string, name: string): Promise<void> {
  const lockFile = join(dir, '.lock');
  if (lockHolder(lockFile) !== process.pid) return;
  console.log(`[${name}] the interrupted run of this point is still saving; waiting for it to finish.`);
  const deadline = performance.now() + OWN_RUN_WAIT_MS;
  while (lockHolder(lockFile) === process.pid && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Measure one load point of a lesson against `target` (or reuse its complete saved run).
 * Samples the server's `/metrics` during the run by default (and `nvidia-smi` on a real GPU).
 * Throws before any load when an external server reports other flags than `target.flags`.
 */
export async function measure(target: MeasureTarget, opts: MeasureOptions): Promise<MeasureResult> {
  const { lesson, name, force, root, ...load } = opts;
  const dir = join(root ?? fromRoot('data'), lesson, name);
  const redo = force ?? process.env.LOADLAB_FORCE === '1';
  await waitForOwnRun(dir, name);
  const apiKey = resolveApiKey(load.apiKey);
  const { probe, check } = await currentServer(target, apiKey);
  if (!redo && isRunComplete(dir)) {
    const saved = loadRun(dir);
    const ro = resolveRunOptions({ ...load, baseUrl: target.baseUrl });
    const now = {
      probe,
      model: target.model || probe.model || '',
      ...(target.flags ? { flags: target.flags as Record<string, unknown> } : {}),
      ...(target.mode ? { mode: target.mode } : {}),
    };
    const changed = savedPointDiffers(saved.manifest, now, { label: describeShape(ro.shape), requests: ro.n, warmup: ro.warmup });
    if (changed) console.log(`[${name}] the run saved in ${dir} was measured with ${changed}; measuring again.`);
    if (saved.summary && !changed) {
      console.log(
        `[${name}] reusing the complete run saved in ${dir} (measured ${saved.manifest.startedAt} on a ${describeServer(saved.manifest.target)}); pass force: true or set LOADLAB_FORCE=1 to measure again.`,
      );
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
  const note = check ? unverifiedNote(check) : '';
  if (note) console.log(`[${name}] ${note}`);
  const extraTarget = {
    ...(target.flags ? { flags: target.flags as Record<string, unknown> } : {}),
    ...(target.mode ? { mode: target.mode } : {}),
    ...(check ? { verifiedFlags: check.verified, unverifiedFlags: check.unverified } : {}),
  };
  const run = await runLoad({
    sampleMetrics: true,
    sampleGpu: target.simulated === false,
    progress: notebookProgress(name),
    thread: ownThreadFits(load.shape, load.durationMs), // the kernel's GC never delays a stamp
    ...load,
    baseUrl: target.baseUrl,
    model: target.model,
    out: dir,
    replace: true,
    lesson,
    name,
    manifestExtra: {
      ...(load.manifestExtra ?? {}),
      ...(note ? { notes: [...(load.manifestExtra?.notes ?? []), note] } : {}),
      target: { ...(load.manifestExtra?.target ?? {}), ...extraTarget } as never,
    },
  });
  const log = target.logTail?.(400);
  if (log) writeFileSync(join(dir, 'server.log'), `${log}\n`);
  return { ...run, dir, resumed: false, metrics: run.metrics ?? [] };
}

/** Whether a lesson's load can run on its own worker thread (`thread: true`): not sessions, not a duration. */
function ownThreadFits(shape: MeasureOptions['shape'], durationMs: number | undefined): boolean {
  return shape?.kind !== 'sessions' && durationMs === undefined;
}
