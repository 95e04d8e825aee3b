/**
 * When may a saved load point stand in for a new measurement? Only when it was measured with the
 * same load against the same server: same kind (LoadLab's simulator, vLLM, other), same
 * `simulated` mark, same server version and model, the same effective configuration the server
 * reported (`max_model_len`, `vllm:cache_config_info`) and the same requested flags. Anything else
 * (a point measured on the simulator, then `LOADLAB_BASE_URL` set to a 4090) is measured again,
 * so a simulated number is never shown as a real one. Pure. Lessons (`src/lesson/reuse.ts`, a
 * re-export) and sweeps (`src/sweep/`) share this rule, so it lives below both.
 */
import type { RunManifest } from '../run/manifest';
import type { TargetProbe } from '../observe/probe';

/** The server a point would be measured against now, as `probeTarget` and the lesson see it. */
export interface CurrentServer {
  probe: TargetProbe;
  /** The model requests will name. */
  model: string;
  /** Flags requested for this point (`{}` = the server's defaults). */
  flags?: Record<string, unknown>;
  /** `sim`, `launched` or `external`, when known. */
  mode?: string;
}

/** The load a point is measured with, as the manifest writes it (`load.options`). */
export interface PointLoad {
  label: string;
  requests: number;
  warmup: number;
}

/** JSON with sorted keys and `undefined` fields dropped, so equal objects give equal strings. */
export function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'undefined';
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`)
    .join(',')}}`;
}

/** `simulated LoadLab server 0.19.0` / `vLLM server (not simulated) 0.11.0` / `other server`, for messages. */
export function describeServer(t: { kind?: string; simulated?: boolean; serverVersion?: string }): string {
  const what = t.simulated
    ? 'simulated LoadLab server'
    : t.kind === 'vllm'
      ? 'vLLM server (not simulated)'
      : t.kind === 'sim'
        ? 'LoadLab simulator'
        : 'other server';
  return t.serverVersion ? `${what} ${t.serverVersion}` : what;
}

/** The simulator profile of a saved point that names none (saved before profiles were files). */
const PRE_PROFILE_DEFAULT = 'rtx4090-qwen2.5-7b-instruct-gptq-int4';

/**
 * Why the server that measured `saved` is not the server answering now, one phrase per difference
 * (empty when it is the same): kind, `simulated`, version, model, simulator profile, target mode, `max_model_len`, every
 * `vllm:cache_config_info` label and the requested flags.
 */
export function savedServerDiffers(saved: RunManifest, now: CurrentServer): string[] {
  const diffs: string[] = [];
  const t = (saved.target ?? {}) as unknown as Record<string, unknown>;
  const p = now.probe;
  const server = (x: Record<string, unknown>) =>
    describeServer(x as { kind?: string; simulated?: boolean; serverVersion?: string });
  const nowServer = { kind: p.kind, simulated: p.simulated, serverVersion: p.serverVersion };
  if (t.kind !== p.kind || t.simulated !== p.simulated || t.serverVersion !== p.serverVersion) {
    diffs.push(`a ${server(t)} (now a ${server(nowServer)})`);
  }
  if (t.model !== now.model) diffs.push(`model ${String(t.model)} (now ${now.model})`);
  if (t.simulated === true && p.simulated) {
    // Before profiles were files (src/sim/engine/profile-file.ts) every simulator ran the RTX 4090 one.
    const was = (t.simProfile as { id?: string } | undefined)?.id ?? PRE_PROFILE_DEFAULT;
    const is = p.simProfile?.id ?? PRE_PROFILE_DEFAULT;
    if (was !== is) diffs.push(`simulator profile ${was} (now ${is})`);
  }
  if (t.mode !== undefined && now.mode !== undefined && t.mode !== now.mode)
    diffs.push(`target mode ${String(t.mode)} (now ${now.mode})`);
  if (t.maxModelLen !== p.maxModelLen) diffs.push(`max_model_len ${String(t.maxModelLen)} (now ${String(p.maxModelLen)})`);
  const wasCache = (t.cacheConfig ?? undefined) as Record<string, string> | undefined;
  const nowCache = p.cacheConfig;
  if (!wasCache !== !nowCache) diffs.push(`${wasCache ? 'a' : 'no'} vllm:cache_config_info (now ${nowCache ? 'one' : 'none'})`);
  else if (wasCache && nowCache) {
    for (const k of new Set([...Object.keys(wasCache), ...Object.keys(nowCache)])) {
      if (wasCache[k] !== nowCache[k]) diffs.push(`${k} ${String(wasCache[k])} (now ${String(nowCache[k])})`);
    }
  }
  const wasFlags = stableJson(t.flags ?? {});
  const nowFlags = stableJson(now.flags ?? {});
  if (wasFlags !== nowFlags) diffs.push(`server flags ${wasFlags} (now ${nowFlags})`);
  return diffs;
}

/**
 * Why the saved point `saved` is not the point about to be measured, one phrase per difference
 * (`''` when it may be reused). Compares the load, the server's identity and its effective config.
 */
export function savedPointDiffers(saved: RunManifest, now: CurrentServer, load: PointLoad): string {
  const diffs: string[] = [];
  const was = (saved.load?.options ?? {}) as Record<string, unknown>;
  for (const [k, v] of Object.entries(load)) if (was[k] !== v) diffs.push(`${k} ${String(was[k])} (now ${String(v)})`);
  return [...diffs, ...savedServerDiffers(saved, now)].join(', ');
}
