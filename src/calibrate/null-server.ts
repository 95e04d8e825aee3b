/**
 * The null server: a minimal vLLM-shaped SSE source with no model behind it, for measuring the
 * measurer (`calibrateClient` in `./calibrate.ts`, and `bench/client-ceiling.ts`, `bench/arrivals.ts`).
 * It runs as its OWN process (`spawnNullServer`), so its timers and writes never share the client's
 * event loop:
 *
 *   LOADLAB_NULL_SERVER_MAIN=1 node --import tsx src/calibrate/null-server.ts
 *   → prints `LOADLAB_NULL_LISTENING <port> <epochMinusRealtimeMs>`
 *
 * `POST /v1/chat/completions` answers like vLLM's chat stream (fact sheet §1.1): headers at once,
 * then — at the next engine "step" — the role chunk and the first token chunk back to back, one
 * token chunk per step after that (the last one with `finish_reason: "length"`), the usage chunk
 * and `data: [DONE]`. Every chunk carries continuous usage, as the LoadLab client asks for it.
 * Steps are in LOCKSTEP across streams, like one engine step emitting a chunk for every running
 * request: one ticker per gap (and phase), on absolute times (no drift), met like the simulator's
 * steps (`realClock`, not a bare `setTimeout`). Each token chunk carries the time it was made `"t"`
 * (epoch ms, `performance.timeOrigin + performance.now()`, read just before the write); the server
 * keeps each chunk's send time, taken once its write is in the kernel, per `x-request-id` for
 * `GET /sent`.
 *
 * Body fields besides `max_tokens` (default 16), all optional (a bad value is a 400 naming it):
 * - `null_gap_ms`: step gap, ms, default 10; 0 = flat out, each stream writes as fast as its socket drains;
 * - `null_phase_ms`: delay of the stream's first step, ms, default 0; streams with the same gap and
 *   phase step together, so phases spread streams over the gap instead of lockstep;
 * - `null_batch`: token chunks per write when flat out, default 1;
 * - `null_duration_ms`: stop streaming after this long, ms, whatever `max_tokens` says.
 * Also `GET /v1/models`, `GET /health`, `GET /now` (`{"t": epochMs}`, for a round-trip clock check),
 * `GET /stats` (CPU and wall ms of this process and the peak of open streams since the last call;
 * open streams, requests and token chunks written), `GET /sent` (`{id: [sendEpochMs…]}` of finished
 * streams, then forgotten). Exits on SIGTERM/SIGINT or when its parent goes away (`watchParent`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chunkHead, errorBody } from '../wire/chunks';
import { spawnChild, watchParent } from '../proc/child';
import { epochMinusRealtimeMs, epochNow } from './epoch-clock';
import { type NullState, type NullStream, startStream } from './null-streams';

/** Served model name. */
export const NULL_SERVER_MODEL = 'loadlab-null';
/** The line the process prints once it listens: `<marker> <port> <epochMinusRealtimeMs>`. */
export const NULL_SERVER_MARKER = 'LOADLAB_NULL_LISTENING';

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

/** `GET /health`, `/now`, `/v1/models`, `/stats` (CPU and peak since the last call), `/sent` (then forgotten); else 404. */
function handleGet(state: ServerState, url: string, res: ServerResponse): void {
  if (url === '/health') res.writeHead(200).end();
  else if (url === '/now') json(res, 200, { t: epochNow() });
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
    state.stats.peakOpen = state.stats.open;
  } else if (url === '/sent') {
    const out = Object.fromEntries(state.sent);
    state.sent.clear();
    json(res, 200, out);
  } else json(res, 404, { detail: 'Not Found' });
}

/** Body field `name`: a number ≥ 0 (an integer ≥ 1 when `int`), else `dflt` when absent; throws a message naming the fix. */
function field(body: Record<string, unknown>, name: string, dflt: number, int = false): number {
  const v = body[name];
  if (v === undefined || v === null) return dflt;
  if (typeof v === 'number' && (int ? Number.isInteger(v) && v >= 1 : Number.isFinite(v) && v >= 0)) return v;
  throw new TypeError(`${name} must be ${int ? 'an integer ≥ 1' : 'a number ≥ 0 (ms)'}, got ${JSON.stringify(v)}`);
}

/** Open the SSE stream of one parsed chat request and start writing it; throws on a bad body field. */
function openStream(state: ServerState, req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): void {
  const tokens = field(body, 'max_tokens', 16, true);
  const gapMs = field(body, 'null_gap_ms', 10);
  const phaseMs = field(body, 'null_phase_ms', 0);
  const batch = field(body, 'null_batch', 1, true);
  const durationMs = field(body, 'null_duration_ms', Infinity);
  const header = req.headers['x-request-id'];
  const id = (Array.isArray(header) ? header[0] : header) ?? `null-${++state.seq}`;
  const created = Math.floor(Date.now() / 1000);
  const s: NullStream = {
    res,
    id,
    tokens,
    k: 0,
    batch,
    deadline: performance.now() + durationMs,
    done: false,
    closed: false,
    times: [],
    head: chunkHead({ api: 'chat', id: `chatcmpl-${id}`, created, model: NULL_SERVER_MODEL }),
  };
  const stats = state.stats;
  stats.requests++;
  stats.peakOpen = Math.max(stats.peakOpen, ++stats.open);
  res.on('close', () => {
    s.closed = true;
    stats.open--;
  });
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  res.flushHeaders();
  startStream(state, s, gapMs, phaseMs);
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
    try {
      openStream(state, req, res, body);
    } catch (err) {
      json(res, 400, errorBody({ message: (err as Error).message, type: 'BadRequestError', param: null, code: 400 }, 'old'));
    }
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
    stats: { requests: 0, tokenEvents: 0, open: 0, peakOpen: 0 },
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

/** The null server running as a child process (see {@link spawnNullServer}). */
export interface NullServerChild {
  /** Pid of the child, also its process group id. */
  pid: number;
  /** Its port on 127.0.0.1. */
  port: number;
  /** `http://127.0.0.1:<port>`. */
  baseUrl: string;
  /** Offset of the child's epoch stamps from this process's, ms (`epochMinusRealtimeMs` of each, child − ours). */
  offsetMs: number;
  /** SIGTERM (SIGKILL after 2 s), then wait until the process group and its port are gone; idempotent. */
  stop(): Promise<void>;
}

/**
 * Start the null server in its own process (`spawnChild` of src/proc/child.ts: own process group,
 * gone with this process) and wait for its ready line, at most `timeoutMs` (default 20 000).
 * @throws when the child does not print its ready line in time.
 */
export async function spawnNullServer(timeoutMs = 20_000): Promise<NullServerChild> {
  const c = await spawnChild({
    entry: join('src', 'calibrate', 'null-server.ts'),
    env: { LOADLAB_NULL_SERVER_MAIN: '1' },
    marker: NULL_SERVER_MARKER,
    name: 'the null server',
    startupTimeoutMs: timeoutMs,
    graceMs: 2000,
    portOf: (payload) => ({ port: Number(payload.split(/\s+/)[0]) }),
  });
  const [port, childEpochMinusRealtimeMs] = c.payload.split(/\s+/).map(Number);
  const offsetMs = childEpochMinusRealtimeMs - epochMinusRealtimeMs();
  return { pid: c.pid, port, baseUrl: `http://127.0.0.1:${port}`, offsetMs, stop: c.stop };
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
