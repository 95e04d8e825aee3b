/**
 * What is at a base URL, in the shape a run's manifest wants: vLLM, LoadLab's simulator, or
 * another OpenAI-compatible server. A thin view over `recordEffectiveConfig` (which reads
 * `/version`, `/v1/models` and `/metrics` with the real Prometheus parser); a probe never
 * guesses "simulated" unless the server says so.
 */
import { recordEffectiveConfig } from './effective-config';
import type { ServerEngine } from './engine';
import type { SimProfileRef } from '../run/manifest';

/** What `probeTarget` found. Fields are absent when the server did not say. */
export interface TargetProbe {
  kind: 'sim' | 'vllm' | 'other';
  /** True only when the server said it is LoadLab's simulator. */
  simulated: boolean;
  /** Any of the probed endpoints answered over HTTP. */
  reachable: boolean;
  /** Why nothing answered, e.g. `connection refused (nothing is listening there)`. */
  error?: string;
  /** `GET /version` → `version`. */
  serverVersion?: string;
  /** vLLM's engine, V0 or V1 (`engine.ts`; the simulator follows V1); absent when nothing answered. */
  engine?: ServerEngine;
  /** Why `engine` is what it is, e.g. `metrics carry an engine label`. */
  engineEvidence?: string;
  /** Served model ids (`GET /v1/models` → `data[].id`), when that endpoint answered. */
  models?: string[];
  /** The asked model when served, else the first served one. */
  model?: string;
  /** `max_model_len` of that model's card. */
  maxModelLen?: number;
  /** Labels of `vllm:cache_config_info` (block_size, num_gpu_blocks, enable_prefix_caching, …). */
  cacheConfig?: Record<string, string>;
  /** HTTP status of `GET /v1/models` when not 200 (401/403: the server wants credentials it did not get). */
  modelsStatus?: number;
  /** LoadLab's simulator only: the profile it runs (`GET /version` → `loadlab_profile`). */
  simProfile?: SimProfileRef;
  /** LoadLab's simulator only: the CPU its engine thread is pinned to (`GET /version` → `loadlab_engine_cpu`). */
  simEngineCpu?: number;
  /** LoadLab's simulator only: its machine's boot id (`GET /version` → `loadlab_boot_id`). */
  simBootId?: string;
  /** LoadLab's simulator only: its process id on that machine (`GET /version` → `loadlab_pid`). */
  simPid?: number;
}

/** Options of `probeTarget`. */
export interface ProbeOptions {
  /** Prefer this model's card for `model` / `maxModelLen`. */
  model?: string;
  /** Per-endpoint timeout, ms; default 5000. */
  timeoutMs?: number;
  /** Extra headers sent on every probe (`--header`: a gateway's key or routing header). */
  headers?: Record<string, string>;
}

/**
 * Probe `baseUrl` (the server root; a trailing `/v1` is accepted). Never throws: an
 * unreachable server gives `{ reachable: false, error }`.
 */
export async function probeTarget(baseUrl: string, apiKey?: string, opts: ProbeOptions = {}): Promise<TargetProbe> {
  const cfg = await recordEffectiveConfig(baseUrl, {
    ...(apiKey ? { apiKey } : {}),
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.headers ? { headers: opts.headers } : {}),
  });
  if (!cfg.reachable) {
    const first = cfg.problems[0] ?? 'no answer';
    return { kind: 'other', simulated: false, reachable: false, error: first.replace(/^GET \S+: (GET \S+ failed: )?/, '') };
  }
  const probe: TargetProbe = { kind: cfg.kind, simulated: cfg.simulated, reachable: true };
  if (cfg.version !== undefined) probe.serverVersion = cfg.version;
  probe.engine = cfg.engine;
  probe.engineEvidence = cfg.engineEvidence;
  if (cfg.models.length) {
    probe.models = cfg.models.map((c) => c.id);
    const card = cfg.models.find((c) => c.id === opts.model) ?? cfg.models[0];
    probe.model = card.id;
    if (card.maxModelLen !== undefined) probe.maxModelLen = card.maxModelLen;
  }
  if (cfg.cacheConfig) probe.cacheConfig = cfg.cacheConfig;
  if (cfg.modelsStatus !== undefined) probe.modelsStatus = cfg.modelsStatus;
  if (cfg.simProfile) probe.simProfile = cfg.simProfile;
  if (cfg.simEngineCpu !== undefined) probe.simEngineCpu = cfg.simEngineCpu;
  if (cfg.simBootId !== undefined) probe.simBootId = cfg.simBootId;
  if (cfg.simPid !== undefined) probe.simPid = cfg.simPid;
  return probe;
}
