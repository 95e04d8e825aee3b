/**
 * The client's own code, compiled before a run measures.
 *
 * V8 compiles a function the first time it runs, in every thread (no code is shared between worker
 * threads). A run's first response therefore ran the whole response path cold: undici's header and
 * body handling, the chunk parser, the stamps, the record. On lesson 08's long-plus-short point
 * (21 requests, 210 token chunks), the first token chunk of the run was stamped 1.9–2.4 ms late although
 * the thread was otherwise idle, and the last chunks of the first streams to end were 2–4 ms late: the
 * point's p99 rests on its latest 3 chunks. With this warm-up, 8 alternating pairs of that point against a fresh
 * simulator gave a stamp-lag p99 of 0.76–2.40 ms (median 1.35) against 2.19–4.65 ms (median 2.99) without
 * (bench/README.md §19). It costs about 70 ms of CPU per run, before the run's clock starts.
 *
 * `warmClient` runs that code before the run: rounds of a few streams of the run's first spec, sent by a client
 * made with the run's options to a stand-in server in this thread (127.0.0.1, port 0), which streams as vLLM
 * does (role chunk, token chunks, usage chunk, `[DONE]`). The target sees nothing, no key or header of the
 * run's is sent, and the records are dropped. It never throws; a warm-up that fails leaves the run cold.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RequestSpec } from '../types';
import { chunkHead, chunkJson, SSE_DONE, sseData, usageChunkJson, usageJson } from '../wire/chunks';
import { type ClientOptions, createClient } from './client';

/** Warm-up streams at once, each on its own connection (so the connect path is compiled too). */
export const WARM_STREAMS = 4;

/** Rounds of `WARM_STREAMS` streams; later rounds reuse the connections, as a run's requests do. */
export const WARM_ROUNDS = 4;

/** Token chunks per warm-up stream, each written in its own loop turn. */
export const WARM_TOKENS = 16;

/** A warm-up that takes longer than this is abandoned (the run then starts cold), ms. */
export const WARM_TIMEOUT_MS = 5_000;

/** What a warm-up did. */
export interface WarmUp {
  /** Every warm-up request ended as an ok record with all its token chunks. */
  ok: boolean;
  /** Wall time, ms. */
  ms: number;
}

/** Compile the client's request and response path with `opts` (the run's client options) and `spec`. */
export async function warmClient(opts: ClientOptions, spec: RequestSpec): Promise<WarmUp> {
  const t0 = performance.now();
  const api = spec.api ?? 'chat';
  const server = createServer((req, res) => streamWarm(req, res, api, opts.model));
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), WARM_TIMEOUT_MS);
  let ok = false;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const { apiKey: _key, headers: _headers, ...rest } = opts;
    const client = createClient({ ...rest, apiKey: '', baseUrl: `http://127.0.0.1:${port}`, connections: WARM_STREAMS });
    try {
      ok = true;
      for (let round = 0; round < WARM_ROUNDS; round++) {
        const sends = Array.from({ length: WARM_STREAMS }, (_, i) =>
          client.send(spec, { index: -1 - i, warmup: true, intendedStartMs: performance.now(), signal: stop.signal }),
        );
        for (const r of await Promise.all(sends)) ok &&= r.ok && r.chunkMs.length === WARM_TOKENS;
      }
    } finally {
      await client.close();
    }
  } catch {
    ok = false;
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return { ok, ms: performance.now() - t0 };
}

/** The stand-in's answer: the body read, then a vLLM-shaped stream of `WARM_TOKENS` token chunks. */
function streamWarm(req: IncomingMessage, res: ServerResponse, api: 'chat' | 'completions', model: string): void {
  req.resume();
  req.once('end', () => {
    const head = chunkHead({ api, id: api === 'chat' ? 'chatcmpl-warm' : 'cmpl-warm', created: 0, model });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    if (api === 'chat') res.write(sseData(chunkJson(api, head, { role: true })));
    let k = 0;
    const next = (): void => {
      if (res.destroyed) return;
      k++;
      res.write(sseData(chunkJson(api, head, k < WARM_TOKENS ? { text: ' a' } : { text: ' a', finishReason: 'length' })));
      if (k < WARM_TOKENS) {
        setImmediate(next);
        return;
      }
      res.write(sseData(usageChunkJson(head, usageJson({ promptTokens: 1, completionTokens: WARM_TOKENS }))));
      res.end(SSE_DONE);
    };
    setImmediate(next);
  });
}
