/**
 * Why a base URL gave no model list, in words that name the fix. `resolveTarget` only knows that
 * `GET /v1/models` gave no data; this looks at that answer once more (status, content type, the
 * URL's path) so the user is not asked about an API key when the real cause is a wrong URL.
 */

import { serverRoot } from '../client/url';
import { httpGet } from '../client/http-get';

/** The cause of an empty `GET /v1/models`, judged from one response (pure; exported for tests). */
export function explainModelsAnswer(
  baseUrl: string,
  answer: { status: number; contentType?: string; text: string },
  hasApiKey: boolean,
  keyHint = '--api-key or LOADLAB_API_KEY',
): string | undefined {
  const root = serverRoot(baseUrl);
  const u = new URL(root);
  const hasPath = u.pathname !== '/' && u.pathname !== '';
  const html = /html/i.test(answer.contentType ?? '') || /^\s*<(!doctype|html)/i.test(answer.text);
  if (answer.status === 401 || answer.status === 403) {
    return hasApiKey
      ? `${root} refused the API key (HTTP ${answer.status} on GET /v1/models); check the key given by ${keyHint}`
      : `${root} wants an API key (HTTP ${answer.status} on GET /v1/models); pass it with ${keyHint}`;
  }
  if (html) {
    return (
      `${root} answered GET /v1/models with an HTML page (HTTP ${answer.status}), so it is not a vLLM server ` +
      `(a web app, a proxy's login page?); give the address where vLLM listens, e.g. http://127.0.0.1:8000`
    );
  }
  if (hasPath && (answer.status === 404 || answer.status === 405)) {
    return (
      `the base URL has a path (${u.pathname}), and ${root}/v1/models does not exist (HTTP ${answer.status}); ` +
      `give the server root instead, e.g. ${u.origin}`
    );
  }
  if (answer.status === 404) {
    return `${root} has no /v1/models (HTTP 404): it is not an OpenAI-compatible server, or the port is wrong`;
  }
  return undefined;
}

/**
 * Fetch `GET <root>/v1/models` once (with the run's key and `headers`) and explain why it lists no
 * model, or undefined when the answer gives no clue (then the caller's own message stands). Never throws.
 */
export async function explainNoModels(
  baseUrl: string,
  apiKey?: string,
  keyHint?: string,
  headers?: Record<string, string>,
): Promise<string | undefined> {
  try {
    const res = await httpGet(`${serverRoot(baseUrl)}/v1/models`, { timeoutMs: 5000, ...(apiKey ? { apiKey } : {}), headers });
    const ct = res.headers['content-type'];
    return explainModelsAnswer(
      baseUrl,
      { status: res.status, contentType: Array.isArray(ct) ? ct[0] : ct, text: res.text },
      !!apiKey,
      keyHint,
    );
  } catch {
    return undefined;
  }
}
