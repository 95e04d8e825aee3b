/**
 * Run-folder housekeeping: the `.lock` that keeps two writers out of one folder, the test for a
 * complete run, and getting a folder ready for a fresh run (refuse, replace or move aside). Only a
 * run's own files are ever deleted or moved; a non-empty folder that holds no run is refused.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { checkManifest } from './manifest';

/** A lock younger than this with an unreadable pid is assumed to be mid-creation, not stale (ms). */
const FRESH_LOCK_MS = 10_000;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by someone else
  }
}

/** Pid written in a lock file, or undefined when unreadable. */
export function lockHolder(lockFile: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(lockFile, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a live process holds `lockFile` (false when the file is missing or its pid is dead). */
export function lockIsLive(lockFile: string): boolean {
  if (!fs.existsSync(lockFile)) return false;
  const pid = lockHolder(lockFile);
  if (pid !== undefined) return pidAlive(pid);
  try {
    return Date.now() - fs.statSync(lockFile).mtimeMs < FRESH_LOCK_MS;
  } catch {
    return false; // vanished meanwhile
  }
}

/**
 * Take `lockFile` exclusively (created with flag `'wx'`, holding this process's pid). A lock whose
 * pid is no longer running is stale and is taken over (best effort if two takers race).
 * @throws when a live process (possibly this one) holds the lock.
 */
export function acquireLock(lockFile: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockFile, `${process.pid}\n`, { flag: 'wx' });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (lockIsLive(lockFile)) {
      const pid = lockHolder(lockFile);
      const who =
        pid === process.pid
          ? 'this process (a run that was never finished: call writer.abort() or abortOpenRuns())'
          : `process ${pid ?? '(starting)'}`;
      throw new Error(
        `run folder ${path.dirname(lockFile)} is in use by ${who}; wait for it to finish or use another name ` +
          `(if no LoadLab run is active, the pid was reused: delete ${lockFile})`,
      );
    }
    fs.rmSync(lockFile, { force: true });
  }
  throw new Error(`could not take the lock ${lockFile}: another writer took it over first; use another name`);
}

/** Remove a lock file if present. */
export function releaseLock(lockFile: string): void {
  fs.rmSync(lockFile, { force: true });
}

/**
 * Whether `dir` holds a complete run: `summary.json` exists and `manifest.json` says
 * `status: 'complete'`. Sweeps skip such folders and re-create the others.
 */
export function isRunComplete(dir: string): boolean {
  if (!fs.existsSync(path.join(dir, 'summary.json'))) return false;
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')).status === 'complete';
  } catch {
    return false;
  }
}

/**
 * The files a run itself writes (`server.log`: the server's log tail that `measure` saves). Only
 * these are ever deleted (by a replace) or moved (out of an incomplete run); any other file in a
 * run folder, e.g. the user's notes or saved figures, stays where it is.
 */
export const RUN_FILES: readonly string[] = [
  'manifest.json',
  'requests.jsonl',
  'summary.json',
  'metrics.jsonl',
  'gpu.jsonl',
  'server.log',
  'vllm-result.json', // loadlab run --result-json vllm
  'report.html', // loadlab report
  'records.csv', // loadlab report
];

/** What an output folder holds, as far as a new run is concerned. */
export type RunDirState = 'new' | 'empty' | 'complete' | 'incomplete';

/** A folder holds a LoadLab run when its manifest parses as one, or when it holds run files only (a damaged run). */
function holdsRun(dir: string, entries: string[]): boolean {
  if (entries.every((e) => RUN_FILES.includes(e))) return true;
  try {
    checkManifest(JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')), 'manifest.json');
    return true;
  } catch {
    return false;
  }
}

function checkWritable(dir: string): fs.Stats | undefined {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR')
      throw new Error(`cannot use ${dir} as the run folder: part of its path is a file, not a folder; choose another path`);
    if (code !== 'ENOENT') throw new Error(`cannot use ${dir} as the run folder (${code}); choose another path`);
  }
  if (stat && !stat.isDirectory()) {
    throw new Error(`${dir} is a file, not a folder; give the run a folder path (a new or empty folder), e.g. ${dir}-run`);
  }
  let existing = path.resolve(dir);
  while (!fs.existsSync(existing)) existing = path.dirname(existing);
  try {
    fs.accessSync(existing, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    throw new Error(`cannot write the run folder ${dir}: no write permission in ${existing}; choose a folder you can write to`);
  }
  return stat;
}

/**
 * Check, without changing anything, that `dir` can receive a new run, and say what is in it.
 * @param replaceHint how the caller's user asks for replacement, named in messages
 *   (default `'replace: true'`; the CLI passes `'--replace'`).
 * @throws an Error naming the fix when `dir` is a file, cannot be created or written, is a
 *   non-empty folder that holds no LoadLab run (its files are listed), or holds a complete run and
 *   `replace` is false.
 */
export function checkRunDir(dir: string, replace: boolean, replaceHint = 'replace: true'): RunDirState {
  const stat = checkWritable(dir);
  if (!stat) return 'new';
  const entries = fs.readdirSync(dir).filter((e) => e !== '.lock');
  if (entries.length === 0) return 'empty';
  if (!holdsRun(dir, entries)) {
    const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? `, … (${entries.length} in all)` : '');
    throw new Error(
      `${dir} is not empty and holds no LoadLab run (${shown}); LoadLab never deletes or moves such files. ` +
        'Choose a new or empty folder for the run.',
    );
  }
  if (!isRunComplete(dir)) return 'incomplete';
  if (!replace) {
    throw new Error(`${dir} already holds a complete run; pass ${replaceHint} to overwrite it, or choose another name`);
  }
  return 'complete';
}

/** Options of `prepareRunDir`. */
export interface PrepareOptions {
  /** Delete a complete run's files ({@link RUN_FILES}) found in the folder instead of refusing. */
  replace: boolean;
  /** Suffix for a moved-aside incomplete run, `YYYYMMDD-HHMMSS`. */
  stamp: string;
  /** How the user asks for replacement, for messages; default `'replace: true'`. */
  replaceHint?: string;
}

/** What `prepareRunDir` did besides creating the folder. */
export interface PreparedRunDir {
  /** Where the files of an incomplete run found in the folder were moved (`<dir>.incomplete-<stamp>`). */
  movedAside?: string;
  /** Files of a replaced complete run that were deleted. */
  replaced?: string[];
  /** Files in the folder that are not a run's own, left untouched. */
  kept?: string[];
}

/**
 * Make `dir` a locked folder with no run files, ready for a new run (the caller must release the lock):
 * - missing or empty: created and locked;
 * - not empty and no LoadLab run in it: throws, touching nothing;
 * - holds a complete run: throws unless `replace`, which deletes only its run files ({@link RUN_FILES});
 * - holds an incomplete or damaged run: its run files are moved into a new folder
 *   `<dir>.incomplete-<stamp>` (nothing is deleted) and `movedAside` says where.
 * Any other file in the folder (notes, saved figures) stays where it is, and is listed in `kept`.
 */
export function prepareRunDir(dir: string, opts: PrepareOptions): PreparedRunDir {
  checkRunDir(dir, opts.replace, opts.replaceHint);
  fs.mkdirSync(dir, { recursive: true });
  const lockFile = path.join(dir, '.lock');
  acquireLock(lockFile);
  let state: RunDirState;
  try {
    state = checkRunDir(dir, opts.replace, opts.replaceHint); // again, now that we hold the lock
  } catch (err) {
    releaseLock(lockFile);
    throw err;
  }
  if (state === 'empty' || state === 'new') return {};
  const entries = fs.readdirSync(dir).filter((e) => e !== '.lock');
  const own = entries.filter((e) => RUN_FILES.includes(e));
  const kept = entries.filter((e) => !RUN_FILES.includes(e));
  const keptInfo = kept.length > 0 ? { kept } : {};
  if (state === 'complete') {
    for (const e of own) fs.rmSync(path.join(dir, e), { recursive: true, force: true });
    return { replaced: own, ...keptInfo };
  }
  let aside = `${dir.replace(/[\\/]+$/, '')}.incomplete-${opts.stamp}`;
  if (fs.existsSync(aside)) aside += `-${randomBytes(2).toString('hex')}`;
  try {
    fs.mkdirSync(aside);
    for (const e of own) fs.renameSync(path.join(dir, e), path.join(aside, e));
  } catch (err) {
    releaseLock(lockFile);
    throw new Error(
      `could not move the incomplete run in ${dir} aside to ${aside} (${(err as NodeJS.ErrnoException).code}); move or delete its run files yourself`,
    );
  }
  return { movedAside: aside, ...keptInfo };
}
