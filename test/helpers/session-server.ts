/**
 * A scripted vLLM-shaped chat server for multi-turn tests: real HTTP on 127.0.0.1, port 0.
 * It logs the messages of every request it receives, and answers with known text:
 * `re: <last user message>` as one word per token chunk, the first after `firstTokenDelayMs`,
 * then one every `gapMs` (chunks from src/wire/chunks.ts, so the shapes are vLLM's).
 * A last user message containing `FAIL` is answered HTTP 500 with vLLM's error body; one
 * containing `SLOW` gets `slowGapMs` between chunks (for interrupt tests).
 * Times in the log are epoch ms (`performance.timeOrigin + performance.now()`), comparable with a
 * run's records through `manifest.clock.originEpochMs`.
 */

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { chunkHead, chunkJson, errorBody, SSE_DONE, sseData, usageChunkJson, usageJson } from '../../src/wire/chunks';

/** One request as the server saw it. */
export interface LoggedTurn {
  requestId: string;
  messages: Array<{ role: string; content: string }>;
  /** Epoch ms when the body was read. */
  receivedAtMs: number;
  /** Epoch ms just after `data: [DONE]` (or the error body) was written; undefined if it never ended. */
  endedAtMs?: number;
  status: number;
}

/** Timing of the answers, ms. */
export interface SessionServerOptions {
  firstTokenDelayMs?: number;
  gapMs?: number;
  slowGapMs?: number;
}

/** A running session server. */
export interface SessionServer {
  url: string;
  /** Every request so far, in arrival order. */
  log: LoggedTurn[];
  /** Most responses open at once. */
  peakInFlight(): number;
  close(): Promise<void>;
}

const epoch = () => performance.timeOrigin + performance.now();

/** The answer the server gives to `lastUser`. */
export function answerTo(lastUser: string): string {
  return `re: ${lastUser}`;
}

/** Start a session server (see the module comment). */
export async function startSessionServer(o: SessionServerOptions = {}): Promise<SessionServer> {
  const log: LoggedTurn[] = [];
  const sockets = new Set<Socket>();
  let inFlight = 0;
  let peak = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', object: 'model', max_model_len: 4096 }] }));
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end('{"detail":"Not Found"}');
    }
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { messages: LoggedTurn['messages'] };
      const entry: LoggedTurn = {
        requestId: String(req.headers['x-request-id']),
        messages: body.messages,
        receivedAtMs: epoch(),
        status: 200,
      };
      log.push(entry);
      const last = [...body.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
      if (last.includes('FAIL')) {
        entry.status = 500;
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(errorBody({ message: 'scripted failure', type: 'InternalServerError', param: null, code: 500 })));
        entry.endedAtMs = epoch();
        return;
      }
      inFlight++;
      peak = Math.max(peak, inFlight);
      res.on('close', () => inFlight--);
      const words = answerTo(last).split(' ');
      const head = chunkHead({ api: 'chat', id: `chatcmpl-${entry.requestId}`, created: 0, model: 'scripted' });
      const gap = last.includes('SLOW') ? (o.slowGapMs ?? 200) : (o.gapMs ?? 2);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sseData(chunkJson('chat', head, { role: true })));
      const step = (k: number) => {
        if (res.destroyed) return;
        if (k === words.length) {
          const usage = usageJson({ promptTokens: 10, completionTokens: words.length });
          res.write(sseData(usageChunkJson(head, usage)));
          res.end(SSE_DONE);
          entry.endedAtMs = epoch();
          return;
        }
        const text = k === 0 ? words[0] : ` ${words[k]}`;
        const finishReason = k === words.length - 1 ? 'stop' : undefined;
        res.write(sseData(chunkJson('chat', head, { text, ...(finishReason ? { finishReason } : {}) })));
        setTimeout(() => step(k + 1), gap);
      };
      setTimeout(() => step(0), o.firstTokenDelayMs ?? 2);
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    log,
    peakInFlight: () => peak,
    close: async () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
