/**
 * The lean connection pool: the streaming client's dispatcher for `http:` targets, in place of
 * undici's `Pool` (./undici.ts, still used for `https:` and for every other call LoadLab makes).
 *
 * It offers the part of undici's dispatcher API that ./request.ts uses, `dispatch(options, handler)`
 * with the same handler callbacks and controller, and `close()`, so the request code is the same over
 * both. What it saves is per token event: a socket read goes into one reused buffer (Node's `onread`)
 * and through a JavaScript HTTP/1.1 parser (./h1-parse.ts), instead of a fresh `Buffer`, the stream
 * machinery and undici's llhttp (WebAssembly). bench/README.md §23 has the figures.
 *
 * Like undici's `Pool` with `pipelining: 1`: at most `connections` sockets, one request each at a time,
 * kept alive between requests and reused, requests beyond that queued in order. An idle socket older
 * than {@link KEEP_ALIVE_MS} is closed rather than reused (undici's default `keepAliveTimeout`). vLLM's
 * server closes idle connections after 5 s: uvicorn's `timeout_keep_alive` is `VLLM_HTTP_TIMEOUT_KEEP_ALIVE`
 * (vllm/entrypoints/openai/api_server.py), default 5 (vllm/envs.py). So a request is not written to a
 * socket the server is about to close. Requests are never retried.
 * `LOADLAB_HTTP_CLIENT=undici` makes the client use undici's `Pool` for `http:` too.
 */
import type { Dispatcher } from 'undici';
import { type ConnOwner, type Exchange, H1Conn, socketError } from './h1-conn';

/** Idle sockets older than this are closed, not reused, ms (undici's default `keepAliveTimeout`). */
export const KEEP_ALIVE_MS = 4_000;

/** Size of the one buffer every socket of a pool reads into, bytes. */
export const READ_BUFFER_BYTES = 64 * 1024;

/** What {@link H1Pool.dispatch} takes: undici's options as ./request.ts gives them. */
export interface StreamDispatchOptions {
  path: string;
  method: string;
  headers: Record<string, string>;
  /** Sent with its `content-length`; none for a GET without one. */
  body?: string;
}

/** The dispatcher ./request.ts needs: undici's `Pool` or an {@link H1Pool}. */
export interface StreamDispatcher {
  dispatch(opts: StreamDispatchOptions, handler: Dispatcher.DispatchHandler): boolean;
  /** Finish what was dispatched, then close. */
  close(): Promise<void>;
  /** Fail what was dispatched and close now. */
  destroy(): Promise<void>;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\r\n\0]/;

/** The request's bytes; throws on a header that would break the head (as undici's `InvalidArgumentError`). */
function wireOf(host: string, o: StreamDispatchOptions): string {
  if (!o.path.startsWith('/') || BAD_VALUE.test(o.path) || o.path.includes(' ')) {
    throw socketError(`invalid request path ${JSON.stringify(o.path)}`, 'UND_ERR_INVALID_ARG');
  }
  let head = `${o.method} ${o.path} HTTP/1.1\r\n`;
  let hostSet = false;
  for (const k of Object.keys(o.headers)) {
    const v = o.headers[k];
    if (!TOKEN.test(k) || BAD_VALUE.test(v)) throw socketError(`invalid header ${JSON.stringify(k)}`, 'UND_ERR_INVALID_ARG');
    const lk = k.toLowerCase();
    // The framing is the pool's: one request per socket at a time, its length counted here.
    if (lk === 'content-length' || lk === 'transfer-encoding' || lk === 'connection') continue;
    hostSet ||= lk === 'host'; // a gateway that routes by Host gets the caller's (`--header host=…`), as undici sends it
    head += `${k}: ${v}\r\n`;
  }
  if (!hostSet) head += `host: ${host}\r\n`;
  if (o.body === undefined) return o.method === 'GET' || o.method === 'HEAD' ? `${head}\r\n` : `${head}content-length: 0\r\n\r\n`;
  return `${head}content-length: ${Buffer.byteLength(o.body)}\r\n\r\n${o.body}`;
}

/** One request's state, and the controller its handler is given. */
class PoolExchange implements Exchange {
  ended = false;
  conn: H1Conn | undefined;
  aborted = false;
  readonly paused = false;
  reason: Error | null = null;

  constructor(
    readonly handler: Dispatcher.DispatchHandler,
    readonly wire: string,
    readonly bodyless: boolean,
  ) {}

  abort(reason: Error): void {
    if (this.aborted || this.ended) return;
    this.aborted = true;
    this.reason = reason;
    this.conn?.abort(this); // not yet on a socket: `H1Conn.send` sees `aborted` after `onRequestStart`
  }

  pause(): void {}
  resume(): void {}
}

/** A pool of keep-alive HTTP/1.1 connections to one `http:` origin. */
export class H1Pool implements StreamDispatcher, ConnOwner {
  private readonly host: string;
  private readonly hostname: string;
  private readonly port: number;
  private readonly buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  private readonly conns = new Set<H1Conn>();
  private readonly idleConns: H1Conn[] = [];
  private readonly queue: PoolExchange[] = [];
  private closed = false;
  private onDrained: (() => void) | undefined;

  /** @param origin `http://host:port`. */
  constructor(
    origin: string,
    private readonly opts: { connections: number; keepAliveMs?: number },
  ) {
    const u = new URL(origin);
    if (u.protocol !== 'http:') throw new TypeError(`H1Pool speaks plain http only, got ${u.protocol}; use undici's Pool`);
    this.host = u.host;
    this.hostname = u.hostname.replace(/^\[|\]$/g, '');
    this.port = u.port === '' ? 80 : Number(u.port);
  }

  /** Queue one request; its handler hears of it. Throws when closed or the request is malformed. */
  dispatch(o: StreamDispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.closed) throw socketError('the pool is closed', 'UND_ERR_CLOSED');
    this.queue.push(new PoolExchange(handler, wireOf(this.host, o), o.method === 'HEAD'));
    this.pump();
    return true;
  }

  /** Finish what was dispatched, then close every socket. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.busy()) await new Promise<void>((resolve) => (this.onDrained = resolve));
    for (const c of [...this.conns]) c.destroy();
  }

  async destroy(): Promise<void> {
    this.closed = true;
    const err = socketError('the pool was destroyed', 'UND_ERR_DESTROYED');
    for (const ex of this.queue.splice(0)) ex.handler.onResponseError?.(ex, err);
    for (const c of [...this.conns]) c.fail(err);
  }

  idle(c: H1Conn): void {
    this.idleConns.push(c);
    this.pump();
  }

  gone(c: H1Conn): void {
    this.conns.delete(c);
    const k = this.idleConns.indexOf(c);
    if (k >= 0) this.idleConns.splice(k, 1);
    this.pump();
  }

  private busy(): boolean {
    return this.queue.length > 0 || this.idleConns.length < this.conns.size;
  }

  /** Give queued requests to idle sockets, then to new ones while under `connections`. */
  private pump(): void {
    while (this.queue.length > 0) {
      const c = this.idleConns.pop();
      if (c !== undefined) {
        if (!c.usable || performance.now() - c.idleSince > (this.opts.keepAliveMs ?? KEEP_ALIVE_MS)) {
          c.destroy();
          continue;
        }
        c.send(this.queue.shift()!);
      } else if (this.conns.size < this.opts.connections) {
        this.conns.add(new H1Conn(this, this.hostname, this.port, this.buffer, this.queue.shift()!));
      } else break;
    }
    if (this.onDrained !== undefined && !this.busy()) {
      const done = this.onDrained;
      this.onDrained = undefined;
      done();
    }
  }
}
