/**
 * How the simulator answers one HTTP request: every byte a handler sends goes through a
 * `Reply`, so fault injection (src/sim/http/faults.ts: 500/503 fractions, slow headers, socket
 * destroyed mid-stream, error events, stalls, malformed chunks) can wrap it in one place.
 * Also vLLM's error shapes: HTTP errors as compact `{"error":{…}}`, in-stream errors as
 * Python `json.dumps` (spaces after `:` and `,`, non-ASCII escaped).
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { SSE_DONE, sseData, type ErrorInfo } from '../../wire/chunks';
import { errorJsonFor, streamErrorJsonFor, type GenerationId } from './wire-shapes';
import { flushNow } from '../../wire/flush';

/** Header on every simulator response, so clients and probes can tell it from real vLLM. */
export const SIM_HEADER = 'x-loadlab-sim';

/** A vLLM-style API error: `status` is both the HTTP status and `error.code`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** vLLM's `error.type`, e.g. `BadRequestError`, `NotFoundError`, `Bad Request`. */
    readonly type = 'BadRequestError',
    readonly param: string | null = null,
  ) {
    super(message);
  }

  /** The message as older generations word it, where it differs (wire-shapes.ts `errorInfoFor`). */
  wording?: Partial<Record<GenerationId, string>>;

  /** Sets `wording` and returns this. */
  wordedAs(wording: Partial<Record<GenerationId, string>>): this {
    this.wording = wording;
    return this;
  }

  /** The status, message, type, param and wording (what wire-shapes.ts renders per generation). */
  get parts() {
    return { status: this.status, message: this.message, type: this.type, param: this.param, wording: this.wording };
  }

  /** The `{"error":{message,type,param,code}}` body (vLLM ≥ 0.10.1; shape in src/wire/chunks.ts). */
  body(): { error: ErrorInfo } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.status } };
  }
}

/** Python `json.dumps` spacing (moved to src/wire/chunks.ts; re-exported for existing callers). */
export { pyJsonDumps } from '../../wire/chunks';

/** Everything a handler may send. Wrap it to inject faults. */
export interface Reply {
  /** True once the client went away or the reply ended. */
  readonly closed: boolean;
  /** Called once when the client disconnects before the reply ended. */
  onAbort(fn: () => void): void;
  /** A complete JSON response (Starlette `JSONResponse`: compact JSON). */
  json(status: number, body: unknown): void;
  /** A complete non-JSON response (e.g. `/metrics`, `/health`). */
  text(status: number, body: string, contentType?: string): void;
  /** A vLLM error as an HTTP response. */
  error(err: ApiError): void;
  /** 200 with SSE headers; then `event`s, then `done`. */
  startStream(): void;
  /** One `data: <json>\n\n` event (the caller serializes). */
  event(json: string): void;
  /** vLLM's in-stream error event (`json.dumps` style); follow with `done()`. */
  streamError(err: ApiError): void;
  /** `data: [DONE]\n\n` and end the response (its bytes go to the socket at once, as with `flush`). */
  done(): void;
  /**
   * Hand the events written so far to the socket now, not on the next tick. Optional: a reply without
   * it sends them whenever it sends.
   */
  flush?(): void;
  /** Drop the connection without ending the response (an injected mid-stream reset). */
  destroy(): void;
  /**
   * True while the socket's buffers are full (`res.writableNeedDrain`, or the socket's own after a framed write):
   * a slow reader holds the writer back, as uvicorn's `send` awaits the transport's drain. Optional: a reply
   * without it never merges chunks.
   */
  blocked?(): boolean;
  /** Calls `fn` once when a blocked reply's socket drained; never if the client went away first. */
  onDrain?(fn: () => void): void;
}

/**
 * The socket a streamed response's events can be written to directly, or undefined: once the headers went out
 * with chunked encoding on a socket of its own. Then each event is one HTTP chunk in one `socket.write`, framed as
 * uvicorn frames a body message for vLLM (`uvicorn/protocols/http/httptools_impl.py`, `send`: one
 * `transport.write` of `b"%x\r\n" % len(body)`, the body and `b"\r\n"`). Node's `res.write` would cork the
 * socket, buffer the size line, the data and the CRLF apart, schedule a tick to uncork, and hand the kernel three
 * pieces in one `writev`. `res.end` still writes the last chunk and the terminating `0\r\n\r\n`.
 * Before a socket is assigned (a pipelined request waiting its turn), or without chunked encoding (an HTTP/1.0
 * client), events go through `res.write`.
 */
function chunkSocket(res: ServerResponse): Socket | undefined {
  const sock = res.socket;
  // `writable`: not ended (Node ends a socket whose client half-closed) nor destroyed; else `res.write` decides.
  return sock && res.headersSent && res.chunkedEncoding && sock.writable ? sock : undefined;
}

/** One HTTP/1.1 chunk: the data's size in hex, CRLF, the data, CRLF; nothing for no data (a zero-size chunk ends the body). */
export function chunkFrame(data: string): string {
  if (data === '') return '';
  return `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
}

/**
 * Calls `fn` once `res` can take more. A chunk written to the socket itself drains there; Node's `res` emits 'drain'
 * only after its own writes. A socket listener is dropped when the response closes first: a kept-alive socket must
 * not call it for a later response.
 */
function onceDrained(res: ServerResponse, fn: () => void): void {
  const sock = chunkSocket(res);
  if (!sock?.writableNeedDrain || res.writableNeedDrain) return void res.once('drain', fn);
  const drop = () => sock.off('drain', drained);
  const drained = () => {
    res.off('close', drop);
    fn();
  };
  sock.once('drain', drained);
  res.once('close', drop);
}

/** The `Reply` on a Node `ServerResponse`; errors are worded and shaped as generation `gen` does (default v0.19). */
export function nodeReply(res: ServerResponse, gen: GenerationId = 'v0.19'): Reply {
  let ended = false;
  let aborted = false;
  const abortFns: Array<() => void> = [];
  res.on('close', () => {
    if (ended) return;
    aborted = true;
    for (const fn of abortFns.splice(0)) fn();
  });
  const finish = (status: number, contentType: string | undefined, body: string) => {
    if (ended || aborted) return;
    ended = true;
    const headers: Record<string, string | number> = { [SIM_HEADER]: '1', 'content-length': Buffer.byteLength(body) };
    if (contentType) headers['content-type'] = contentType;
    res.writeHead(status, headers);
    res.end(body);
  };
  const write = (s: string) => {
    if (ended || aborted) return;
    const sock = chunkSocket(res);
    if (sock) sock.write(chunkFrame(s));
    else res.write(s);
  };
  return {
    get closed() {
      return ended || aborted;
    },
    onAbort(fn) {
      if (aborted) fn();
      else abortFns.push(fn);
    },
    json(status, body) {
      finish(status, 'application/json', JSON.stringify(body));
    },
    text(status, body, contentType = 'text/plain; charset=utf-8') {
      finish(status, body === '' && status === 200 ? undefined : contentType, body);
    },
    error(err) {
      finish(err.status, 'application/json', errorJsonFor(gen, err.parts));
    },
    startStream() {
      if (ended || aborted || res.headersSent) return;
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', [SIM_HEADER]: '1' });
      res.flushHeaders();
    },
    event(json) {
      write(sseData(json));
    },
    streamError(err) {
      write(sseData(streamErrorJsonFor(gen, err.parts)));
    },
    done() {
      if (ended || aborted) return;
      ended = true;
      res.end(SSE_DONE);
    },
    destroy() {
      if (!ended && !aborted) res.destroy();
    },
    flush() {
      if (!ended && !aborted) flushNow(res);
    },
    blocked() {
      return !ended && !aborted && (res.writableNeedDrain || (chunkSocket(res)?.writableNeedDrain ?? false));
    },
    onDrain(fn) {
      onceDrained(res, fn);
    },
  };
}

/** What a fault-injection layer sees about a request before it is handled. */
export interface RequestInfo {
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The peer's IP address, e.g. `127.0.0.1`. */
  remoteAddress?: string;
  /** Reads the body as vLLM's routes do (JSON only; 400 otherwise). */
  readJson?(): Promise<Record<string, unknown>>;
}

/**
 * The one place faults plug in (src/sim/http/faults.ts). `wrap` may replace any `Reply` method
 * (delay `startStream`, drop or corrupt `event`s, destroy the socket); `intercept` may answer
 * a request itself (e.g. a 503) and return true so the normal handler is skipped.
 */
export interface ReplyHooks {
  wrap?(reply: Reply, info: RequestInfo): Reply;
  intercept?(reply: Reply, info: RequestInfo): boolean | Promise<boolean>;
}
