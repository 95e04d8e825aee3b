/**
 * One small GET with a hard timeout, for the server-side probes (`/metrics`, `/health`,
 * `/version`, `/v1/models`), through ./fetch-text.ts (the lean pool for `http:`); the body is always read or the
 * request aborted, and the timeout timer is always cleared, so nothing lingers after the call settles.
 */
import { fetchText, type TextResponse } from './fetch-text';
import type { StreamDispatcher } from './h1-pool';
import { serverRoot, targetHeaders } from './url';

/** Re-exported from `src/client/url.ts`, its one home (older imports use this path). */
export { serverRoot };

/** A completed GET: {@link TextResponse}, the shape every probe's answer has. */
export type GetResult = TextResponse;

/** Options of `httpGet`. */
export interface GetOptions {
  /** Give up after this many ms (connect + headers + body); default 2000. */
  timeoutMs?: number;
  /** Sent as `Authorization: Bearer <apiKey>` (vLLM `--api-key`). */
  apiKey?: string;
  /** Extra headers (e.g. `--header`s, `accept`), sent after the key (`targetHeaders`: they may replace it). */
  headers?: Record<string, string>;
  /** Aborts the request early (e.g. a sampler being stopped). */
  signal?: AbortSignal;
  /** A dedicated dispatcher for the URL's origin (`dispatcherFor` of ./fetch-text.ts); default one shared per origin. */
  dispatcher?: StreamDispatcher;
}

/**
 * GETs `url` and reads the body as text. Rejects with an Error whose message says what happened
 * (`timed out after 2000 ms`, `connection refused`, …); any HTTP status resolves.
 */
export async function httpGet(url: string, opts: GetOptions = {}): Promise<GetResult> {
  const timeoutMs = opts.timeoutMs ?? 2000;
  const ac = new AbortController();
  const onAbort = () => ac.abort(opts.signal?.reason);
  if (opts.signal?.aborted) ac.abort(opts.signal.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  try {
    const headers = targetHeaders({ apiKey: opts.apiKey, headers: opts.headers });
    return await fetchText(url, { headers, signal: ac.signal, dispatcher: opts.dispatcher });
  } catch (err) {
    if (timedOut) throw new Error(`GET ${url} timed out after ${timeoutMs} ms`);
    if (opts.signal?.aborted) throw new Error(`GET ${url} was aborted`);
    const e = err as Error & { code?: string; cause?: { code?: string } };
    const code = e.code ?? e.cause?.code;
    const what =
      code === 'ECONNREFUSED' ? 'connection refused (nothing is listening there)' : `${code ? `${code}: ` : ''}${e.message}`;
    throw new Error(`GET ${url} failed: ${what}`);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}
