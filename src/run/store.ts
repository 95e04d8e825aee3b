/**
 * The run writer: one folder per run, written so that a crash, Ctrl-C or kernel restart loses
 * nothing already measured.
 *
 * ```
 * data/<lesson>/<name>-<YYYYMMDD-HHMMSS>-<4 hex>/
 *   manifest.json   written at creation (status 'running') and at the end; atomic
 *   requests.jsonl  a line per finished request (`appendSoon`: batched per loop turn, ./batched-appender)
 *   summary.json    written atomically by finish(); its presence + status 'complete' = complete run
 *   .lock           pid of the writing process while the run is open
 * ```
 */

import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { RequestRecord, RunSummary } from '../types';
import { openLineAppender, writeJsonAtomic, type LineAppender } from './atomic';
import { closeAppender, openBatchedAppender, type BatchedAppender } from './batched-appender';
import { isRunComplete, prepareRunDir, releaseLock } from './folder';
import { loadlabVersion, makeClock, redact, timeStamp, type ManifestInput, type RunManifest } from './manifest';

export { isRunComplete };

/** Where `createRun` puts the run. */
export interface CreateRunOptions {
  /** Exact folder; overrides root/lesson/name. */
  dir?: string;
  /** Root of all runs; default `'data'` (relative to the working directory). */
  root?: string;
  /** Sub-folder under root, and `manifest.lesson`; default folder `'runs'`. */
  lesson?: string;
  /** Prefix of the folder name, and `manifest.name`; default `'run'`. */
  name?: string;
  /** Replace a complete run already in `dir` (only its run files are deleted). Default false. */
  replace?: boolean;
}

/** Handle on an open run folder. All writes are crash-safe; all but `appendSoon` are synchronous. */
export interface RunWriter {
  readonly dir: string;
  readonly runId: string;
  /** The manifest as last written. */
  readonly manifest: RunManifest;
  /** Append one finished request to `requests.jsonl` (one whole line, on disk when this returns). */
  append(record: RequestRecord): void;
  /**
   * Queue one finished request for `requests.jsonl`: written with the others of this event-loop turn in
   * one write (≈ 0.25 ms of stringifying per turn). `onWritten` runs once its line is on disk. Keeps order.
   */
  appendSoon(record: RequestRecord, onWritten?: () => void): void;
  /** Write every queued record now (synchronous). `finish` and `abort` flush first. */
  flush(): void;
  /**
   * End the run: `summary.json` atomically, then the manifest with `patch` merged, status
   * `'complete'` and `endedAt`; closes files and removes the lock.
   */
  finish(summary: RunSummary, patch?: Partial<RunManifest>): void;
  /** End the run without a summary (status `'interrupted'` or `'failed'`); closes files, removes the lock. */
  abort(status: 'interrupted' | 'failed', patch?: Partial<RunManifest>): void;
  /**
   * Write an extra JSON file atomically (redacted), e.g. `writeJson('loadtest-concurrency.json', table)`.
   * Also allowed after `finish`, for tables computed from the finished run.
   */
  writeJson(name: string, value: unknown): void;
  /** Append one JSON line (redacted) to an extra file, e.g. `appendLine('metrics.jsonl', sample)`. */
  appendLine(file: string, value: unknown): void;
  /** Absolute-or-relative path of a file inside the run folder. */
  path(name: string): string;
  /** True once `finish` or `abort` ran. */
  readonly closed: boolean;
  /** Where the files of an incomplete run found in the folder were moved (also printed, and in `manifest.notes`). */
  readonly movedAside?: string;
}

const RESERVED = new Set(['manifest.json', 'requests.jsonl', 'summary.json', '.lock']);
const open = new Map<string, RunWriter>();

/** Replace characters that do not belong in a folder name by '-'. */
function safeName(s: string): string {
  return s.replace(/[^\w.=+-]+/g, '-').replace(/^\.+/, '') || 'run';
}

function checkFileName(name: string): void {
  if (!name || name !== path.basename(name) || name === '.' || name === '..') {
    throw new Error(`run file name must be a plain file name like 'metrics.jsonl', got '${name}'`);
  }
  if (RESERVED.has(name)) {
    throw new Error(`'${name}' is written by the run itself; use append()/finish(), or pick another file name`);
  }
}

/**
 * Create a run folder, take its lock and write `manifest.json` (status `'running'`) and an empty
 * `requests.jsonl`.
 *
 * Folder: `opts.dir`, else `<root>/<lesson ?? 'runs'>/<name ?? 'run'>-<YYYYMMDD-HHMMSS>-<4 hex>`.
 * The files of an incomplete run found in the folder are moved to `<dir>.incomplete-<stamp>`, which
 * is printed (console.warn) and noted in the manifest, and the run starts fresh (how a sweep
 * resumes: skip `isRunComplete` dirs, re-create the others). Files that are not a run's own
 * (notes, saved figures) are never deleted or moved.
 * @throws when the folder holds a complete run (pass `replace: true` or another name), when another
 *   live writer holds its lock, or when it is a non-empty folder holding no LoadLab run.
 */
export function createRun(opts: CreateRunOptions, input: ManifestInput): RunWriter {
  const stamp = timeStamp();
  const dir =
    opts.dir ??
    path.join(
      opts.root ?? 'data',
      safeName(opts.lesson ?? 'runs'),
      `${safeName(opts.name ?? 'run')}-${stamp}-${randomBytes(2).toString('hex')}`,
    );
  const prepared = prepareRunDir(dir, { replace: opts.replace ?? false, stamp });
  const lockFile = path.join(dir, '.lock');
  const moved = prepared.movedAside;
  if (moved) console.warn(`loadlab: ${dir} held an incomplete run; moved its files to ${moved} (nothing deleted)`);
  const notes = [
    ...(input.notes ?? []),
    ...(moved ? [`the files of an incomplete run found in this folder were moved to ${moved}`] : []),
  ];
  const { manifest, requests } = startFiles(dir, lockFile, opts, input, stamp, notes);
  const writer = makeWriter(dir, lockFile, moved, manifest, requests);
  open.set(path.resolve(dir), writer);
  return writer;
}

/** Write the first `manifest.json` (status `'running'`) and open `requests.jsonl`; on failure release the lock and rethrow. */
function startFiles(
  dir: string,
  lockFile: string,
  opts: CreateRunOptions,
  input: ManifestInput,
  stamp: string,
  notes: string[],
): { manifest: RunManifest; requests: BatchedAppender } {
  try {
    const manifest = redact({
      schema: 1,
      runId: `${stamp}-${randomBytes(4).toString('hex')}`,
      ...(opts.lesson !== undefined ? { lesson: opts.lesson } : {}),
      ...(opts.name !== undefined ? { name: opts.name } : {}),
      ...input,
      ...(notes.length > 0 ? { notes } : {}),
      loadlabVersion: loadlabVersion(),
      nodeVersion: process.version,
      platform: `${process.platform}-${process.arch}`,
      startedAt: new Date().toISOString(),
      clock: input.clock ?? makeClock(),
      status: 'running',
    } as RunManifest);
    writeJsonAtomic(path.join(dir, 'manifest.json'), manifest);
    return { manifest, requests: openBatchedAppender(path.join(dir, 'requests.jsonl')) };
  } catch (err) {
    releaseLock(lockFile);
    throw err;
  }
}

/** The writer of a started run: appends records and side files, then ends it once (finish or abort). */
function makeWriter(
  dir: string,
  lockFile: string,
  moved: string | undefined,
  first: RunManifest,
  requests: BatchedAppender,
): RunWriter {
  let manifest = first;
  const extras = new Map<string, LineAppender>();
  let closed = false;
  const ensureOpen = (what: string) => {
    if (closed) throw new Error(`run ${dir} is already ${manifest.status}; ${what} needs a new createRun()`);
  };
  const end = (patch: Partial<RunManifest> | undefined, status: RunManifest['status']) => {
    const lost = closeAppender(requests); // every queued record on disk before the manifest says how the run ended
    const p = lost ? { ...patch, notes: [...(patch?.notes ?? manifest.notes ?? []), lost] } : patch;
    manifest = redact({ ...manifest, ...p, schema: 1, runId: manifest.runId, status, endedAt: new Date().toISOString() });
    writeJsonAtomic(path.join(dir, 'manifest.json'), manifest);
    closed = true;
    for (const a of extras.values()) a.close();
    open.delete(path.resolve(dir));
    releaseLock(lockFile);
  };

  const writer: RunWriter = {
    dir,
    ...(moved ? { movedAside: moved } : {}),
    get runId() {
      return manifest.runId;
    },
    get manifest() {
      return manifest;
    },
    get closed() {
      return closed;
    },
    append(record) {
      ensureOpen('append()');
      requests.append(record);
      requests.flush();
    },
    appendSoon(record, onWritten) {
      ensureOpen('appendSoon()');
      requests.append(record, onWritten);
    },
    flush() {
      requests.flush();
    },
    finish(summary, patch) {
      ensureOpen('finish()');
      requests.flush(); // a write error throws here, before the run is marked complete
      writeJsonAtomic(path.join(dir, 'summary.json'), summary);
      end(patch, 'complete');
    },
    abort(status, patch) {
      if (closed) return;
      end(patch, status);
    },
    writeJson(name, value) {
      checkFileName(name);
      writeJsonAtomic(path.join(dir, name), redact(value));
    },
    appendLine(file, value) {
      ensureOpen('appendLine()');
      checkFileName(file);
      let a = extras.get(file);
      if (!a) extras.set(file, (a = openLineAppender(path.join(dir, file))));
      a.append(redact(value));
    },
    path(name) {
      return path.join(dir, name);
    },
  };
  return writer;
}

/** Writers of this process not yet finished or aborted (e.g. left open by a cell that threw). */
export function openRuns(): RunWriter[] {
  return [...open.values()];
}

/**
 * Abort every run this process still has open (default status `'interrupted'`), releasing their
 * locks. For SIGINT handlers, and for a notebook cell that threw before `finish()`.
 * Returns how many were aborted.
 */
export function abortOpenRuns(status: 'interrupted' | 'failed' = 'interrupted'): number {
  const writers = openRuns();
  for (const w of writers) w.abort(status);
  return writers.length;
}
