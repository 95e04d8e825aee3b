/**
 * Reading runs back: a run folder into typed records, summary and manifest; a tree of runs into
 * a list. (Records into a danfojs DataFrame: `src/view/frame.ts`; this module never loads danfojs.)
 *
 * Damage is data, not an exception: a torn last line (the process died mid-write), a garbage
 * line, a record with a wrong field type or a duplicate in `requests.jsonl` is skipped and reported
 * in `problems` with file and line number. A missing or broken `manifest.json` is reported too, and
 * the records are still read. Only a folder that is no run at all (neither `manifest.json` nor
 * `requests.jsonl`), or a manifest newer than this LoadLab, throws.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Distribution, GpuSample, MetricsSample, RequestRecord, RunSummary } from '../types';
import { lockIsLive } from './folder';
import { readJsonLines } from './jsonl';
import { checkManifest, type RunManifest } from './manifest';
import { duplicateChecker, recordProblem, reviveRecord } from './record-check';

export { readJsonLines };

/** A run read from disk. */
export interface LoadedRun {
  dir: string;
  /**
   * The manifest. When `damaged` is set the manifest could not be read, and reading this field
   * throws that reason (nothing about the target is invented); `records` are still there.
   */
  manifest: RunManifest;
  /** Why `manifest.json` is missing or unreadable; absent for a healthy run. Also in `problems`. */
  damaged?: string;
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

/** The manifest or why it could not be read (exactly one is set). Throws only for a schema newer than this LoadLab. */
function readManifest(dir: string): { manifest?: RunManifest; problem?: string } {
  const file = path.join(dir, 'manifest.json');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { problem: code === 'ENOENT' ? 'manifest.json is missing' : `manifest.json could not be read (${code})` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `manifest.json is not valid JSON (${(err as Error).message})` };
  }
  try {
    return { manifest: checkManifest(value, 'manifest.json') };
  } catch (err) {
    const msg = (err as Error).message;
    if (/newer than this LoadLab/.test(msg)) throw new Error(msg.replace(/^manifest\.json/, file));
    return { problem: msg };
  }
}

/** Define `manifest` on a damaged run as a getter that throws why it is missing (not enumerable). */
function withDamagedManifest<T extends { dir: string }>(obj: T, problem: string): T & { manifest: RunManifest; damaged: string } {
  Object.defineProperty(obj, 'manifest', {
    enumerable: false,
    get() {
      throw new Error(
        `${obj.dir} has no usable manifest (${problem}), so its target and load are unknown; ` +
          'its records are still readable (.records), and .problems lists what is damaged',
      );
    },
  });
  return Object.assign(obj, { damaged: problem }) as T & { manifest: RunManifest; damaged: string };
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

function readSummary(dir: string, problems: string[]): RunSummary | undefined {
  const sumFile = path.join(dir, 'summary.json');
  if (!fs.existsSync(sumFile)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(sumFile, 'utf8'));
  } catch (err) {
    problems.push(`summary.json is not valid JSON (${(err as Error).message}); ignored`);
    return undefined;
  }
  if (
    raw === null ||
    typeof raw !== 'object' ||
    Array.isArray(raw) ||
    typeof (raw as { requests?: unknown }).requests !== 'number'
  ) {
    problems.push("summary.json is valid JSON but not a run summary (no numeric 'requests'); ignored");
    return undefined;
  }
  return reviveSummary(raw as Record<string, unknown>);
}

function readRecords(dir: string, problems: string[]): RequestRecord[] {
  const reqFile = path.join(dir, 'requests.jsonl');
  if (!fs.existsSync(reqFile)) {
    problems.push('requests.jsonl is missing');
    return [];
  }
  const duplicate = duplicateChecker();
  const check = (v: unknown, line: number) => recordProblem(v) ?? duplicate(v as Record<string, unknown>, line);
  return readJsonLines(reqFile, problems, check).map((v) => reviveRecord(v as Record<string, unknown>));
}

/**
 * Read a run folder. Records come back as `RequestRecord`s (nulls removed, arrays defaulted), the
 * summary with NaN restored where JSON has null. Every damage is reported in `problems`, e.g.
 * `requests.jsonl line 4: 'itlMs' must be an array of numbers, got 5; skipped`; a missing or
 * broken manifest sets `damaged` (see `LoadedRun.manifest`).
 * @throws when `dir` holds neither `manifest.json` nor `requests.jsonl` (not a run), or its
 *   manifest uses a newer schema than this LoadLab (update LoadLab).
 */
export function loadRun(dir: string): LoadedRun {
  const has = (f: string) => fs.existsSync(path.join(dir, f));
  if (!has('manifest.json') && !has('requests.jsonl')) {
    throw new Error(`${dir} is not a LoadLab run: no ${path.join(dir, 'manifest.json')} (runs are folders made by createRun)`);
  }
  const m = readManifest(dir);
  const problems: string[] = m.problem !== undefined ? [`${m.problem}; the records are read without it`] : [];
  const records = readRecords(dir, problems);
  const summary = readSummary(dir, problems);
  const manifest = m.manifest;
  if (summary) {
    const measured = records.filter((r) => !r.warmup).length;
    if (measured !== summary.requests) {
      problems.push(`summary.json counts ${summary.requests} measured requests but requests.jsonl holds ${measured} usable ones`);
    }
  } else if (manifest?.status === 'complete' && !problems.some((p) => p.startsWith('summary.json'))) {
    problems.push(`manifest says 'complete' but summary.json is missing`);
  }
  if (manifest?.status === 'running' && !lockIsLive(path.join(dir, '.lock'))) {
    problems.push(`status is 'running' but no writer holds the lock: the run was killed before it finished`);
  }
  const metrics = loadTimeline<MetricsSample>(dir, 'metrics.jsonl', problems);
  const gpu = loadTimeline<GpuSample>(dir, 'gpu.jsonl', problems);
  const base = { dir, records, summary, problems, ...(metrics ? { metrics } : {}), ...(gpu ? { gpu } : {}) };
  return manifest ? { ...base, manifest } : withDamagedManifest(base, m.problem ?? 'manifest.json is unusable');
}

/** One entry of `listRuns`. */
export interface RunListing {
  dir: string;
  /** The manifest; when `damaged` is set, reading it throws why it is unusable. */
  manifest: RunManifest;
  /** `summary.json` present and status `'complete'`; false for a damaged run. */
  complete: boolean;
  /** Why the manifest is missing or unreadable (load the records with `loadRun`). */
  damaged?: string;
}

/** A folder that looks like a run although its manifest is unusable: it has `requests.jsonl`, or a `manifest.json` naming a runId. */
function looksLikeRun(dir: string, names: Set<string>): boolean {
  if (names.has('requests.jsonl')) return true;
  if (!names.has('manifest.json')) return false;
  try {
    return fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8').includes('"runId"');
  } catch {
    return false;
  }
}

/**
 * Every run folder under `root` (default `'data'`), found recursively and sorted by path. A folder
 * whose manifest is missing or broken but that holds `requests.jsonl` (or a half-written run
 * manifest) is listed with `damaged` set; other folders are searched inside. A run folder's own
 * sub-folders and dot-folders are not searched. Moved-aside `<dir>.incomplete-<stamp>` folders are
 * listed too (`complete: false`). A missing root gives `[]`.
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
    const names = new Set(entries.map((e) => e.name));
    if (names.has('manifest.json') || names.has('requests.jsonl')) {
      let m: ReturnType<typeof readManifest> | undefined;
      try {
        m = readManifest(dir);
      } catch {
        m = undefined; // a newer schema: not ours to list
      }
      if (m?.manifest) {
        const complete = m.manifest.status === 'complete' && fs.existsSync(path.join(dir, 'summary.json'));
        out.push({ dir, manifest: m.manifest, complete });
        return;
      }
      if (m?.problem !== undefined && looksLikeRun(dir, names)) {
        out.push(withDamagedManifest({ dir, complete: false }, m.problem));
        return;
      }
    }
    for (const e of entries) {
      if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') walk(path.join(dir, e.name));
    }
  };
  walk(root);
  return out.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
}
