/**
 * The two facts every caller derives from a target the same way: its server root (where vLLM
 * serves `/health`, `/metrics`, `/version`, `/tokenize`), and the API key to send.
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
