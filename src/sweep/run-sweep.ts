/**
 * `runSweep`: measure a sweep's points one after another, each into its own run folder
 * `<dir>/<point>/`, writing `sweep.json` before and after every point. Resumable: a point whose folder
 * holds a complete run listed in the previous `sweep.json` with the same run flags, measured by the
 * server answering now, is reused (`reused: true`); an incomplete or interrupted one is measured again
 * (the run store moves its files aside). A complete run measured otherwise is refused unless
 * `replace`, so nothing measured is deleted silently. How a point is measured is the caller's
 * (`measurePoint`, e.g. `loadlab run` or `runLoad`), so every run flag means what it means there.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { isRunComplete } from '../run/folder';
import { type LoadedRun, loadRun } from '../run/loader';
import type { CurrentServer } from '../runner/saved-point';
import { nextSearchRate, type SearchPoint } from './bisect';
import { pointName, type SweepPlan } from './plan';
import { pointFromRun, reuseBlocker, type SweepPoint } from './point';
import {
  checkSweepDir,
  readSweepFile,
  type SweepFile,
  SweepFolderError,
  sweepFile,
  type SweepStatus,
  writeSweepFile,
} from './sweep-file';

/** What `measurePoint` is asked to do: run the point into `dir` (replacing a complete run there when `replace`). */
export interface PointJob {
  name: string;
  value: number;
  dir: string;
  replace: boolean;
}

/** Options of `runSweep`. */
export interface RunSweepOptions {
  /** The sweep folder; created if missing. */
  dir: string;
  plan: SweepPlan;
  /** The run flags every point shares (no API key), recorded in `sweep.json`. */
  runFlags: string[];
  /** A point's run flags as one string (no API key): equal keys = the same load, dataset and requests. */
  keyOf: (value: number) => string;
  /** The server answering now (for reuse). */
  current: CurrentServer;
  /** Measure every point again, replacing complete runs; default false. */
  replace?: boolean;
  /** Measure one point into `job.dir`; resolves once its run folder is written (any status), rejects if no run was made. */
  measurePoint: (job: PointJob) => Promise<void>;
  /** True once the user asked to stop (checked before each point). */
  stopped?: () => boolean;
  /** One progress line (no newline); default none. */
  log?: (line: string) => void;
}

function readRun(dir: string): LoadedRun | undefined {
  try {
    return fs.existsSync(dir) ? loadRun(dir) : undefined;
  } catch {
    return undefined;
  }
}

/** The run id of a loaded run, undefined when there is none or its manifest is damaged. */
function runIdOf(run: LoadedRun | undefined): string | undefined {
  return run && !run.damaged ? run.manifest.runId : undefined;
}

/** The next load value of the plan, or why the plan is done. */
function nextValue(plan: SweepPlan, points: readonly SweepPoint[]): { value?: number; searchEnd?: string } {
  if (plan.mode === 'list') return { value: plan.values[points.length] };
  const history: SearchPoint[] = points
    .filter((p) => p.status === 'complete')
    .map((p) => ({ value: p.value, meets: !!p.meetsSlo }));
  const step = nextSearchRate(plan.bounds, plan.steps, history);
  return 'next' in step ? { value: step.next } : { searchEnd: step.why };
}

/** Where a point stands before measuring: reusable (`saved`), to measure, or refused (a complete run measured otherwise). */
interface PointState {
  name: string;
  dir: string;
  key: string;
  saved?: LoadedRun;
  /** Why the saved folder cannot stand in (`''`: it can). */
  blocker: string;
}

function pointState(o: RunSweepOptions, keys: Record<string, string>, value: number): PointState {
  const name = pointName(o.plan.variable, value);
  const dir = path.join(o.dir, name);
  const key = o.keyOf(value);
  const saved = readRun(dir);
  const blocker = reuseBlocker(dir, keys[name], key, saved, o.current);
  if (!o.replace && blocker !== '' && isRunComplete(dir)) {
    throw new SweepFolderError(
      `${dir} holds a complete run that cannot stand in for this point: ${blocker}. Pass --replace to measure it again, or choose another --out`,
    );
  }
  return { name, dir, key, blocker, ...(saved ? { saved } : {}) };
}

/** Measure one point (its folder is listed as `pending` first), and read its run back. */
async function measure(
  o: RunSweepOptions,
  st: PointState,
  value: number,
  save: (extra: SweepPoint[]) => void,
): Promise<SweepPoint> {
  const { name, dir, key } = st;
  save([{ name, value, key, reused: false, status: 'pending' }]);
  const before = runIdOf(readRun(dir));
  await o.measurePoint({ name, value, dir, replace: isRunComplete(dir) });
  const run = readRun(dir);
  if (!run || runIdOf(run) === undefined || runIdOf(run) === before) {
    throw new Error(`point ${name}: no run was saved in ${dir} (see the run's message above)`);
  }
  return pointFromRun({ name, value, key, reused: false }, run, o.plan.slo, o.plan.attainment);
}

/**
 * Run (or resume) a sweep; resolves with the final `sweep.json` contents. Throws a SweepFolderError,
 * before any load and without writing, on a folder it must not touch; rethrows `measurePoint`'s error
 * after saving `sweep.json` with status `failed`.
 */
export async function runSweep(o: RunSweepOptions): Promise<SweepFile> {
  checkSweepDir(o.dir);
  const log = o.log ?? (() => {});
  const prev = readSweepFile(o.dir);
  if (prev.problem && !o.replace) {
    throw new SweepFolderError(
      `${prev.problem}: which run flags its points were measured with is unknown; move it aside, or pass --replace to measure every point again`,
    );
  }
  const keys = prev.file?.keys ?? {};
  if (o.plan.mode === 'list') for (const v of o.plan.values) pointState(o, keys, v); // refuse before any load
  fs.mkdirSync(o.dir, { recursive: true });
  const notes: string[] = prev.problem ? [`${prev.problem}; replaced (--replace)`] : [];
  const points: SweepPoint[] = [];
  let searchEnd: string | undefined;
  const save = (status: SweepStatus, extra: SweepPoint[] = []) => {
    const f = sweepFile(o.plan, o.runFlags, [...points, ...extra], status, { ...(searchEnd ? { searchEnd } : {}), notes, keys });
    writeSweepFile(o.dir, f);
    return f;
  };
  for (;;) {
    const next = nextValue(o.plan, points);
    if (next.value === undefined) {
      searchEnd = next.searchEnd;
      return save('complete');
    }
    if (o.stopped?.()) return save('interrupted');
    const st = pointState(o, keys, next.value);
    const slot = `${st.name} (${points.length + 1}${o.plan.mode === 'list' ? `/${o.plan.values.length}` : ''})`;
    if (!o.replace && st.blocker === '') {
      points.push(
        pointFromRun({ name: st.name, value: next.value, key: st.key, reused: true }, st.saved!, o.plan.slo, o.plan.attainment),
      );
      log(`point ${slot}: reusing the complete run in ${st.dir}`);
      save('running');
      continue;
    }
    const why = st.blocker && st.blocker !== 'no complete run saved' ? ` (${st.blocker})` : '';
    log(`point ${slot}: measuring${why}`);
    const point = await measure(o, st, next.value, (extra) => save('running', extra)).catch((err: unknown) => {
      notes.push(`point ${st.name}: ${(err as Error).message}`);
      save('failed');
      throw err;
    });
    points.push(point);
    if (point.status === 'interrupted') return save('interrupted');
    if (point.status !== 'complete') return save('failed');
    save('running');
  }
}
