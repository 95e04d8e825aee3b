/**
 * Up-front checks of `runLoad` options: every misconfiguration throws here, before any request,
 * with a message that names the fix (the output folder included: see `checkRunDir`). Also settles how many requests run and which spec each uses.
 */

import { checkRunDir } from '../run/folder';
import { checkSlo } from '../stats/summary';
import type { RequestSpec, Slo } from '../types';
import { validateShape, type LoadShape } from '../schedule/shapes';
import { type SessionsShape, sessionTurns, turnAt, turnSpec } from '../schedule/sessions';
import { checkBaseUrl } from './target';

/** The subset of `RunLoadOptions` checked here (see runner.ts for the docs). */
export interface RunOptionsInput {
  baseUrl: string;
  model?: string;
  workload?: RequestSpec[] | ((i: number) => RequestSpec);
  requests?: number;
  shape: LoadShape;
  warmup?: number;
  out?: string | false;
  replace?: boolean;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  progress?: unknown;
  onRecord?: unknown;
  slo?: Slo;
  signal?: unknown;
}

/** Options after validation. */
export interface ResolvedRunOptions {
  shape: LoadShape;
  /** Measured requests. */
  n: number;
  warmup: number;
  /** Spec of measured request i (lists are cycled). */
  specOf: (i: number) => RequestSpec;
  /** What the manifest says about the workload. */
  workloadInfo: Record<string, unknown>;
}

/** Longest timer Node can arm (ms); a longer one fires after 1 ms with a TimeoutOverflowWarning. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function positiveMs(name: string, v: unknown): void {
  if (v !== undefined && (typeof v !== 'number' || !(v > 0))) {
    throw new TypeError(`${name} must be a number of ms > 0 (or left out for the default), got ${String(v)}`);
  }
  if (typeof v === 'number' && v > MAX_TIMER_MS) {
    throw new TypeError(`${name} must be at most ${MAX_TIMER_MS} ms (about 24 days, the longest timer Node allows), got ${v}`);
  }
}

function checkSpec(spec: unknown, i: number): RequestSpec {
  if (spec === null || typeof spec !== 'object') {
    throw new TypeError(`workload item ${i} must be a RequestSpec like { messages: [...] } or { prompt }, got ${String(spec)}`);
  }
  const s = spec as RequestSpec;
  if (!(s.messages && s.messages.length > 0) && s.prompt === undefined) {
    throw new TypeError(`workload item ${i} has neither messages nor prompt; build it with makeRequest(text)`);
  }
  return s;
}

/** progress, onRecord, slo and signal. */
function checkHooks(opts: RunOptionsInput): void {
  const p = opts.progress;
  if (p !== undefined && typeof p !== 'boolean' && typeof p !== 'function') {
    throw new TypeError('progress must be true (a line on stderr), false, or a callback (p) => void');
  }
  if (opts.onRecord !== undefined && typeof opts.onRecord !== 'function') {
    throw new TypeError('onRecord must be a function (record) => void');
  }
  if (opts.slo !== undefined) checkSlo(opts.slo);
  const sig = opts.signal as { aborted?: unknown } | undefined;
  if (sig !== undefined && (sig === null || typeof sig.aborted !== 'boolean')) {
    throw new TypeError('signal must be an AbortSignal, e.g. new AbortController().signal');
  }
}

/** Validate options and resolve the request count and specs. Throws TypeError naming the fix. */
export function resolveRunOptions(opts: RunOptionsInput): ResolvedRunOptions {
  if (opts === null || typeof opts !== 'object') {
    throw new TypeError('runLoad needs an options object: runLoad({ baseUrl, workload, shape: closedLoop(8), requests: 50 })');
  }
  checkBaseUrl(opts.baseUrl);
  if (opts.shape === undefined) {
    throw new TypeError('shape is required: closedLoop(c), burst(), openLoop(rate) or timeline([...])');
  }
  const shape = validateShape(opts.shape);
  if (opts.model !== undefined && (typeof opts.model !== 'string' || opts.model === '')) {
    throw new TypeError("model must be a non-empty string, or left out to use the server's first model");
  }
  const warmup = opts.warmup ?? 0;
  if (!Number.isInteger(warmup) || warmup < 0) {
    throw new TypeError(`warmup must be an integer ≥ 0 (requests sent before measuring), got ${String(opts.warmup)}`);
  }
  positiveMs('timeoutMs', opts.timeoutMs);
  positiveMs('idleTimeoutMs', opts.idleTimeoutMs);
  if (opts.out !== undefined && opts.out !== false && (typeof opts.out !== 'string' || opts.out === '')) {
    throw new TypeError('out must be a folder path, or false to keep the run in memory only');
  }
  // Before the target is probed: a folder that cannot take the run fails first, naming the fix.
  if (typeof opts.out === 'string') checkRunDir(opts.out, opts.replace ?? false);
  checkHooks(opts);
  if (shape.kind === 'sessions') return resolveSessions(shape, opts, warmup);

  const timelineSpecs = shape.kind === 'timeline' ? shape.requests : undefined;
  const workload = opts.workload ?? timelineSpecs;
  if (workload === undefined) {
    throw new TypeError(
      'workload is required: a RequestSpec[] or (i) => RequestSpec (or a timeline built from {atMs, request} entries)',
    );
  }
  if (Array.isArray(workload)) {
    if (workload.length === 0) throw new TypeError('workload is empty; give at least one RequestSpec');
    workload.forEach(checkSpec);
  } else if (typeof workload !== 'function') {
    throw new TypeError('workload must be a RequestSpec[] or a function (i) => RequestSpec');
  }

  let n = opts.requests;
  if (n === undefined) {
    if (shape.kind === 'timeline') n = shape.atMs.length;
    else if (shape.kind === 'burst' && shape.size !== undefined) n = shape.size;
    else if (Array.isArray(workload)) n = workload.length;
    else throw new TypeError('requests is required when workload is a function: pass requests: N');
  }
  if (!Number.isInteger(n) || n < 1) {
    throw new TypeError(`requests must be an integer ≥ 1, got ${String(opts.requests)}`);
  }
  if (shape.kind === 'timeline' && n > shape.atMs.length) {
    throw new TypeError(`timeline has ${shape.atMs.length} entries but requests is ${n}; add entries or lower requests`);
  }

  const specOf = Array.isArray(workload)
    ? (i: number) => workload[i % workload.length]
    : (i: number) => checkSpec(workload(i), i);
  const workloadInfo: Record<string, unknown> = { requests: n, warmup };
  if (Array.isArray(workload)) {
    const tags: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const t = workload[i % workload.length].tag;
      if (t !== undefined) tags[t] = (tags[t] ?? 0) + 1;
    }
    workloadInfo.distinctSpecs = workload.length;
    if (Object.keys(tags).length > 0) workloadInfo.tags = tags;
    const apis = [...new Set(workload.map((s) => s.api ?? 'chat'))];
    workloadInfo.api = apis.length === 1 ? apis[0] : apis;
    const maxTokens = [...new Set(workload.map((s) => s.maxTokens))].filter((x) => x !== undefined);
    if (maxTokens.length === 1) workloadInfo.maxTokens = maxTokens[0];
  } else {
    workloadInfo.generator = 'function';
  }
  return { shape, n, warmup, specOf, workloadInfo };
}

/**
 * A sessions run: its conversations are the workload, every turn of them is measured, and measured
 * request i is the turn at position i (`turnAt`), estimated with the dataset's answers as history
 * (for the prompt-length preflight; the live history is built while sending).
 */
function resolveSessions(shape: SessionsShape, opts: RunOptionsInput, warmup: number): ResolvedRunOptions {
  if (opts.workload !== undefined) {
    throw new TypeError('a sessions shape carries its conversations; drop workload');
  }
  if (warmup > 0) {
    throw new TypeError(
      'warmup is not supported with a sessions shape: a warm-up would send first turns that the measured ' +
        'conversations send again, and the prefix cache would make those look faster; use warmup: 0',
    );
  }
  const n = sessionTurns(shape);
  if (opts.requests !== undefined && opts.requests !== n) {
    throw new TypeError(
      `a sessions run sends every turn of its conversations (${n}); drop requests or choose fewer conversations`,
    );
  }
  const at = turnAt(shape);
  const specOf = (i: number) => {
    const script = shape.conversations[at[i].c];
    return turnSpec(script, at[i].k, script.datasetAnswers ?? []);
  };
  const workloadInfo = {
    requests: n,
    warmup,
    api: 'chat',
    conversations: shape.conversations.length,
    history: 'the answers received live (as vLLM benchmarks/multi_turn)',
  };
  return { shape, n, warmup, specOf, workloadInfo };
}
