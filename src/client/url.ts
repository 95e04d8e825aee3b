/**
 * The facts every caller derives from a target the same way: its server root (where vLLM
 * serves `/health`, `/metrics`, `/version`, `/tokenize`), the API key, and the header set to send.
 */

/**
 * The server root of a base URL: trailing slashes and one trailing `/v1` removed, since vLLM
 * serves `/metrics`, `/health`, `/version` and `/tokenize` at the root and the OpenAI routes under
 * `/v1` (vllm/entrypoints/openai/api_server.py). `http://h:8000/v1/` → `http://h:8000`. Any other
 * path is kept (a reverse proxy may mount the server under one). Pure: no URL validation.
 */
export function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '').replace(/\/+$/, '');
}

/** The environment variables read by {@link resolveApiKey}, in order. */
export const API_KEY_ENV = ['LOADLAB_API_KEY', 'OPENAI_API_KEY'] as const;

/**
 * The Bearer token to send: `apiKey` when given (an empty string means "send none"), else
 * `$LOADLAB_API_KEY`, else `$OPENAI_API_KEY`, else undefined. Empty variables count as unset.
 * @param env defaults to `process.env`.
 */
export function resolveApiKey(apiKey?: string, env: Record<string, string | undefined> = process.env): string | undefined {
  if (apiKey !== undefined) return apiKey === '' ? undefined : apiKey;
  for (const name of API_KEY_ENV) {
    const v = env[name];
    if (v) return v;
  }
  return undefined;
}

/** What every request to a target carries besides its own headers: the key and the user's headers. */
export interface TargetAuth {
  /** Bearer token, already resolved (see {@link resolveApiKey}); empty or undefined sends none. */
  apiKey?: string;
  /** Extra headers (`--header KEY=VALUE`, e.g. a gateway's key or routing header), sent as given. */
  headers?: Record<string, string>;
}

/**
 * The one header set every call to a target sends (generation requests, `/v1/models`,
 * `/version`, `/metrics`, `/tokenize`): `authorization: Bearer <apiKey>` when a key is set, then
 * the extra headers (names lower-cased; they may replace `authorization`). `vllm bench serve`
 * sends its `--header`s on `/v1/models` and the requests (vllm/benchmarks/serve.py
 * `get_first_model_from_server`, `benchmark`) but not on `/tokenize` or `/metrics`; LoadLab sends
 * them everywhere, so a gateway that checks a header lets every call through. Pure.
 */
export function targetHeaders(auth: TargetAuth = {}): Record<string, string> {
  const out: Record<string, string> = {};
  if (auth.apiKey) out.authorization = `Bearer ${auth.apiKey}`;
  if (auth.headers) for (const k of Object.keys(auth.headers)) out[k.toLowerCase()] = auth.headers[k];
  return out;
}
