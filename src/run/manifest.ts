/**
 * The run manifest (`manifest.json`): what was measured, against what, with which load, by which
 * LoadLab and Node, and how the run ended. Written at the start (status `running`) and again at the
 * end, always atomically and always through `redact`, so no API key ever reaches the disk.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { packageRoot } from '../paths';

/**
 * Which simulator profile served a run (`GET /version` → `loadlab_profile`, LoadLab's simulator only):
 * a run on a spec-derived L40S profile is labelled so, never as a 4090's or a real GPU's.
 */
export interface SimProfileRef {
  /** Profile id, the file stem under `profiles/`, e.g. `l40s-qwen2.5-7b-instruct-awq`. */
  id: string;
  /** What its numbers rest on, e.g. `spec-derived, not calibrated`. */
  status: string;
  /** The GPU and model it models, e.g. `NVIDIA L40S`, `Qwen/Qwen2.5-7B-Instruct-AWQ`. */
  gpu?: string;
  model?: string;
}

/** The server a run measured. */
export interface RunTarget {
  /** Base URL, e.g. `http://127.0.0.1:8000` (no credentials in it). */
  baseUrl: string;
  /**
   * LoadLab's simulator, a real vLLM, another OpenAI-compatible server, or `import`: a result file of
   * another tool (`vllm bench serve`, src/exchange/import-vllm.ts) whose server LoadLab never saw.
   */
  kind: 'sim' | 'vllm' | 'other' | 'import';
  /**
   * True when the numbers come from the simulator, not a GPU. Absent only for an import whose file does
   * not say (`loadlab import` without `--simulated`/`--real`): unknown, never taken as real.
   */
  simulated?: boolean;
  /** Served model name. */
  model: string;
  /** `/version` of the server, when known. */
  serverVersion?: string;
  /**
   * vLLM's engine generation, from `/metrics` and the version (`src/observe/engine.ts`): `V1` (the
   * simulator follows V1), `V0`, or `unknown` (not vLLM, or nothing telling).
   */
  engine?: 'V0' | 'V1' | 'unknown';
  /** `max_model_len` from `/v1/models`, in tokens. */
  maxModelLen?: number;
  /** Labels of `vllm:cache_config_info` (block_size, num_gpu_blocks, enable_prefix_caching …). */
  cacheConfig?: Record<string, string>;
  /** `vllm serve` flags the server was started with. */
  flags?: Record<string, unknown>;
  /** The simulator's profile, when the server is LoadLab's simulator and reports one. */
  simProfile?: SimProfileRef;
  /** Whatever the target probe found (free-form). */
  probe?: unknown;
}

/** How the manifest's `*Ms` times map to wall time. */
export interface RunClock {
  /** Epoch ms (`performance.timeOrigin + performance.now()`) of the run's time 0. */
  originEpochMs: number;
  source: 'performance.now';
  /**
   * How token chunks were stamped (src/client/chunk-stamp.ts): `'turn'`, every chunk read in one
   * event-loop turn at the turn's first reading, or `'callback'`, each at its own data callback. Runs saved
   * before it was recorded were stamped per callback.
   */
  chunkStamp?: 'turn' | 'callback';
}

/** How a run ended; `running` on disk after the fact means it was killed. */
export type RunStatus = 'running' | 'complete' | 'interrupted' | 'failed';

/** Contents of `manifest.json`, schema 1. */
export interface RunManifest {
  schema: 1;
  /** Unique id: `<YYYYMMDD-HHMMSS>-<8 hex>`. */
  runId: string;
  /** Lesson the run belongs to, e.g. `'02-concurrency'`. */
  lesson?: string;
  /** Human name of the run, e.g. `'c8'`. */
  name?: string;
  /** `version` of LoadLab's package.json. */
  loadlabVersion: string;
  /** `process.version`, e.g. `v20.19.0`. */
  nodeVersion: string;
  /** `process.platform-process.arch`, e.g. `linux-x64`. */
  platform: string;
  target: RunTarget;
  /** Load shape (`'pool'`, `'poisson'`, `'burst'` …) and its options (concurrency, rate …). */
  load: { shape: string; options: Record<string, unknown> };
  /** Workload description (counts, lengths, seed …). */
  workload?: Record<string, unknown>;
  /** ISO time the run was created. */
  startedAt: string;
  /** ISO time the run finished or was aborted. */
  endedAt?: string;
  /** Records' `*Ms` values are ms since `clock.originEpochMs`. */
  clock: RunClock;
  status: RunStatus;
  /** Client health during the run (event-loop delay, CPU …), filled by the runner. */
  client?: Record<string, unknown>;
  /**
   * Set only for a run imported from another tool's result file (src/exchange/import-vllm.ts): the
   * tool, the file, how the records' times were made (`timing`), and the file's own figures kept as is.
   */
  imported?: { tool: string; file: string; timing: string } & Record<string, unknown>;
  notes?: string[];
}

/** Fields `createRun` fills itself; the caller gives the rest (see `ManifestInput`). */
export type ManifestAutoFields =
  | 'schema'
  | 'runId'
  | 'loadlabVersion'
  | 'nodeVersion'
  | 'platform'
  | 'startedAt'
  | 'endedAt'
  | 'status'
  | 'clock';

/** What the caller of `createRun` provides; `clock` defaults to `makeClock()` at creation. */
export type ManifestInput = Omit<RunManifest, ManifestAutoFields> & { clock?: RunClock };

/** Fields `loadRun` requires in a manifest. */
export const REQUIRED_MANIFEST_FIELDS = ['schema', 'runId', 'target', 'load', 'startedAt', 'clock', 'status'] as const;

/**
 * The clock record for a run whose time 0 is `originPerfMs` on `performance.now()` (default: now).
 * A runner takes `const t0 = performance.now()`, stamps records as `performance.now() - t0` and
 * passes `clock: makeClock(t0)` to `createRun`.
 */
export function makeClock(originPerfMs: number = performance.now(), chunkStamp?: RunClock['chunkStamp']): RunClock {
  return {
    originEpochMs: performance.timeOrigin + originPerfMs,
    source: 'performance.now',
    ...(chunkStamp !== undefined ? { chunkStamp } : {}),
  };
}

let cachedVersion: string | undefined;

/** LoadLab's version from its package.json (read once, via `packageRoot()`); `'unknown'` if unreadable. */
export function loadlabVersion(): string {
  if (cachedVersion !== undefined) return cachedVersion;
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8'));
    cachedVersion = typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    cachedVersion = 'unknown';
  }
  return cachedVersion as string;
}

/** `YYYYMMDD-HHMMSS` in local time, for folder names and run ids. */
export function timeStamp(date: Date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}${p(date.getMonth() + 1)}${p(date.getDate())}-` +
    `${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}`
  );
}

const SECRET_FRAGMENTS = ['apikey', 'authorization', 'password', 'secret', 'credential', 'cookie'];
const SECRET_EXACT = new Set(['token', 'accesstoken', 'authtoken', 'bearertoken', 'hftoken', 'refreshtoken', 'idtoken']);

/**
 * Whether a key names a secret: apiKey, api_key, x-api-key, Authorization, password, secret,
 * cookie, token/accessToken/hfToken … (case, `-` and `_` ignored). Counting keys such as
 * `outputTokens` or `maxTokens` are not secrets.
 */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_\s]/g, '');
  return SECRET_EXACT.has(k) || SECRET_FRAGMENTS.some((f) => k.includes(f));
}

/**
 * Deep copy of `value` without secrets: drops every object key for which `isSecretKey` holds,
 * replaces `Bearer …` strings with `'[redacted]'`, and in string arrays (command lines) redacts the
 * value after `--api-key`-like flags and in `--api-key=…`. Applied by the run writer before every
 * manifest or extra-file write. Cycles become `'[circular]'`.
 */
export function redact<T>(value: T): T {
  return redactValue(value, new Set()) as T;
}

function redactValue(value: unknown, seen: Set<object>): unknown {
  if (typeof value === 'string') return /^\s*bearer\s+\S/i.test(value) ? '[redacted]' : value;
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  if (Array.isArray(value)) {
    seen.add(value);
    const out = value.map((v, i) => {
      const prev = value[i - 1];
      if (typeof prev === 'string' && /^--?[\w-]+$/.test(prev) && isSecretKey(prev.replace(/^-+/, ''))) {
        return '[redacted]';
      }
      if (typeof v === 'string') {
        const m = /^(--?[\w-]+)=/.exec(v);
        if (m && isSecretKey(m[1].replace(/^-+/, ''))) return `${m[1]}=[redacted]`;
      }
      return redactValue(v, seen);
    });
    seen.delete(value);
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value; // Date, Buffer …: JSON handles them
  seen.add(value);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!isSecretKey(k)) out[k] = redactValue(v, seen);
  }
  seen.delete(value);
  return out;
}

/**
 * Check that parsed JSON is a LoadLab manifest and return it typed.
 * @param where the file path, for the message.
 * @throws Error like `data/x/manifest.json is not a LoadLab run manifest: missing 'target'`.
 */
export function checkManifest(value: unknown, where: string): RunManifest {
  const bad = (why: string): Error => new Error(`${where} is not a LoadLab run manifest: ${why}`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw bad('expected a JSON object');
  const m = value as Record<string, unknown>;
  for (const field of REQUIRED_MANIFEST_FIELDS) {
    if (m[field] === undefined || m[field] === null) throw bad(`missing '${field}'`);
  }
  if (typeof m.schema !== 'number') throw bad(`'schema' must be a number, got ${JSON.stringify(m.schema)}`);
  if (m.schema > 1) {
    throw new Error(`${where} uses manifest schema ${m.schema}, newer than this LoadLab (1); update LoadLab to read it`);
  }
  if (typeof m.target !== 'object') throw bad(`'target' must be an object`);
  if (typeof m.load !== 'object') throw bad(`'load' must be an object`);
  return value as RunManifest;
}
