/**
 * The streaming client: options checked once, one keep-alive connection pool sized to the concurrency
 * (the lean one of ./h1-pool.ts for `http:`, undici's for `https:`), and `send()` that turns each request
 * into a {@link RequestRecord}.
 */

import { dispatcherFor } from './fetch-text';
import type { StreamDispatcher } from './h1-pool';
import type { RequestRecord, RequestSpec } from '../types';
import { buildHeaders, buildRequestBody, endpointPath, makeRequestIdPrefix } from './body';
import { redact } from './errors';
import { streamRequest } from './request';
import { createStreamTimer } from './timing';
import { resolveApiKey } from './url';
import { type ArrivalClock, type ChunkStamp, checkChunkStamp, chunkClock } from './chunk-stamp';

/** Options of {@link createClient}. */
export interface ClientOptions {
  /** Server root, e.g. `'http://127.0.0.1:8000'`, without `/v1` (a path prefix such as a proxy's is kept). */
  baseUrl: string;
  /** Model name sent in every body (the server's served model name). */
  model: string;
  /**
   * Bearer token. Default `resolveApiKey()` (client/url.ts): `$LOADLAB_API_KEY`, else `$OPENAI_API_KEY`.
   * Only ever sent in the `authorization` header: never stored in a record or a message.
   */
  apiKey?: string;
  /** Most simultaneous connections of the pool; give it the run's concurrency. Default 64. */
  connections?: number;
  /** Whole-request timeout, ms. Default 600_000 (10 min). */
  timeoutMs?: number;
  /** No bytes for this long ends the request with `idle_timeout`, ms. Default 60_000. */
  idleTimeoutMs?: number;
  /** Clock in ms for every stamp; default `() => performance.now()`. Must advance in real ms. */
  now?: () => number;
  /**
   * How arriving chunks are stamped: `'turn'` (default), every chunk read in one event-loop turn at the
   * turn's first reading; `'callback'`, each at its own data callback, as `vllm bench serve` does (./chunk-stamp).
   */
  stamp?: ChunkStamp;
  /**
   * Extra request headers (they cannot replace `x-request-id`). The token of an `authorization`
   * header is redacted from stored messages, as the API key is.
   */
  headers?: Record<string, string>;
}

/** Per-request context given to {@link Client.send}. */
export interface SendContext {
  /** Position in the workload (0-based, warm-up included). */
  index: number;
  /** Warm-up requests are recorded but left out of statistics. Default false. */
  warmup?: boolean;
  /** When the load shape wanted the request sent, ms on the client's clock (`now`). */
  intendedStartMs: number;
  /** `x-request-id` to send; default `loadlab-<8 hex per client>-<index>`. */
  requestId?: string;
  /** Aborting it ends the request with code `aborted`. */
  signal?: AbortSignal;
  /** Conversation id and 0-based turn, copied into the record (multi-turn runs). */
  session?: string;
  turn?: number;
  /** Receives the answer text once, before `send` resolves (multi-turn runs; see `StreamRequestInput.onText`). */
  onText?: (text: string) => void;
}

/** A streaming client for one server and model. */
export interface Client {
  /**
   * Send one streamed request. Never rejects: failures are records with `ok: false` and
   * `error.code`. `startMs` is stamped right before the request is written to a connected socket, so
   * waiting for a free connection or connecting counts in `queueMs`, not in TTFT.
   */
  send(spec: RequestSpec, ctx: SendContext): Promise<RequestRecord>;
  /** Close the connection pool, waiting for requests in flight (abort them first to hurry). */
  close(): Promise<void>;
  /** Server root, as given (no trailing slash). */
  readonly baseUrl: string;
  readonly model: string;
}

function positiveNumber(name: string, v: unknown, example: string, integer = false): void {
  const ok = typeof v === 'number' && Number.isFinite(v) && v > 0 && (!integer || Number.isInteger(v));
  if (!ok)
    throw new TypeError(`${name} must be ${integer ? 'an integer ≥ 1' : 'a number > 0'} such as ${example}, got ${String(v)}`);
}

/** Parse and check `baseUrl`; returns the origin and the path prefix (no trailing slash). */
function parseBaseUrl(baseUrl: unknown): { origin: string; prefix: string; base: string } {
  const fix = `baseUrl must be an http(s) URL such as http://127.0.0.1:8000, got '${String(baseUrl)}'`;
  if (typeof baseUrl !== 'string') throw new TypeError(fix);
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new TypeError(fix);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new TypeError(fix);
  if (u.search || u.hash) throw new TypeError(`baseUrl must not have a query or fragment, got '${baseUrl}'`);
  if (u.username || u.password)
    throw new TypeError('baseUrl must not contain credentials; pass apiKey (or set LOADLAB_API_KEY) instead');
  const prefix = u.pathname.replace(/\/+$/, '');
  if (/\/v1$/.test(prefix)) {
    throw new TypeError(`baseUrl must not end in /v1 (the client adds /v1/...), use '${u.origin}${prefix.slice(0, -3)}'`);
  }
  return { origin: u.origin, prefix, base: u.origin + prefix };
}

/** The client's options, checked and with their defaults filled in. */
interface ClientSettings {
  origin: string;
  prefix: string;
  base: string;
  model: string;
  connections: number;
  timeoutMs: number;
  idleTimeoutMs: number;
  now: () => number;
  dataNow: ArrivalClock;
  apiKey: string | undefined;
  extra: Record<string, string> | undefined;
  /** Redacted from every stored message: the token of an `authorization` header, else the API key. */
  secret: string | undefined;
}

/** Check every option in order, throwing a TypeError that names the fix; fill in the defaults. */
function checkClientOptions(opts: ClientOptions): ClientSettings {
  if (opts === null || typeof opts !== 'object') {
    throw new TypeError("createClient needs options, e.g. createClient({baseUrl: 'http://127.0.0.1:8000', model: 'my-model'})");
  }
  const { origin, prefix, base } = parseBaseUrl(opts.baseUrl);
  if (typeof opts.model !== 'string' || opts.model.length === 0) {
    throw new TypeError("model must be the server's model name such as 'Qwen/Qwen3-0.6B' (see GET /v1/models)");
  }
  const connections = opts.connections ?? 64;
  positiveNumber('connections', connections, '64 (the run concurrency)', true);
  const timeoutMs = opts.timeoutMs ?? 600_000;
  positiveNumber('timeoutMs', timeoutMs, '600000');
  const idleTimeoutMs = opts.idleTimeoutMs ?? 60_000;
  positiveNumber('idleTimeoutMs', idleTimeoutMs, '60000');
  const now = opts.now ?? (() => performance.now());
  if (typeof now !== 'function') throw new TypeError('now must be a function returning ms, such as () => performance.now()');
  if (opts.apiKey !== undefined && typeof opts.apiKey !== 'string') throw new TypeError('apiKey must be a string');
  const apiKey = resolveApiKey(opts.apiKey);
  const extra = opts.headers;
  if (extra !== undefined) {
    for (const [k, v] of Object.entries(extra)) {
      if (typeof v !== 'string') throw new TypeError(`headers['${k}'] must be a string, got ${typeof v}`);
    }
  }
  const authHeader = Object.entries(extra ?? {}).find(([k]) => k.toLowerCase() === 'authorization')?.[1];
  // What goes on the wire: an authorization header replaces the key (targetHeaders).
  const secret = authHeader?.replace(/^Bearer\s+/i, '') || apiKey;
  const dataNow = chunkClock(now, checkChunkStamp(opts.stamp));
  return { origin, prefix, base, model: opts.model, connections, timeoutMs, idleTimeoutMs, now, dataNow, apiKey, extra, secret };
}

/** Send one request on `pool` (a record for every outcome; a spec that cannot be sent is a 4xx record). */
async function sendOne(
  cfg: ClientSettings,
  pool: StreamDispatcher,
  idPrefix: string,
  closed: boolean,
  spec: RequestSpec,
  ctx: SendContext,
): Promise<RequestRecord> {
  const { now, apiKey, secret } = cfg;
  const api = spec?.api ?? 'chat';
  const meta = {
    index: ctx.index,
    requestId: ctx.requestId ?? `${idPrefix}${ctx.index}`,
    warmup: ctx.warmup ?? false,
    tag: spec?.tag,
    intendedStartMs: ctx.intendedStartMs,
    ...(ctx.session !== undefined ? { session: ctx.session, turn: ctx.turn } : {}),
  };
  const notSent = (code: 'http_4xx' | 'aborted', message: string): RequestRecord => {
    const timer = createStreamTimer(api, now);
    timer.sent();
    timer.fail(code, redact(message, secret));
    return timer.toRecord(meta);
  };
  if (closed) return notSent('aborted', 'client is closed; create a new one with createClient()');
  let body: string;
  try {
    body = JSON.stringify(buildRequestBody(spec, cfg.model));
  } catch (err) {
    // A spec the server would reject with a 400: recorded as such without sending it.
    return notSent('http_4xx', `request not sent: ${err instanceof Error ? err.message : String(err)}`);
  }
  return streamRequest({
    dispatcher: pool,
    origin: cfg.origin,
    path: cfg.prefix + endpointPath(api),
    headers: buildHeaders({ requestId: meta.requestId, apiKey, headers: cfg.extra }),
    body,
    api,
    now,
    dataNow: cfg.dataNow,
    timeoutMs: cfg.timeoutMs,
    idleTimeoutMs: cfg.idleTimeoutMs,
    signal: ctx.signal,
    secret,
    meta,
    ...(ctx.onText ? { onText: ctx.onText } : {}),
  });
}

/**
 * Create a streaming client. Checks the options at once and throws a TypeError naming the fix,
 * e.g. `baseUrl must be an http(s) URL such as http://127.0.0.1:8000, got 'foo'`.
 */
export function createClient(opts: ClientOptions): Client {
  const cfg = checkClientOptions(opts);
  const { now, secret } = cfg;
  const pool = dispatcherFor(cfg.origin, cfg.connections); // the lean pool for http:, undici's for https:
  const idPrefix = makeRequestIdPrefix();
  let closed = false;

  return {
    send: (spec, ctx) =>
      sendOne(cfg, pool, idPrefix, closed, spec, ctx).catch((err: unknown) => {
        // Unreachable by design; kept so send() can never reject.
        const timer = createStreamTimer(spec?.api ?? 'chat', now);
        timer.sent();
        timer.fail('connection_reset', redact(`internal client error: ${String(err)}`, secret));
        return timer.toRecord({
          index: ctx?.index ?? -1,
          requestId: ctx?.requestId ?? '',
          intendedStartMs: ctx?.intendedStartMs ?? NaN,
        });
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      await pool.close();
    },
    baseUrl: cfg.base,
    model: cfg.model,
  };
}
