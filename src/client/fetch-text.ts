/**
 * One small request whose answer is read whole as text: the probes (`/health`, `/metrics`, `/version`,
 * `/tokenize`, the simulator's send log). It goes through the same dispatchers as the streaming client:
 * the lean pool (./h1-pool.ts) for `http:`, undici's `Pool` for `https:` or with `LOADLAB_HTTP_CLIENT=undici`
 * (./undici-pool.ts, loaded only then). So a run against a local server never loads undici, about 50 ms of
 * CPU and a WebAssembly compile per process (bench/README.md §23).
 */
import type { Dispatcher } from 'undici';
import { H1Pool, type StreamDispatcher } from './h1-pool';
import { lazyUndiciPool } from './undici-pool';

/** A completed request: any HTTP status. */
export interface TextResponse {
  status: number;
  /** Response headers, lower-case names. */
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Options of {@link fetchText}. */
export interface FetchTextOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Aborting it rejects with its reason. */
  signal?: AbortSignal;
  /** A dispatcher for the URL's origin (from {@link dispatcherFor}); default one shared per origin. */
  dispatcher?: StreamDispatcher;
}

/** Sockets per origin of the shared dispatchers (undici's global agent has no limit). */
const SHARED_CONNECTIONS = 16;

/** `LOADLAB_HTTP_CLIENT`: `lean` (or unset) for the lean pool on `http:`, `undici` for undici everywhere. */
function httpClientChoice(): 'lean' | 'undici' {
  const v = process.env.LOADLAB_HTTP_CLIENT;
  if (v === undefined || v === '' || v === 'lean') return 'lean';
  if (v === 'undici') return 'undici';
  throw new TypeError(`LOADLAB_HTTP_CLIENT must be 'lean' (the default) or 'undici', got '${v}'; unset it for the default`);
}

/**
 * A dispatcher for `origin`: the lean pool for `http:`, else undici's (loaded at its first request).
 * @throws TypeError when `LOADLAB_HTTP_CLIENT` is set to anything but `lean` or `undici`.
 */
export function dispatcherFor(origin: string, connections: number): StreamDispatcher {
  if (origin.startsWith('http:') && httpClientChoice() === 'lean') return new H1Pool(origin, { connections });
  return lazyUndiciPool(origin, connections);
}

const shared = new Map<string, StreamDispatcher>();

/** The dispatcher shared by every probe to `origin` (keep-alive; idle sockets never keep the process alive). */
function sharedFor(origin: string): StreamDispatcher {
  const key = `${httpClientChoice()} ${origin}`;
  let d = shared.get(key);
  if (d === undefined) shared.set(key, (d = dispatcherFor(origin, SHARED_CONNECTIONS)));
  return d;
}

/**
 * Send one request to `url` and read its body as UTF-8 text. Rejects with the socket's or the abort's error (its
 * `code` as undici's: `ECONNREFUSED`, `UND_ERR_SOCKET`, …); any HTTP status resolves.
 */
export function fetchText(url: string, opts: FetchTextOptions = {}): Promise<TextResponse> {
  const u = new URL(url);
  const d = opts.dispatcher ?? sharedFor(u.origin);
  const { signal } = opts;
  return new Promise<TextResponse>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const out: TextResponse = { status: 0, headers: {}, text: '' };
    const parts: Buffer[] = [];
    let controller: Dispatcher.DispatchController | undefined;
    let done = false;
    // Not yet on a socket (connecting, or queued): reject now; `onRequestStart` then aborts it before it is written.
    const onAbort = () => (controller ? controller.abort(signal?.reason) : finish(signal?.reason));
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve({ ...out, text: Buffer.concat(parts).toString('utf8') });
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (c) => {
        controller = c;
        if (done || signal?.aborted) c.abort(signal?.reason ?? new Error('aborted'));
      },
      onResponseStart: (_c, status, headers) => {
        out.status = status;
        out.headers = headers as TextResponse['headers'];
      },
      onResponseData: (_c, chunk) => {
        parts.push(Buffer.from(chunk)); // the lean pool's views are valid only during the call
      },
      onResponseEnd: () => finish(),
      onResponseError: (_c, err) => finish(err),
    };
    try {
      d.dispatch(
        { path: `${u.pathname}${u.search}`, method: opts.method ?? 'GET', headers: opts.headers ?? {}, body: opts.body },
        handler,
      );
    } catch (err) {
      finish(err as Error);
    }
  });
}
