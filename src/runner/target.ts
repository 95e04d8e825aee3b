/**
 * Checking the target before sending load: is anything listening, and does it serve the model?
 * A misconfigured target is the one failure that throws (one clear message naming the fix)
 * instead of becoming N identical failed records.
 */

import { probeTarget, type TargetProbe } from '../observe/probe';
import { serverRoot } from '../client/url';
import { explainModelsAnswer, explainNoModels } from './target-diagnosis';

/** How the target-check messages name the credentials (the library's option, then the CLI flag). */
export const CREDENTIALS_HINT =
  'apiKey (--api-key) or LOADLAB_API_KEY, or the header a gateway wants as headers (--header KEY=VALUE)';

/** A checked target. */
export interface ResolvedTarget {
  /** Server root: no trailing slash, no trailing `/v1`. */
  rootUrl: string;
  /** The model to put in requests. */
  model: string;
  probe: TargetProbe;
}

/**
 * Throw a TypeError naming the fix unless `baseUrl` is an `http(s)://host[:port][/path]` URL
 * without credentials. Returns the server root (a trailing `/v1` is accepted and dropped).
 */
export function checkBaseUrl(baseUrl: unknown): string {
  if (typeof baseUrl !== 'string' || baseUrl.length === 0) {
    throw new TypeError(`baseUrl is required: the server root, e.g. 'http://127.0.0.1:8000', got ${String(baseUrl)}`);
  }
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new TypeError(`baseUrl '${baseUrl}' is not a URL; write it like 'http://127.0.0.1:8000'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new TypeError(`baseUrl must start with http:// or https://, got '${baseUrl}'`);
  }
  if (u.username || u.password) {
    throw new TypeError('baseUrl must not contain credentials; pass the key as apiKey (--api-key) instead');
  }
  return serverRoot(baseUrl);
}

/**
 * Probe the target (every probe carries `apiKey` and `headers`) and pick the model.
 * - Nothing answers → Error naming the URL, the network error and how to start a server.
 * - `/v1/models` answers 401/403 → Error naming `apiKey`/`--api-key` and `headers`/`--header`,
 *   even when `model` is given: every request would be refused the same way.
 * - `/v1/models` answers and `model` is not in it → Error listing the served models.
 * - No `model` given → `/v1/models` `data[0].id` (as `vllm bench serve`); if the list is not
 *   available → Error asking for `model`.
 */
export async function resolveTarget(
  baseUrl: string,
  opts: { model?: string; apiKey?: string; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<ResolvedTarget> {
  const rootUrl = checkBaseUrl(baseUrl);
  const probe = await probeTarget(rootUrl, opts.apiKey, {
    model: opts.model,
    timeoutMs: opts.timeoutMs,
    ...(opts.headers ? { headers: opts.headers } : {}),
  });
  if (!probe.reachable) {
    throw new Error(
      `Cannot reach the server at ${rootUrl} (${probe.error ?? 'no answer'}). ` +
        'Start it first (a simulated vLLM: `loadlab sim --port 8000`; a real one: `vllm serve <model>`), ' +
        'or fix the base URL (--base-url / baseUrl).',
    );
  }
  if (probe.modelsStatus === 401 || probe.modelsStatus === 403) {
    throw new Error(
      `${explainModelsAnswer(rootUrl, { status: probe.modelsStatus, text: '' }, !!opts.apiKey, CREDENTIALS_HINT)}.`,
    );
  }
  const served = probe.models;
  if (opts.model !== undefined) {
    if (served && served.length > 0 && !served.includes(opts.model)) {
      throw new Error(
        `Model '${opts.model}' is not served at ${rootUrl}. It serves: ${served.join(', ')}. ` +
          `Pass one of these as model (--model), e.g. '${served[0]}', or leave it out to use the first.`,
      );
    }
    return { rootUrl, model: opts.model, probe };
  }
  if (!served || served.length === 0) {
    // Say what is wrong (a path, an HTML page, a refused key) before guessing at an API key.
    const why = await explainNoModels(baseUrl, opts.apiKey, CREDENTIALS_HINT, opts.headers);
    if (why) throw new Error(`${why}. Or pass the model name as model (--model).`);
    throw new Error(
      `${rootUrl} did not list its models (GET /v1/models gave no data${opts.apiKey ? '' : '; does it need an API key?'}). ` +
        'Pass the model name as model (--model).',
    );
  }
  return { rootUrl, model: served[0], probe };
}
