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
import { chunkFrame, chunkSocket, onceDrained } from './chunk-socket';

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
 * The `Reply` on a Node `ServerResponse`; errors are worded and shaped as generation `gen` does (default v0.19).
 * A class, so `closed` and the methods live on one prototype: a per-reply object literal gave every reply its own
 * getter, and V8 could not inline the engine's per-token `reply.closed` check (bench/README.md §17).
 */
class NodeReply implements Reply {
  private ended = false;
  private aborted = false;
  private readonly abortFns: Array<() => void> = [];
  /** The socket events go to directly, once `chunkSocket` found one (a response keeps its socket to its end). */
  private sock: Socket | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly gen: GenerationId,
  ) {
    res.on('close', () => {
      if (this.ended) return;
      this.aborted = true;
      for (const fn of this.abortFns.splice(0)) fn();
    });
  }

  get closed(): boolean {
    return this.ended || this.aborted;
  }
  onAbort(fn: () => void): void {
    if (this.aborted) fn();
    else this.abortFns.push(fn);
  }

  json(status: number, body: unknown): void {
    this.finish(status, 'application/json', JSON.stringify(body));
  }

  text(status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
    this.finish(status, body === '' && status === 200 ? undefined : contentType, body);
  }

  error(err: ApiError): void {
    this.finish(err.status, 'application/json', errorJsonFor(this.gen, err.parts));
  }

  startStream(): void {
    if (this.closed || this.res.headersSent) return;
    this.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', [SIM_HEADER]: '1' });
    this.res.flushHeaders();
  }

  event(json: string): void {
    this.write(sseData(json));
  }

  streamError(err: ApiError): void {
    this.write(sseData(streamErrorJsonFor(this.gen, err.parts)));
  }

  done(): void {
    if (this.closed) return;
    this.ended = true;
    this.res.end(SSE_DONE);
  }

  destroy(): void {
    if (!this.closed) this.res.destroy();
  }

  flush(): void {
    if (!this.closed) flushNow(this.res);
  }

  blocked(): boolean {
    return !this.closed && (this.res.writableNeedDrain || (this.socket()?.writableNeedDrain ?? false));
  }

  onDrain(fn: () => void): void {
    onceDrained(this.res, fn);
  }

  private finish(status: number, contentType: string | undefined, body: string): void {
    if (this.closed) return;
    this.ended = true;
    const headers: Record<string, string | number> = { [SIM_HEADER]: '1', 'content-length': Buffer.byteLength(body) };
    if (contentType) headers['content-type'] = contentType;
    this.res.writeHead(status, headers);
    this.res.end(body);
  }

  /** `chunkSocket`, looked up until found and then kept while it is writable. */
  private socket(): Socket | undefined {
    return this.sock?.writable ? this.sock : (this.sock = chunkSocket(this.res));
  }

  private write(s: string): void {
    if (this.closed) return;
    const sock = this.socket();
    if (sock) sock.write(chunkFrame(s));
    else this.res.write(s);
  }
}

/** The `Reply` on a Node `ServerResponse` (see {@link NodeReply}). */
export function nodeReply(res: ServerResponse, gen: GenerationId = 'v0.19'): Reply {
  return new NodeReply(res, gen);
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
