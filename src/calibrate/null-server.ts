/**
 * The null server: a minimal vLLM-shaped SSE source with no model behind it, for measuring the
 * measurer (`calibrateClient` in `./calibrate.ts`). It runs as its OWN process, so its timers and
 * writes never share the client's event loop:
 *
 *   LOADLAB_NULL_SERVER_MAIN=1 node --import tsx src/calibrate/null-server.ts
 *   → prints `LOADLAB_NULL_LISTENING <port> <epochMinusRealtimeMs>`
 *
 * `POST /v1/chat/completions` answers like vLLM's chat stream (fact sheet §1.1): headers at once,
 * then — at the next engine "step" — the role chunk and the first token chunk back to back, one
 * token chunk per step after that (the last one with `finish_reason: "length"`), the usage chunk
 * and `data: [DONE]`. Every chunk carries continuous usage, as the LoadLab client asks for it.
 * Steps are in LOCKSTEP across streams, like one engine step emitting a chunk for every running
 * request: one ticker per gap, on absolute times (no drift). Each token chunk carries its send
 * time `"t"` (epoch ms, `performance.timeOrigin + performance.now()`, read just before the write),
 * and the server keeps those times per `x-request-id` for `GET /sent`.
 *
 * Body fields besides `max_tokens` (default 16): `null_gap_ms` (step gap, default 10; 0 = flat
 * out: each stream writes as fast as its socket drains) and `null_duration_ms` (stop streaming
 * after this long, whatever `max_tokens` says).
 * Also `GET /v1/models`, `GET /health`, `GET /stats` (CPU of this process since the last call,
 * token events written), `GET /sent` (`{id: [sendEpochMs…]}` of finished streams, then forgotten).
 * Exits on SIGTERM/SIGINT or when its parent goes away (`watchParent` of src/proc/child.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chunkHead, errorBody } from '../wire/chunks';
import { watchParent } from '../proc/child';
import { epochNow, type NullState, type NullStream, startStream } from './null-streams';

/** Served model name. */
export const NULL_SERVER_MODEL = 'loadlab-null';
/** The line the process prints once it listens: `<marker> <port> <epochMinusRealtimeMs>`. */
export const NULL_SERVER_MARKER = 'LOADLAB_NULL_LISTENING';

/**
 * How far this process's `performance.timeOrigin + performance.now()` is from the system clock,
 * ms: read at the instant `Date.now()` ticks (spin until it changes), median of `ticks` readings
 * (≈ 1 ms each). Two processes' values differ by the offset between their epoch stamps, to about
 * a microsecond, so stamps taken in different processes can be compared.
 */
export function epochMinusRealtimeMs(ticks = 11): number {
  const diffs: number[] = [];
  for (let i = 0; i < ticks; i++) {
    const d0 = Date.now();
    let d = d0;
    let t = 0;
    while (d === d0) {
      t = epochNow();
      d = Date.now();
    }
    diffs.push(t - d);
  }
  diffs.sort((a, b) => a - b);
  return diffs[diffs.length >> 1];
}

/** A running null server (in this process). */
export interface NullServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** The null server's state: counters, finished streams, tickers, and the CPU/wall marks of `GET /stats`. */
interface ServerState extends NullState {
  cpuMark: NodeJS.CpuUsage;
  wallMark: number;
  seq: number;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

/** `GET /health`, `/v1/models`, `/stats` (CPU since the last call), `/sent` (then forgotten); else 404. */
function handleGet(state: ServerState, url: string, res: ServerResponse): void {
  if (url === '/health') res.writeHead(200).end();
  else if (url === '/v1/models') {
    json(res, 200, {
      object: 'list',
      data: [{ id: NULL_SERVER_MODEL, object: 'model', owned_by: 'loadlab', root: NULL_SERVER_MODEL, max_model_len: 1 << 20 }],
    });
  } else if (url === '/stats') {
    const cpu = process.cpuUsage(state.cpuMark);
    const wallMs = performance.now() - state.wallMark;
    state.cpuMark = process.cpuUsage();
    state.wallMark = performance.now();
    json(res, 200, { ...state.stats, cpuMs: (cpu.user + cpu.system) / 1000, wallMs });
  } else if (url === '/sent') {
    const out = Object.fromEntries(state.sent);
    state.sent.clear();
    json(res, 200, out);
  } else json(res, 404, { detail: 'Not Found' });
}

/** Open the SSE stream of one parsed chat request and start writing it. */
function openStream(state: ServerState, req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): void {
  state.stats.requests++;
  const header = req.headers['x-request-id'];
  const id = (Array.isArray(header) ? header[0] : header) ?? `null-${++state.seq}`;
  const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : d);
  const tokens = Math.max(1, Math.floor(num(body.max_tokens, 16)));
  const gapMs = num(body.null_gap_ms, 10);
  const durationMs = num(body.null_duration_ms, Infinity);
  const created = Math.floor(Date.now() / 1000);
  const s: NullStream = {
    res,
    id,
    tokens,
    k: 0,
    deadline: performance.now() + durationMs,
    closed: false,
    times: [],
    head: chunkHead({ api: 'chat', id: `chatcmpl-${id}`, created, model: NULL_SERVER_MODEL }),
  };
  res.on('close', () => (s.closed = true));
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  res.flushHeaders();
  startStream(state, s, gapMs);
}

/** `POST …/v1/chat/completions`: read the body, 400 when it is not JSON, else stream. */
function handlePost(state: ServerState, req: IncomingMessage, res: ServerResponse): void {
  const parts: Buffer[] = [];
  req.on('data', (b: Buffer) => parts.push(b));
  req.on('end', () => {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {
      return json(res, 400, errorBody({ message: 'body is not JSON', type: 'BadRequestError', param: null, code: 400 }, 'old'));
    }
    openStream(state, req, res, body);
  });
}

/** Listen on 127.0.0.1:`port`; resolves once listening. */
function listen(server: Server, port: number): Promise<NullServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => {
      resolve({
        server,
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Start the null server on 127.0.0.1 (`port` 0 = ephemeral). Used by the child process's main. */
export function startNullServer(port = 0): Promise<NullServer> {
  const state: ServerState = {
    stats: { requests: 0, tokenEvents: 0 },
    sent: new Map(),
    tickers: new Map(),
    cpuMark: process.cpuUsage(),
    wallMark: performance.now(),
    seq: 0,
  };
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'GET') return handleGet(state, url, res);
    if (req.method !== 'POST' || !url.endsWith('/v1/chat/completions')) return json(res, 404, { detail: 'Not Found' });
    handlePost(state, req, res);
  });
  server.keepAliveTimeout = 30_000;
  return listen(server, port);
}

/** The child process's main: listen, print the marker, exit with the parent. */
async function main(): Promise<void> {
  const ns = await startNullServer(0);
  process.stdout.write(`${NULL_SERVER_MARKER} ${ns.port} ${epochMinusRealtimeMs().toFixed(4)}\n`);
  const stop = () => {
    void ns.close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 500).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  watchParent(stop);
}

if (process.env.LOADLAB_NULL_SERVER_MAIN === '1') {
  main().catch((err: unknown) => {
    process.stderr.write(`null server failed: ${String(err)}\n`);
    process.exit(1);
  });
}
