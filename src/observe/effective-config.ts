/**
 * What a server says about its own configuration, read back after it started, for the run
 * manifest: the settings that were in effect, not the ones we meant to set (vLLM resolves
 * defaults from the GPU and the model, e.g. `num_gpu_blocks` and `max_model_len`).
 * Works for any target, launched by us or not. `simulated` is true only when the server marks
 * itself as LoadLab's simulator (`x-loadlab-sim` header, `loadlab_sim` fields, `loadlab:` metrics).
 */
import { httpGet, serverRoot, type GetResult } from '../client/http-get';
import type { SimProfileRef } from '../run/manifest';
import { detectEngine, type ServerEngine } from './engine';
import { parsePrometheus, type MetricFamily } from './prometheus';
import { cacheConfigInfo, summarizeCacheConfig, type CacheConfigSummary } from './vllm-metrics';

/** One card of `GET /v1/models`. */
export interface ModelCard {
  /** The served name clients send as `model`. */
  id: string;
  /** The model path or Hugging Face id it was loaded from. */
  root?: string;
  /** Context length in effect, tokens (vLLM's `max_model_len`). */
  maxModelLen?: number;
  /** Set for a LoRA adapter: its base model. */
  parent?: string;
  ownedBy?: string;
}

/** The effective configuration of a server. Missing fields: that endpoint did not answer. */
export interface EffectiveConfig {
  /** Server root that was asked. */
  baseUrl: string;
  /** Any endpoint answered over HTTP. */
  reachable: boolean;
  /** `GET /version` → `version`, e.g. `0.11.0`. */
  version?: string;
  /** vLLM's engine, V0 or V1, from `/metrics` and the version (`engine.ts`); `unknown` for a server that is not vLLM. */
  engine: ServerEngine;
  /** Why `engine` is what it is, e.g. `metrics carry an engine label`. */
  engineEvidence: string;
  /** `GET /v1/models` cards (empty when it did not answer). */
  models: ModelCard[];
  /** Labels of `vllm:cache_config_info` as the server wrote them. */
  cacheConfig?: Record<string, string>;
  /** The parsed cache fields (blocks, block size, KV capacity in tokens …). */
  cache: CacheConfigSummary;
  /**
   * When the serving process started, epoch seconds: `process_start_time_seconds`, else the
   * earliest `vllm:*_created` sample (prometheus_client stamps each metric when vLLM creates it at
   * engine start, `vllm/v1/metrics/loggers.py`). Changes when the server is restarted; undefined
   * when `/metrics` shows neither.
   */
  startedAtS?: number;
  /** True only when the server says it is LoadLab's simulator. */
  simulated: boolean;
  /** The simulator's profile (`GET /version` → `loadlab_profile`); absent for any other server. */
  simProfile?: SimProfileRef;
  /** The CPU the simulator's engine thread is pinned to (`GET /version` → `loadlab_engine_cpu`; src/proc/cpu-split.ts). */
  simEngineCpu?: number;
  /** The simulator's machine boot (`GET /version` → `loadlab_boot_id`), which tells whether it runs on this machine. */
  simBootId?: string;
  /** The simulator's process id on that machine (`GET /version` → `loadlab_pid`). */
  simPid?: number;
  /** `sim`, `vllm` (vLLM series or an `owned_by: vllm` card), or `other`. */
  kind: 'sim' | 'vllm' | 'other';
  /** What could not be read, one line each (e.g. `GET /metrics: HTTP 404`). */
  problems: string[];
  /** HTTP status of `GET /v1/models` when it answered with another status than 200 (401/403: credentials). */
  modelsStatus?: number;
}

/** Options of `recordEffectiveConfig`. */
export interface EffectiveConfigOptions {
  /** Bearer token for `/v1/models` when vLLM runs with `--api-key`. */
  apiKey?: string;
  /** Extra headers sent on every probe (`--header`, e.g. a gateway's key header). */
  headers?: Record<string, string>;
  /** Per-endpoint timeout, ms; default 5000. */
  timeoutMs?: number;
}

function parseJson(r: GetResult | undefined): Record<string, unknown> | undefined {
  if (r?.status !== 200) return undefined;
  try {
    const v: unknown = JSON.parse(r.text);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `process_start_time_seconds`, else the earliest `vllm:*_created` sample; undefined if neither. */
function startedAtS(families: readonly MetricFamily[]): number | undefined {
  let earliest: number | undefined;
  for (const f of families) {
    for (const x of f.samples) {
      if (x.name === 'process_start_time_seconds' && Number.isFinite(x.value)) return x.value;
      if (x.name.startsWith('vllm:') && x.name.endsWith('_created') && Number.isFinite(x.value))
        earliest = Math.min(earliest ?? x.value, x.value);
    }
  }
  return earliest;
}

/**
 * Reads `GET /version`, `GET /v1/models` and `GET /metrics` of `baseUrl` (a trailing `/v1` is
 * fine). Never throws: what failed is listed in `problems`.
 */
export async function recordEffectiveConfig(baseUrl: string, opts: EffectiveConfigOptions = {}): Promise<EffectiveConfig> {
  const root = serverRoot(baseUrl);
  const problems: string[] = [];
  const get = (path: string) =>
    httpGet(`${root}${path}`, { timeoutMs: opts.timeoutMs ?? 5000, apiKey: opts.apiKey, headers: opts.headers }).then(
      (r) => {
        if (r.status !== 200) problems.push(`GET ${path}: HTTP ${r.status}`);
        return r;
      },
      (err: Error) => {
        problems.push(`GET ${path}: ${err.message}`);
        return undefined;
      },
    );
  const [ver, mod, met] = await Promise.all([get('/version'), get('/v1/models'), get('/metrics')]);
  const out: EffectiveConfig = {
    baseUrl: root,
    reachable: !!(ver || mod || met),
    models: [],
    cache: {},
    simulated: false,
    kind: 'other',
    engine: 'unknown',
    engineEvidence: 'not read',
    problems,
  };
  if (mod && mod.status !== 200) out.modelsStatus = mod.status;

  const v = parseJson(ver);
  if (typeof v?.version === 'string') out.version = v.version;
  const lp = v?.loadlab_profile as Record<string, unknown> | undefined;
  if (lp && typeof lp.id === 'string' && typeof lp.status === 'string') {
    out.simProfile = { id: lp.id, status: lp.status };
    if (typeof lp.gpu === 'string') out.simProfile.gpu = lp.gpu;
    if (typeof lp.model === 'string') out.simProfile.model = lp.model;
  }
  if (Number.isInteger(v?.loadlab_engine_cpu)) out.simEngineCpu = v?.loadlab_engine_cpu as number;
  if (typeof v?.loadlab_boot_id === 'string') out.simBootId = v.loadlab_boot_id;
  if (Number.isInteger(v?.loadlab_pid)) out.simPid = v?.loadlab_pid as number;
  const m = parseJson(mod);
  const cards = m && Array.isArray(m.data) ? (m.data as Array<Record<string, unknown>>) : [];
  out.models = cards.map((c) => {
    const card: ModelCard = { id: String(c.id) };
    if (typeof c.root === 'string') card.root = c.root;
    if (typeof c.max_model_len === 'number') card.maxModelLen = c.max_model_len;
    if (typeof c.parent === 'string') card.parent = c.parent;
    if (typeof c.owned_by === 'string') card.ownedBy = c.owned_by;
    return card;
  });

  let families: MetricFamily[] = [];
  if (met?.status === 200) {
    try {
      families = parsePrometheus(met.text);
    } catch (err) {
      problems.push(`GET /metrics: ${(err as Error).message}`);
    }
  }
  const started = startedAtS(families);
  if (started !== undefined) out.startedAtS = started;
  out.cacheConfig = cacheConfigInfo(families);
  if (!out.cacheConfig) delete out.cacheConfig;
  out.cache = summarizeCacheConfig(out.cacheConfig);

  out.simulated =
    [ver, mod, met].some((r) => r?.headers['x-loadlab-sim'] !== undefined) ||
    v?.loadlab_sim !== undefined ||
    m?.loadlab_sim !== undefined ||
    cards.some((c) => c.loadlab_sim !== undefined) ||
    families.some((f) => f.name.startsWith('loadlab:') || f.name.startsWith('loadlab_sim'));
  const vllmLike = families.some((f) => f.name.startsWith('vllm:')) || cards.some((c) => c.owned_by === 'vllm');
  out.kind = out.simulated ? 'sim' : vllmLike ? 'vllm' : 'other';
  const found =
    out.kind === 'other'
      ? { engine: 'unknown' as const, evidence: 'not a vLLM server' }
      : detectEngine(families, out.version, out.simulated);
  out.engine = found.engine;
  out.engineEvidence = found.evidence;
  return out;
}
