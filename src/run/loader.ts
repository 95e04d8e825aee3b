/**
 * Reading runs back: a run folder into typed records, summary and manifest; a tree of runs into
 * a list. (Records into a danfojs DataFrame: `src/view/frame.ts`; this module never loads danfojs.)
 *
 * Damage is data, not an exception: a torn last line (the process died mid-write) or a garbage
 * line in `requests.jsonl` is skipped and reported in `problems` with file and line number. Only a
 * folder that is not a run at all (no or unreadable manifest) throws.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Distribution, GpuSample, MetricsSample, RequestRecord, RunSummary } from '../types';
import { lockIsLive } from './folder';
import { checkManifest, type RunManifest } from './manifest';

/** A run read from disk. */
export interface LoadedRun {
  dir: string;
  manifest: RunManifest;
  /** Records in file order (warm-up included), bad lines skipped. */
  records: RequestRecord[];
  /** Present once the run finished. */
  summary?: RunSummary;
  /** Human-readable issues found while reading, e.g. `requests.jsonl line 51: truncated …`. */
  problems: string[];
  /** `/metrics` samples (`metrics.jsonl`), when the run sampled them. */
  metrics?: MetricsSample[];
  /** `nvidia-smi` samples (`gpu.jsonl`), when there were any. */
  gpu?: GpuSample[];
}

/** Read a run folder's timeline file (`metrics.jsonl` or `gpu.jsonl`); undefined when absent. Bad lines go to `problems`. */
export function loadTimeline<T>(dir: string, file: 'metrics.jsonl' | 'gpu.jsonl', problems: string[] = []): T[] | undefined {
  const full = path.join(dir, file);
  if (!fs.existsSync(full)) return undefined;
  const check = (v: unknown) =>
    v && typeof v === 'object' && typeof (v as { tMs?: unknown }).tMs === 'number' ? undefined : 'not a sample (no numeric tMs)';
  return readJsonLines(full, problems, check) as T[];
}

/** The `/metrics` samples of a run folder (empty when it has none). */
export function loadMetrics(dir: string): MetricsSample[] {
  return loadTimeline<MetricsSample>(dir, 'metrics.jsonl') ?? [];
}

function readManifest(dir: string): RunManifest {
  const file = path.join(dir, 'manifest.json');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    throw new Error(`${dir} is not a LoadLab run: no ${file} (runs are folders made by createRun)`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not a LoadLab run manifest: not valid JSON (${(err as Error).message})`);
  }
  return checkManifest(value, file);
}

const DIST_KEYS = ['ttftMs', 'tpotMs', 'itlMs', 'e2eMs', 'queueMs', 'ttftFromIntendedMs'] as const;
const RATE_KEYS = ['requestsPerSec', 'outputTokensPerSec', 'totalTokensPerSec'] as const;

/** JSON stores NaN as null: put NaN back in the summary's distributions and rates. */
function reviveSummary(raw: Record<string, unknown>): RunSummary {
  const s = raw as unknown as RunSummary;
  const nan = (v: unknown) => (v === null || v === undefined ? NaN : (v as number));
  for (const key of DIST_KEYS) {
    const d = (raw[key] ?? {}) as Record<string, unknown>;
    const out = {} as Distribution;
    for (const f of ['n', 'mean', 'std', 'min', 'p50', 'p90', 'p95', 'p99', 'max'] as const) out[f] = nan(d[f]);
    if (Number.isNaN(out.n)) out.n = 0;
    s[key] = out;
  }
  for (const key of RATE_KEYS) s[key] = nan(raw[key]);
  if (s.goodput) s.goodput.requestsPerSec = nan(s.goodput.requestsPerSec);
  return s;
}

/** Why a parsed line is not a record, or undefined if it is one. */
function recordProblem(v: unknown): string | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'not a JSON object';
  const r = v as Record<string, unknown>;
  for (const f of ['index', 'startMs', 'endMs'] as const) {
    if (typeof r[f] !== 'number') return `missing number '${f}'`;
  }
  if (typeof r.ok !== 'boolean') return `missing boolean 'ok'`;
  return undefined;
}

/** Back to the record type: NaN written as null → undefined for optional numbers, NaN for required. */
function reviveRecord(raw: Record<string, unknown>): RequestRecord {
  for (const [k, v] of Object.entries(raw)) if (v === null) delete raw[k];
  const r = raw as unknown as RequestRecord;
  r.warmup ??= false;
  r.chunkMs ??= [];
  r.chunkTokens ??= [];
  r.itlMs ??= [];
  r.intendedStartMs ??= NaN;
  r.queueMs ??= NaN;
  return r;
}

/**
 * Parse a JSON-lines file. Lines that are not JSON, or that `check` rejects (it returns the reason),
 * are skipped and described in `problems` with the file name and 1-based line number, in file order.
 */
export function readJsonLines(
  file: string,
  problems: string[],
  check: (value: unknown) => string | undefined = () => undefined,
): unknown[] {
  const name = path.basename(file);
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const out: unknown[] = [];
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      const last = i === lines.length - 1; // no newline after it: the write was cut off
      problems.push(
        last
          ? `${name} line ${i + 1}: truncated last line (the run was probably killed mid-write); skipped`
          : `${name} line ${i + 1}: not valid JSON; skipped: ${text.slice(0, 60)}`,
      );
      return;
    }
    const why = check(value);
    if (why) problems.push(`${name} line ${i + 1}: ${why}; skipped`);
    else out.push(value);
  });
  return out;
}

/**
 * Read a run folder. Records come back as `RequestRecord`s (nulls removed, arrays defaulted), the
 * summary with NaN restored where JSON has null.
 * @throws when `dir` has no `manifest.json`, or it is not valid JSON, or lacks a required field
 *   (message like `…/manifest.json is not a LoadLab run manifest: missing 'target'`).
 */
export function loadRun(dir: string): LoadedRun {
  const manifest = readManifest(dir);
  const problems: string[] = [];
  const records: RequestRecord[] = [];
  const reqFile = path.join(dir, 'requests.jsonl');
  if (fs.existsSync(reqFile)) {
    for (const value of readJsonLines(reqFile, problems, recordProblem)) {
      records.push(reviveRecord(value as Record<string, unknown>));
    }
  } else {
    problems.push('requests.jsonl is missing');
  }

  let summary: RunSummary | undefined;
  const sumFile = path.join(dir, 'summary.json');
  if (fs.existsSync(sumFile)) {
    try {
      summary = reviveSummary(JSON.parse(fs.readFileSync(sumFile, 'utf8')));
    } catch (err) {
      problems.push(`summary.json is not valid JSON (${(err as Error).message}); ignored`);
    }
  } else if (manifest.status === 'complete') {
    problems.push(`manifest says 'complete' but summary.json is missing`);
  }
  if (manifest.status === 'running' && !lockIsLive(path.join(dir, '.lock'))) {
    problems.push(`status is 'running' but no writer holds the lock: the run was killed before it finished`);
  }
  const metrics = loadTimeline<MetricsSample>(dir, 'metrics.jsonl', problems);
  const gpu = loadTimeline<GpuSample>(dir, 'gpu.jsonl', problems);
  return { dir, manifest, records, summary, problems, ...(metrics ? { metrics } : {}), ...(gpu ? { gpu } : {}) };
}

/** One entry of `listRuns`. */
export interface RunListing {
  dir: string;
  manifest: RunManifest;
  /** `summary.json` present and status `'complete'`. */
  complete: boolean;
}

/**
 * Every run folder under `root` (default `'data'`), found recursively and sorted by path. Folders
 * without a valid manifest are skipped (their sub-folders are still searched); a run folder's own
 * sub-folders and dot-folders are not. Moved-aside `<dir>.incomplete-<stamp>` folders are listed
 * too (`complete: false`). A missing root gives `[]`.
 */
export function listRuns(root = 'data'): RunListing[] {
  const out: RunListing[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    if (entries.some((e) => e.isFile() && e.name === 'manifest.json')) {
      try {
        const manifest = readManifest(dir);
        const complete = manifest.status === 'complete' && fs.existsSync(path.join(dir, 'summary.json'));
        out.push({ dir, manifest, complete });
        return;
      } catch {
        // not a run after all; look inside
      }
    }
    for (const e of entries) {
      if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') walk(path.join(dir, e.name));
    }
  };
  walk(root);
  return out.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
}
