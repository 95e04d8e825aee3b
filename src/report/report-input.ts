/**
 * What a report is made of: one run folder, or a sweep folder (a folder whose direct sub-folders
 * are run folders, e.g. `DIR/c=4/`, as `loadlab sweep` writes them beside an optional
 * `sweep.json`, whose format is not read here). Sweep points are ordered by each run's own
 * manifest load options (`concurrency` of a closed loop, `rate` of an open loop), never by
 * folder name; moved-aside `<dir>.incomplete-<stamp>` folders are not points. A run without `summary.json` (interrupted, killed) is summarised from its records,
 * and the report says so: nothing measured is left out.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listRuns, loadRun, type LoadedRun } from '../run/loader';
import type { RunManifest } from '../run/manifest';
import { summarizeRun } from '../stats/summary';
import type { RunSummary } from '../types';

/** A run read for a report: a `LoadedRun` whose summary is always there. */
export interface ReportRun extends LoadedRun {
  summary: RunSummary;
  /** Short name: the manifest's `name`, else the folder's base name. */
  label: string;
  /** Notes for the reader (summary recomputed from records, manifest damaged …), English. */
  notes: string[];
}

/** What a sweep's points vary: the closed loop's concurrency, the open loop's rate (req/s), or unknown. */
export type LoadAxis = 'concurrency' | 'rate' | 'order';

/** One point of a sweep: its run and its load value on the sweep's axis. */
export interface SweepPoint {
  run: ReportRun;
  /** The load value (concurrency, or rate in req/s); the 1-based position when the axis is `'order'`. */
  x: number;
  /** e.g. `c=4`, `rate=2/s`, or the run's label. */
  label: string;
}

/** A report's input: one run, or the points of a sweep. */
export type ReportInput =
  | { kind: 'run'; dir: string; run: ReportRun }
  | { kind: 'sweep'; dir: string; axis: LoadAxis; points: SweepPoint[]; hasSweepJson: boolean };

/** What a run folder holds, for error messages. */
export const RUN_FOLDER_HINT =
  'a run folder holds manifest.json and requests.jsonl (plus summary.json once finished), as written by ' +
  '`loadlab run --out DIR` or runLoad({ out }); a sweep folder holds run folders (e.g. c=1/, c=4/), as written by `loadlab sweep`';

function isRunDir(dir: string): boolean {
  return fs.existsSync(path.join(dir, 'manifest.json')) || fs.existsSync(path.join(dir, 'requests.jsonl'));
}

/** The direct sub-folders of `dir` that are run folders (not dot-folders, not moved-aside `.incomplete-` ones), by name. */
function runSubfolders(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !e.name.includes('.incomplete-'))
    .filter((e) => isRunDir(path.join(dir, e.name)))
    .map((e) => path.join(dir, e.name))
    .sort();
}

/** The manifest of a run, or undefined when it is damaged (reading it would throw). */
export function manifestOf(run: LoadedRun): RunManifest | undefined {
  return run.damaged === undefined ? run.manifest : undefined;
}

/**
 * Read one run folder for a report or a comparison.
 * @throws when `dir` is missing or is not a run folder (the message says what a run folder holds).
 */
export function readReportRun(dir: string): ReportRun {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new Error(`${dir} is not a folder: give a run folder (${RUN_FOLDER_HINT})`);
  }
  if (!isRunDir(dir)) {
    const subs = runSubfolders(dir).slice(0, 3);
    const hint = subs.length ? `; it holds run folders (a sweep?): give those, e.g. ${subs.join(' ')}` : '';
    throw new Error(`${dir} is not a run folder${hint}: ${RUN_FOLDER_HINT}`);
  }
  const run = loadRun(dir);
  const notes = [...run.problems];
  const m = manifestOf(run);
  let summary = run.summary;
  if (!summary) {
    summary = summarizeRun(run.records);
    notes.push(
      `no summary.json (status ${m?.status ?? 'unknown'}): summarised here from the ${run.records.length} records on disk`,
    );
  }
  const label = m?.name ?? path.basename(path.resolve(dir));
  return { ...run, ...(m ? { manifest: m } : {}), summary, label, notes } as ReportRun;
}

/** A run's load value on `axis`, or undefined when its manifest does not say. */
function loadValue(run: ReportRun, axis: 'concurrency' | 'rate'): number | undefined {
  const m = manifestOf(run);
  if (!m) return undefined;
  const o = m.load.options;
  const v =
    axis === 'concurrency'
      ? m.load.shape === 'closed'
        ? o.concurrency
        : undefined
      : m.load.shape === 'open'
        ? o.rate
        : undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/**
 * Sweep points ordered by their load: by concurrency when every run is a closed loop, by rate
 * when every run is an open loop, else in folder-name order (axis `'order'`).
 */
export function orderPoints(runs: ReportRun[]): { axis: LoadAxis; points: SweepPoint[] } {
  for (const axis of ['concurrency', 'rate'] as const) {
    const xs = runs.map((r) => loadValue(r, axis));
    if (xs.every((x) => x !== undefined)) {
      const points = runs.map((run, i) => ({
        run,
        x: xs[i] as number,
        label: axis === 'concurrency' ? `c=${xs[i]}` : `rate=${xs[i]}/s`,
      }));
      return { axis, points: points.sort((a, b) => a.x - b.x) };
    }
  }
  const sorted = [...runs].sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
  return { axis: 'order', points: sorted.map((run, i) => ({ run, x: i + 1, label: run.label })) };
}

/**
 * Read `dir` as a run folder, or as a sweep folder when it is no run itself but holds run folders.
 * @throws when it is neither (the message says what each holds).
 */
export function readReportInput(dir: string): ReportInput {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new Error(`${dir} is not a folder: give a run or sweep folder (${RUN_FOLDER_HINT})`);
  }
  if (isRunDir(dir)) return { kind: 'run', dir, run: readReportRun(dir) };
  const subs = runSubfolders(dir);
  if (subs.length === 0) {
    const deeper = [...new Set(listRuns(dir).map((r) => path.dirname(r.dir)))].slice(0, 3);
    const hint = deeper.length ? `; runs lie deeper, e.g. in ${deeper.join(', ')}` : '';
    throw new Error(`${dir} holds no run${hint}: ${RUN_FOLDER_HINT}`);
  }
  const { axis, points } = orderPoints(subs.map(readReportRun));
  return { kind: 'sweep', dir, axis, points, hasSweepJson: fs.existsSync(path.join(dir, 'sweep.json')) };
}
