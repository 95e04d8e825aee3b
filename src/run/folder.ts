/**
 * Run-folder housekeeping: the `.lock` that keeps two writers out of one folder, the test for a
 * complete run, and getting a folder ready for a fresh run (refuse, replace or move aside).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

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

/** Options of `prepareRunDir`. */
export interface PrepareOptions {
  /** Delete a complete run found in the folder instead of refusing. */
  replace: boolean;
  /** Suffix for a moved-aside incomplete run, `YYYYMMDD-HHMMSS`. */
  stamp: string;
}

/**
 * Make `dir` an empty, locked folder for a new run (the caller must release the lock):
 * - missing or empty: created and locked;
 * - holds a complete run: throws unless `replace`, which deletes its files;
 * - holds an incomplete run (no summary, or status running/interrupted/failed): the whole folder is
 *   renamed to `<dir>.incomplete-<stamp>` (nothing is deleted) and a fresh one is made;
 * - holds other files: throws (not a run folder).
 */
export function prepareRunDir(dir: string, opts: PrepareOptions): void {
  fs.mkdirSync(dir, { recursive: true });
  const lockFile = path.join(dir, '.lock');
  acquireLock(lockFile);
  const entries = fs.readdirSync(dir).filter((e) => e !== '.lock');
  if (entries.length === 0) return;

  const isRun = entries.includes('manifest.json') || entries.includes('requests.jsonl');
  if (!isRun) {
    releaseLock(lockFile);
    throw new Error(`${dir} is not empty and is not a LoadLab run folder; choose a new or empty folder`);
  }
  if (isRunComplete(dir)) {
    if (!opts.replace) {
      releaseLock(lockFile);
      throw new Error(
        `${dir} already holds a complete run; pass replace: true to overwrite it, or choose another name`,
      );
    }
    for (const e of entries) fs.rmSync(path.join(dir, e), { recursive: true, force: true });
    return;
  }
  let aside = `${dir.replace(/[\\/]+$/, '')}.incomplete-${opts.stamp}`;
  if (fs.existsSync(aside)) aside += `-${randomBytes(2).toString('hex')}`;
  try {
    fs.renameSync(dir, aside);
  } catch (err) {
    releaseLock(lockFile);
    throw err;
  }
  fs.rmSync(path.join(aside, '.lock'), { force: true }); // our own lock travelled with the folder
  fs.mkdirSync(dir, { recursive: true });
  acquireLock(lockFile);
}
