/**
 * Scripted vLLM-shaped SSE servers for tests: real HTTP on 127.0.0.1, port 0, never mocks.
 *
 * One server, one JSON-serialisable {@link ServerConfig}: a base {@link Script} for
 * `POST /v1/chat/completions` and `POST /v1/completions`, plus named routes: requests to
 * `/<name>/v1/...` use `{...base, ...routes[name]}`, so one process can serve a healthy stream and
 * every failure mode (point a client's `baseUrl` at `server.routeUrl('reset')`).
 *
 * Streams follow vLLM's exact shapes (vLLM fact sheet §1.1–1.3, §1.5): chat role chunk, token
 * chunks with `"logprobs":null,"finish_reason":null`, the last delta carrying `finish_reason`,
 * usage honouring `stream_options.include_usage`/`continuous_usage_stats`, `data: [DONE]`.
 * Chunk k is written at t0 + firstTokenDelayMs + k·gapMs on `performance.now()` (t0 = request
 * body received), scheduled against absolute times so gaps do not drift; never early, and late
 * by about a timer tick (≤ ~1 ms on an idle machine).
 *
 * Also: `GET /health` (200, empty), `GET /v1/models`, and `GET /stats` ({@link ServerStats}); with
 * `gateway`, `/version`, `/metrics` and `/tokenize` too, each behind the gateway's header.
 *
 * The script types and the stream writer live in `sse-stream.ts`, the JSON shapes in `sse-shapes.ts`.
 *
 * In-process: {@link startScriptedServer}. For timing-accuracy tests use
 * {@link spawnScriptedServer}, which runs `sse-server-main.ts` as a child process so the server's
 * timers do not share the client's event loop.
 */

import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { spawnChild } from '../../src/proc/child';
import { type Gateway, gatewayAnswer } from './sse-gateway';
import { errorBody } from './sse-shapes';
import { writeScriptedStream, type Script } from './sse-stream';

export type { Failure, Script } from './sse-stream';
export type { Gateway } from './sse-gateway';

/** A base script plus named routes served under `/<name>/v1/...`. */
export interface ServerConfig extends Script {
  routes?: Record<string, Script>;
  /** Put a gateway in front (sse-gateway.ts): every route but `/stats` wants its header. */
  gateway?: Gateway;
}

/** Any request the server saw, on any route (refused ones included). */
export interface AccessEntry {
  method: string;
  path: string;
  /** Request headers, names lower-cased. */
  headers: Record<string, string | string[] | undefined>;
}

/** One request as the server saw it (for asserting what the client sent). */
export interface SeenRequest {
  route: string;
  path: string;
  requestId?: string;
  authorization?: string;
  /** Every request header (names lower-cased, as Node gives them). */
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  /** Epoch ms (`performance.timeOrigin + performance.now()`) when the request body was read. */
  receivedAtMs: number;
  /** Epoch ms of each token chunk write; compare with a client's `timeOrigin + chunkMs`. */
  chunkWrittenAtMs: number[];
}

/** Server counters, from `GET /stats` or {@link ScriptedServer.stats}. */
export interface ServerStats {
  /** Generation requests received. */
  requests: number;
  /** Responses open now. */
  inFlight: number;
  /** Most responses open at once. */
  peakInFlight: number;
  /** TCP connections accepted (fewer than requests means keep-alive reuse). */
  connections: number;
  /** The last 50 requests, oldest first. */
  recent: SeenRequest[];
  /** The last 200 requests on every route but `/stats`, oldest first. */
  access: AccessEntry[];
}

/** A running scripted server. */
export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` (use as a client's baseUrl). */
  url: string;
  port: number;
  /** Base URL of a named route: `http://127.0.0.1:<port>/<name>`. */
  routeUrl(name: string): string;
  stats(): Promise<ServerStats>;
  /** Stop listening and drop every open connection. */
  close(): Promise<void>;
}

const GEN_PATH = /^(?:\/([^/]+))?\/v1\/(chat\/completions|completions)$/;

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** Start a scripted server in this process on 127.0.0.1, port 0. */
export async function startScriptedServer(config: ServerConfig = {}): Promise<ScriptedServer> {
  const { routes = {}, gateway, ...base } = config;
  const counts = new Map<string, number>();
  const stats: ServerStats = { requests: 0, inFlight: 0, peakInFlight: 0, connections: 0, recent: [], access: [] };
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === '/stats') return json(res, 200, stats);
    stats.access.push({ method: req.method ?? '', path: url, headers: { ...req.headers } });
    if (stats.access.length > 200) stats.access.shift();
    if (gateway && gatewayAnswer(req, res, gateway, () => stats.inFlight)) return;
    if (req.method === 'GET' && url === '/health') return void res.writeHead(200).end();
    if (req.method === 'GET' && url === '/v1/models') {
      return json(res, 200, {
        object: 'list',
        data: [
          { id: 'scripted', object: 'model', created: 0, owned_by: 'vllm', root: 'scripted', parent: null, max_model_len: 4096 },
        ],
      });
    }
    const m = GEN_PATH.exec(url);
    if (req.method !== 'POST' || !m) return json(res, 404, { detail: 'Not Found' });
    const route = m[1] ?? '';
    if (route && !(route in routes)) return json(res, 404, { detail: 'Not Found' });
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const t0 = performance.now();
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8')) as Record<string, unknown>;
      } catch {
        return json(res, 400, errorBody(400, 'Invalid JSON body', 'new'));
      }
      const s: Script = { ...base, ...(route ? routes[route] : {}) };
      const n = (counts.get(route) ?? 0) + 1;
      counts.set(route, n);
      stats.requests++;
      const seen: SeenRequest = {
        route,
        path: url,
        requestId: req.headers['x-request-id'] as string | undefined,
        authorization: req.headers.authorization,
        headers: { ...req.headers },
        body,
        receivedAtMs: performance.timeOrigin + t0,
        chunkWrittenAtMs: [],
      };
      stats.recent.push(seen);
      if (stats.recent.length > 50) stats.recent.shift();
      stats.inFlight++;
      stats.peakInFlight = Math.max(stats.peakInFlight, stats.inFlight);
      res.on('close', () => stats.inFlight--);
      const fail = s.fail && n % Math.max(1, s.failEvery ?? 1) === 0 ? s.fail : undefined;
      if (fail?.mode === 'never') return;
      if (fail?.mode === 'hangup') return void req.socket.destroy();
      if (fail?.mode === 'status') {
        const shape = fail.shape ?? 'new';
        const msg = fail.message ?? (fail.status >= 500 ? 'Internal server error' : 'scripted bad request');
        if (shape === 'text') {
          res.writeHead(fail.status, { 'content-type': 'text/plain' });
          return void res.end(msg);
        }
        return json(res, fail.status, errorBody(fail.status, msg, shape));
      }
      if (body.stream !== true)
        return json(res, 400, errorBody(400, 'this scripted server only streams: send stream: true', 'new'));
      writeScriptedStream(req, res, s, body, t0, fail, seen.chunkWrittenAtMs);
    });
  });
  server.on('connection', (sock: Socket) => {
    sockets.add(sock);
    stats.connections++;
    sock.on('close', () => sockets.delete(sock));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    routeUrl: (name) => `${url}/${name}`,
    stats: async () => structuredClone(stats),
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

/**
 * Start a scripted server in a child process (`node --import tsx sse-server-main.ts '<json>'`),
 * so its timers run on their own event loop. Resolves once it prints `LISTENING <port>`.
 * The child (`spawnChild` of src/proc/child.ts: its own process group) exits when `close()` is
 * called or when this process goes away.
 * @param startTimeoutMs give up if the child has not started by then; default 15_000.
 */
export async function spawnScriptedServer(config: ServerConfig = {}, startTimeoutMs = 15_000): Promise<ScriptedServer> {
  const child = await spawnChild({
    entry: fileURLToPath(new URL('./sse-server-main.ts', import.meta.url)),
    args: [JSON.stringify(config)],
    marker: 'LISTENING',
    name: 'the scripted server',
    startupTimeoutMs: startTimeoutMs,
    portOf: (payload) => ({ port: Number(payload) }),
  });
  const port = Number(child.payload);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    routeUrl: (name) => `${url}/${name}`,
    stats: async () => (await (await fetch(`${url}/stats`)).json()) as ServerStats,
    close: child.stop,
  };
}

/** A 127.0.0.1 port with nothing listening (bound, then closed): connecting gets ECONNREFUSED. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
