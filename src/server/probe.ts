/**
 * What is at a base URL: vLLM, LoadLab's simulator, or another OpenAI-compatible server.
 * Reads `GET /version`, `GET /v1/models` and `GET /metrics` (each optional), so a run's
 * manifest can say what it measured. The simulator marks itself with an `x-loadlab-sim`
 * response header and/or `loadlab_sim` fields; a probe never guesses "simulated" otherwise.
 */

import { Agent, request, type Dispatcher } from 'undici';

/** What `probeTarget` found. Fields are absent when the server did not say. */
export interface TargetProbe {
  kind: 'sim' | 'vllm' | 'other';
  /** True only when the server said it is LoadLab's simulator. */
  simulated: boolean;
  /** Any of the probed endpoints answered over HTTP. */
  reachable: boolean;
  /** The network error when nothing answered, e.g. `ECONNREFUSED`. */
  error?: string;
  /** `GET /version` → `version`. */
  serverVersion?: string;
  /** Served model ids (`GET /v1/models` → `data[].id`), when that endpoint answered. */
  models?: string[];
  /** The asked model when served, else the first served one. */
  model?: string;
  /** `max_model_len` of that model's card. */
  maxModelLen?: number;
  /** Labels of `vllm:cache_config_info` (block_size, num_gpu_blocks, enable_prefix_caching, …). */
  cacheConfig?: Record<string, string>;
}

/** Options of `probeTarget`. */
export interface ProbeOptions {
  /** Prefer this model's card for `model` / `maxModelLen`. */
  model?: string;
  /** Per-endpoint timeout, ms; default 5000. */
  timeoutMs?: number;
}

interface Got {
  status: number;
  sim: boolean;
  text: string;
}

function errorName(err: unknown): string {
  const e = err as { name?: string; code?: string; message?: string; errors?: Array<{ code?: string }> };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timeout';
  return e?.code ?? e?.errors?.[0]?.code ?? e?.message ?? String(err);
}

async function get(
  dispatcher: Dispatcher,
  url: string,
  apiKey: string | undefined,
  timeoutMs: number,
): Promise<Got | { error: string }> {
  try {
    const headers: Record<string, string> = {};
    if (apiKey) headers.authorization = `Bearer ${apiKey}`;
    const res = await request(url, { dispatcher, headers, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.body.text();
    return { status: res.statusCode, sim: res.headers['x-loadlab-sim'] !== undefined, text };
  } catch (err) {
    return { error: errorName(err) };
  }
}

function json(g: Got | { error: string }): Record<string, unknown> | undefined {
  if (!('status' in g) || g.status < 200 || g.status >= 300) return undefined;
  try {
    const v = JSON.parse(g.text);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Parse a Prometheus label set `k="v",k2="a \"quoted\" v"` (with or without the braces).
 * Handles `\\`, `\"` and `\n` escapes.
 */
export function parsePromLabels(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  const body = s.trim().replace(/^\{/, '').replace(/\}$/, '');
  const re = /\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/gy;
  let m: RegExpExecArray | null;
  while ((m = re.exec(body)) !== null) {
    out[m[1]] = m[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return out;
}

/** Labels of the first `vllm:cache_config_info{…}` series in a `/metrics` text, if any. */
export function parseCacheConfig(metricsText: string): Record<string, string> | undefined {
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith('vllm:cache_config_info{')) continue;
    const close = line.lastIndexOf('}');
    if (close < 0) continue;
    return parsePromLabels(line.slice('vllm:cache_config_info'.length, close + 1));
  }
  return undefined;
}

/**
 * Probe `baseUrl` (the server root; a trailing `/v1` is accepted). Never throws: an
 * unreachable server gives `{ reachable: false, error }`.
 */
export async function probeTarget(baseUrl: string, apiKey?: string, opts: ProbeOptions = {}): Promise<TargetProbe> {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  const timeoutMs = opts.timeoutMs ?? 5000;
  // The same undici the client uses: its HTTP parser (WebAssembly, compiled once per process)
  // is then ready before a run's clock starts, instead of stalling the first requests.
  const agent = new Agent({ connections: 3 });
  const [ver, mod, met] = await Promise.all([
    get(agent, `${root}/version`, apiKey, timeoutMs),
    get(agent, `${root}/v1/models`, apiKey, timeoutMs),
    get(agent, `${root}/metrics`, apiKey, timeoutMs),
  ]).finally(() => agent.close());
  const answered = [ver, mod, met].filter((g): g is Got => 'status' in g);
  if (answered.length === 0) {
    return { kind: 'other', simulated: false, reachable: false, error: (ver as { error: string }).error };
  }
  const probe: TargetProbe = { kind: 'other', simulated: false, reachable: true };
  const v = json(ver);
  const m = json(mod);
  const metricsText = 'status' in met && met.status === 200 ? met.text : '';
  if (typeof v?.version === 'string') probe.serverVersion = v.version;
  const cards = Array.isArray(m?.data) ? (m!.data as Array<Record<string, unknown>>) : undefined;
  if (cards) {
    probe.models = cards.map((c) => String(c.id));
    const card = cards.find((c) => c.id === opts.model) ?? cards[0];
    if (card) {
      probe.model = String(card.id);
      if (typeof card.max_model_len === 'number') probe.maxModelLen = card.max_model_len;
    }
  }
  const cache = parseCacheConfig(metricsText);
  if (cache) probe.cacheConfig = cache;
  probe.simulated =
    answered.some((g) => g.sim) ||
    v?.loadlab_sim !== undefined ||
    m?.loadlab_sim !== undefined ||
    (cards ?? []).some((c) => c.loadlab_sim !== undefined) ||
    /^loadlab[:_]sim/m.test(metricsText);
  const vllmLike =
    (cards ?? []).some((c) => c.owned_by === 'vllm') || metricsText.includes('vllm:') || probe.serverVersion !== undefined;
  probe.kind = probe.simulated ? 'sim' : vllmLike ? 'vllm' : 'other';
  return probe;
}
