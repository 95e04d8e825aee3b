/**
 * One keep-alive HTTP/1.1 connection of the lean pool (./h1-pool.ts): a `net` socket read with
 * Node's `onread` option, so each read lands in one buffer the pool reuses and goes straight to the
 * parser (./h1-parse.ts), without a `Buffer` per read or the stream machinery of `'data'` events
 * (bench/README.md §23). One request at a time, as undici's `pipelining: 1`.
 */
import { connect, type Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { H1Parser } from './h1-parse';

/** One request and its handler; the controller its handler is given. */
export interface Exchange extends Dispatcher.DispatchController {
  readonly handler: Dispatcher.DispatchHandler;
  /** The request's bytes: head and body. */
  readonly wire: string;
  readonly bodyless: boolean;
  /** Set once the handler got `onResponseEnd` or `onResponseError`. */
  ended: boolean;
  /** The connection carrying it, once written. */
  conn: H1Conn | undefined;
}

/** What a connection tells its pool. */
export interface ConnOwner {
  /** The connection can take another request. */
  idle(c: H1Conn): void;
  /** The connection is gone (closed, failed or destroyed). */
  gone(c: H1Conn): void;
}

/** A socket error code, as undici's for the same cases, so ./errors.ts classifies both alike. */
export function socketError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

/** undici's default connect timeout, ms. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** A keep-alive connection: connect, then carry one {@link Exchange} at a time. */
export class H1Conn {
  readonly socket: Socket;
  private readonly parser: H1Parser;
  private ex: Exchange | undefined;
  private connected = false;
  private dead = false;
  /** A response ended in the current read: finish it once the parser has returned. */
  private ended: { ex: Exchange; keepAlive: boolean } | undefined;
  /** When it last became idle (performance.now()). */
  idleSince = 0;

  constructor(
    private readonly owner: ConnOwner,
    host: string,
    port: number,
    buffer: Buffer,
    first: Exchange,
  ) {
    this.ex = first;
    this.parser = new H1Parser({
      onHead: (status, headers, text) => {
        const ex = this.ex;
        if (ex && !ex.ended) ex.handler.onResponseStart?.(ex, status, headers, text);
      },
      onBody: (buf, s, e) => {
        const ex = this.ex;
        if (ex && !ex.ended) ex.handler.onResponseData?.(ex, buf.subarray(s, e));
      },
      onDone: (keepAlive) => {
        if (this.ex) this.ended = { ex: this.ex, keepAlive };
        this.ex = undefined;
      },
    });
    this.socket = connect({
      host,
      port,
      noDelay: true,
      onread: { buffer, callback: (n: number, buf: Uint8Array) => this.onRead(buf as Buffer, n) },
    });
    this.socket.setTimeout(CONNECT_TIMEOUT_MS, () => {
      this.fail(socketError(`connect timeout after ${CONNECT_TIMEOUT_MS} ms`, 'UND_ERR_CONNECT_TIMEOUT'));
    });
    this.socket.once('connect', () => {
      this.connected = true;
      this.socket.setTimeout(0);
      const ex = this.ex;
      this.ex = undefined;
      if (ex) this.send(ex);
    });
    this.socket.on('end', () => this.onEnd());
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(socketError('other side closed', 'UND_ERR_SOCKET')));
  }

  /** Carry `ex`: tell its handler, which may abort it, then write it. */
  send(ex: Exchange): void {
    this.ex = ex;
    this.socket.ref();
    this.parser.reset(ex.bodyless);
    ex.handler.onRequestStart?.(ex, {});
    if (ex.aborted) {
      this.ex = undefined;
      this.end(ex, ex.reason ?? new Error('aborted'));
      this.toIdle();
      return;
    }
    ex.conn = this;
    this.socket.write(ex.wire);
  }

  /** The handler aborted its request mid-flight: the connection cannot be reused. */
  abort(ex: Exchange): void {
    if (this.ex !== ex) return;
    this.ex = undefined;
    this.destroy();
    this.end(ex, ex.reason ?? new Error('aborted'));
  }

  /** Close the socket (idempotent); a request on it is failed by `fail` first when needed. */
  destroy(): void {
    if (this.dead) return;
    this.dead = true;
    this.socket.destroy();
    this.owner.gone(this);
  }

  private onRead(buf: Buffer, n: number): boolean {
    if (this.ex === undefined) {
      this.fail(socketError('bytes arrived on an idle connection', 'UND_ERR_SOCKET'));
      return false;
    }
    let used: number;
    try {
      used = this.parser.feed(buf, 0, n);
    } catch (err) {
      this.fail(err as Error);
      return false;
    }
    const done = this.ended;
    if (done === undefined) return true;
    this.ended = undefined;
    if (done.keepAlive && used === n) this.toIdle();
    else this.destroy();
    this.end(done.ex);
    return !this.dead;
  }

  private onEnd(): void {
    const ex = this.ex;
    if (ex === undefined) {
      this.destroy();
      return;
    }
    const err = this.parser.eof();
    const done = this.ended;
    this.ended = undefined;
    this.destroy();
    if (done) this.end(done.ex);
    else this.end(ex, err ? Object.assign(err, { code: 'UND_ERR_SOCKET' }) : socketError('other side closed', 'UND_ERR_SOCKET'));
  }

  /** Fail the request in flight (if any) with `err`, and close. */
  fail(err: Error): void {
    const ex = this.ex;
    this.ex = undefined;
    this.ended = undefined;
    this.destroy();
    if (ex) this.end(ex, err);
  }

  private toIdle(): void {
    this.idleSince = performance.now();
    this.socket.unref(); // an idle pool never keeps the process alive (as undici's)
    this.owner.idle(this);
  }

  /** Tell the handler its request is over: ended, or failed with `err`. */
  private end(ex: Exchange, err?: Error): void {
    if (ex.ended) return;
    ex.ended = true;
    ex.conn = undefined;
    if (err === undefined) ex.handler.onResponseEnd?.(ex, {});
    else ex.handler.onResponseError?.(ex, err);
  }

  /** Connected and not closed. */
  get usable(): boolean {
    return this.connected && !this.dead;
  }
}
