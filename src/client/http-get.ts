/**
 * One small GET with a hard timeout, for the server-side probes (`/metrics`, `/health`,
 * `/version`, `/v1/models`). Uses undici; the body is always read or destroyed, and the
 * timeout timer is always cleared, so nothing lingers after the call settles.
 */
import type { Dispatcher } from 'undici';
import { serverRoot, targetHeaders } from './url';

/** Re-exported from `src/client/url.ts`, its one home (older imports use this path). */
export { serverRoot };

/** A completed GET. */
export interface GetResult {
  status: number;
  /** Response headers, lower-case names. */
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

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
  /** undici dispatcher (a dedicated Pool); default the global one. */
  dispatcher?: Dispatcher;
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
    // undici loads at the first GET, not with this module: a worker thread that imports it and never calls it
    // (a run's health check) is spared about 50 ms of CPU (bench/README.md §23).
    const { request } = await import('./undici');
    const res = await request(url, { method: 'GET', headers, signal: ac.signal, dispatcher: opts.dispatcher });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
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
