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
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chunkHead, chunkJson, errorBody, SSE_DONE, sseData, usageChunkJson, usageJson } from '../wire/chunks';
import { watchParent } from '../proc/child';

/** Served model name. */
export const NULL_SERVER_MODEL = 'loadlab-null';
/** The line the process prints once it listens: `<marker> <port> <epochMinusRealtimeMs>`. */
export const NULL_SERVER_MARKER = 'LOADLAB_NULL_LISTENING';

const epochNow = () => performance.timeOrigin + performance.now();

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

interface Stream {
  res: ServerResponse;
  id: string;
  tokens: number;
  k: number;
  deadline: number;
  closed: boolean;
  times: number[];
  /** `chunkHead` of the stream (src/wire/chunks.ts). */
  head: string;
}

/** A running null server (in this process). */
export interface NullServer {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** Start the null server on 127.0.0.1 (`port` 0 = ephemeral). Used by the child process's main. */
export function startNullServer(port = 0): Promise<NullServer> {
  const stats = { requests: 0, tokenEvents: 0 };
  let cpuMark = process.cpuUsage();
  let wallMark = performance.now();
  const sent = new Map<string, number[]>();
  const tickers = new Map<number, Set<Stream>>();
  let seq = 0;

  const usage = (k: number) => usageJson({ promptTokens: 8, completionTokens: k });
  // vLLM's chunk (src/wire/chunks.ts) plus a non-vLLM field `t`: the send time, epoch ms.
  const tokenEvent = (s: Stream, last: boolean, t: number) =>
    sseData(chunkJson('chat', s.head, { text: ' tok', finishReason: last ? 'length' : undefined }, { usage: usage(s.k), extra: `,"t":${t.toFixed(4)}` }));

  const finish = (s: Stream) => {
    s.res.end(sseData(usageChunkJson(s.head, usage(s.k))) + SSE_DONE);
    sent.set(s.id, s.times);
  };

  /** Write the next token chunk of `s` (the role chunk first, with the first token). Returns false when done. */
  const step = (s: Stream): boolean => {
    if (s.closed) return false;
    const t = epochNow(); // the send time, just before the write
    s.k++;
    const last = s.k >= s.tokens || performance.now() >= s.deadline;
    const role = s.k === 1 ? sseData(chunkJson('chat', s.head, { role: true }, { usage: usage(0) })) : '';
    s.times.push(t);
    stats.tokenEvents++;
    s.res.write(role + tokenEvent(s, last, t));
    if (last) {
      finish(s);
      return false;
    }
    return true;
  };

  /** Lockstep ticker for one gap: every gap ms, one chunk for every stream on it. */
  const join = (s: Stream, gapMs: number) => {
    let set = tickers.get(gapMs);
    if (set) {
      set.add(s);
      return;
    }
    set = new Set([s]);
    tickers.set(gapMs, set);
    const members = set;
    const start = performance.now() + gapMs;
    let n = 0;
    const tick = () => {
      for (const m of members) if (!step(m)) members.delete(m);
      if (members.size === 0) {
        tickers.delete(gapMs);
        return;
      }
      n++;
      setTimeout(tick, Math.max(0, start + n * gapMs - performance.now()));
    };
    setTimeout(tick, gapMs);
  };

  /** Flat out: write as fast as the socket drains, yielding to other streams every 16 chunks. */
  const pump = (s: Stream): void => {
    for (let i = 0; i < 16; i++) {
      if (!step(s)) return;
      if (s.res.writableNeedDrain) {
        s.res.once('drain', () => pump(s));
        return;
      }
    }
    setImmediate(() => pump(s));
  };

  const json = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'GET') {
      if (url === '/health') return void res.writeHead(200).end();
      if (url === '/v1/models') {
        return json(res, 200, { object: 'list', data: [{ id: NULL_SERVER_MODEL, object: 'model', owned_by: 'loadlab', root: NULL_SERVER_MODEL, max_model_len: 1 << 20 }] });
      }
      if (url === '/stats') {
        const cpu = process.cpuUsage(cpuMark);
        const wallMs = performance.now() - wallMark;
        cpuMark = process.cpuUsage();
        wallMark = performance.now();
        return json(res, 200, { ...stats, cpuMs: (cpu.user + cpu.system) / 1000, wallMs });
      }
      if (url === '/sent') {
        const out = Object.fromEntries(sent);
        sent.clear();
        return json(res, 200, out);
      }
      return json(res, 404, { detail: 'Not Found' });
    }
    if (req.method !== 'POST' || !url.endsWith('/v1/chat/completions')) return json(res, 404, { detail: 'Not Found' });
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        return json(res, 400, errorBody({ message: 'body is not JSON', type: 'BadRequestError', param: null, code: 400 }, 'old'));
      }
      stats.requests++;
      const header = req.headers['x-request-id'];
      const id = (Array.isArray(header) ? header[0] : header) ?? `null-${++seq}`;
      const num = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : d);
      const tokens = Math.max(1, Math.floor(num(body.max_tokens, 16)));
      const gapMs = num(body.null_gap_ms, 10);
      const durationMs = num(body.null_duration_ms, Infinity);
      const created = Math.floor(Date.now() / 1000);
      const s: Stream = {
        res, id, tokens, k: 0, deadline: performance.now() + durationMs, closed: false, times: [],
        head: chunkHead({ api: 'chat', id: `chatcmpl-${id}`, created, model: NULL_SERVER_MODEL }),
      };
      res.on('close', () => (s.closed = true));
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      res.flushHeaders();
      if (gapMs > 0) join(s, gapMs);
      else setImmediate(() => pump(s));
    });
  });
  server.keepAliveTimeout = 30_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => {
      resolve({
        server,
        port: (server.address() as AddressInfo).port,
        close: () => new Promise<void>((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
      });
    });
  });
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
