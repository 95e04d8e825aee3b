/**
 * A minimal vLLM-shaped SSE server for the client benchmarks, run as its OWN process so its
 * timers and writes never share the client's event loop:
 *
 *   node --import tsx bench/sse-source.ts '{"gapMs":10}'     → prints `LISTENING <port>`
 *
 * `POST /v1/chat/completions` streams `max_tokens` token chunks (chat shape, continuous usage
 * as the LoadLab client asks for it), chunk k at t0 + k·gap on absolute times. Every token chunk
 * carries its send time `"t"` (epoch ms, `performance.timeOrigin + performance.now()`, taken just
 * before the write), and the server also keeps those times per `x-request-id` for `GET /sent`.
 * The gap can be set per request with the body field `sse_gap_ms` (the client's `extraBody`), and
 * `sse_phase_ms` delays the first token (to spread streams over the gap instead of lockstep).
 * `sse_gap_ms: 0` = as fast as the socket takes it, `sse_batch` events per write.
 *
 * Also: `GET /v1/models`, `GET /health`, `GET /now` (`{"t": epochMs}`, for a clock-offset check),
 * `GET /stats` (open streams, peak, token events written, this process's CPU), `GET /sent`
 * (`{id: [sendEpochMs…]}` for every finished request since the last call, then forgotten).
 * Exits on SIGTERM/SIGINT or when stdin closes (the parent went away).
 */

import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { epochMinusRealtimeMs } from '../src/calibrate/null-server';
import { chunkHead, chunkJson, errorBody, SSE_DONE, sseData, usageChunkJson, usageJson } from '../src/wire/chunks';

interface SourceConfig {
  /** Default gap between token chunks, ms; default 10. */
  gapMs?: number;
  /** Default tokens when the request has no max_tokens; default 16. */
  tokens?: number;
}

const config: SourceConfig = JSON.parse(process.argv[2] ?? '{}');
const MODEL = 'sse-source';
const origin = performance.timeOrigin;
const epoch = () => origin + performance.now();
const cpu0 = process.cpuUsage();
const t0 = performance.now();

const stats = { open: 0, peakOpen: 0, requests: 0, tokenEvents: 0 };
const sent = new Map<string, number[]>();
let seq = 0;

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Stream `tokens` chunks to `res` at `gapMs` (0 = flat out, `batch` events per write). */
function stream(
  res: ServerResponse,
  id: string,
  promptTokens: number,
  tokens: number,
  gapMs: number,
  batch: number,
  phaseMs: number,
): void {
  const times: number[] = [];
  const created = Math.floor(Date.now() / 1000);
  const head = chunkHead({ api: 'chat', id: `chatcmpl-${id}`, created, model: MODEL });
  const usage = (k: number) => usageJson({ promptTokens, completionTokens: k });
  // vLLM's chunk (src/wire/chunks.ts) plus a non-vLLM field `t`: the send time, epoch ms.
  const event = (k: number, t: number) =>
    sseData(
      chunkJson(
        'chat',
        head,
        { text: ' tok', finishReason: k === tokens ? 'length' : undefined },
        { usage: usage(k), extra: `,"t":${t.toFixed(4)}` },
      ),
    );
  let k = 0;
  let closed = false;
  stats.open++;
  stats.peakOpen = Math.max(stats.peakOpen, stats.open);
  res.on('close', () => {
    closed = true;
    stats.open--;
  });
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  res.write(sseData(chunkJson('chat', head, { role: true }, { usage: usage(0) })));
  const finish = () => {
    res.end(sseData(usageChunkJson(head, usage(tokens))) + SSE_DONE);
    sent.set(id, times);
  };
  if (tokens === 0) return finish();
  if (gapMs <= 0) {
    const pump = () => {
      while (!closed && k < tokens) {
        let text = '';
        for (let b = 0; b < batch && k < tokens; b++) {
          const t = epoch();
          times.push(t);
          text += event(++k, t);
          stats.tokenEvents++;
        }
        if (k === tokens) {
          res.write(text);
          return finish();
        }
        if (!res.write(text)) return void res.once('drain', pump);
      }
    };
    return pump();
  }
  const start = performance.now() + phaseMs;
  const tick = () => {
    if (closed) return;
    const t = epoch(); // the send time, just before the write
    times.push(t);
    res.write(event(++k, t));
    stats.tokenEvents++;
    if (k === tokens) return finish();
    const due = start + k * gapMs; // absolute times: no drift
    setTimeout(tick, Math.max(0, due - performance.now()));
  };
  // The first token goes with the role chunk, as vLLM's first output (after the phase, if any).
  if (phaseMs > 0) setTimeout(tick, phaseMs);
  else tick();
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (req.method === 'GET') {
    if (url === '/health') return void res.writeHead(200).end();
    if (url === '/now') return json(res, 200, { t: epoch() });
    if (url === '/clock') return json(res, 200, { epochMinusRealtimeMs: epochMinusRealtimeMs() });
    if (url === '/v1/models') {
      return json(res, 200, {
        object: 'list',
        data: [
          { id: MODEL, object: 'model', created: 0, owned_by: 'loadlab', root: MODEL, parent: null, max_model_len: 1 << 20 },
        ],
      });
    }
    if (url === '/stats') {
      const c = process.cpuUsage(cpu0);
      return json(res, 200, { ...stats, cpuMs: (c.user + c.system) / 1000, wallMs: performance.now() - t0 });
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
      return json(res, 400, errorBody({ message: 'bad JSON', type: 'BadRequestError', param: null, code: 400 }));
    }
    stats.requests++;
    const header = req.headers['x-request-id'];
    const id = (Array.isArray(header) ? header[0] : header) ?? `r${++seq}`;
    const tokens = typeof body.max_tokens === 'number' ? body.max_tokens : (config.tokens ?? 16);
    const gapMs = typeof body.sse_gap_ms === 'number' ? body.sse_gap_ms : (config.gapMs ?? 10);
    const batch = typeof body.sse_batch === 'number' ? Math.max(1, body.sse_batch) : 1;
    const phaseMs = typeof body.sse_phase_ms === 'number' ? body.sse_phase_ms : 0;
    stream(res, id, 8, tokens, gapMs, batch, phaseMs);
  });
});
server.keepAliveTimeout = 30_000;
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  process.stdout.write(`LISTENING ${(server.address() as AddressInfo).port}\n`);
});

const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 500).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
