/**
 * The four readers of the client yardstick (bench/client-yardstick.ts), each reading C streams of
 * the null server (src/calibrate/null-server.ts) at once and returning its arrival stamps:
 * - `bare`: raw `net` sockets that only stamp and count `'data'` callbacks (the floor);
 * - `onread`: the same with Node's `onread` option, the read LoadLab's lean pool uses;
 * - `undici`: an undici Pool with a handler that only stamps `onResponseData`;
 * - `ours`: LoadLab's client (`createClient().send`: stamp, SSE, JSON, record);
 * - `aiohttp`: bench/aiohttp_reader.py, timed like vLLM's benchmark, in its own Python process (./aiohttp-reader.ts);
 * - `run`: one whole `loadlab run` process (bench/whole-process.ts), start-up included.
 * Every reader opens its connections first (one tiny request each), so connects are not timed.
 * CPU is this process's `process.cpuUsage()` over the timed pass (Python: `resource.getrusage`).
 */
import { connect, type NetConnectOpts, type Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool, type Dispatcher } from 'undici';
import { createClient } from '../src/client/client';
import { NULL_SERVER_MODEL } from '../src/calibrate/null-server';

/** What one reader measured in one pass. */
export interface ReaderPass {
  /** CPU of the reader over the timed pass, ms (user + system). */
  cpuMs: number;
  wallMs: number;
  /** Inter-arrival gaps of each stream's token events as this reader sees them, ms. */
  itlMs: number[];
  /** Event-loop delay p99 over the pass, ms (NaN when not measured: the Python reader). */
  loopDelayP99Ms: number;
  /** Streams that ended cleanly. */
  ok: number;
  /** Of `cpuMs`, the kernel's (system time), ms. */
  systemMs: number;
  /** Whole process CPU, start-up included (the aiohttp reader and the whole `loadlab run`), ms. */
  processCpuMs?: number;
  /** The request-id prefix the reader actually used, when it is not the pass's (`loadlab run` picks its own). */
  idPrefix?: string;
}

/** A pass to read: `streams` × `tokens` at `gapMs` lockstep steps; request ids `<prefix>-<i>`. */
export interface PassSpec {
  baseUrl: string;
  port: number;
  streams: number;
  tokens: number;
  gapMs: number;
  prefix: string;
}

const body = (tokens: number, gapMs: number) =>
  JSON.stringify({
    model: NULL_SERVER_MODEL,
    messages: [{ role: 'user', content: 'hi' }],
    max_tokens: tokens,
    stream: true,
    stream_options: { include_usage: true, continuous_usage_stats: true },
    null_gap_ms: gapMs,
  });

/** Gaps between consecutive stamps of each stream, ms. */
export function gaps(stamps: number[][]): number[] {
  const out: number[] = [];
  for (const s of stamps) for (let k = 1; k < s.length; k++) out.push(s[k] - s[k - 1]);
  return out;
}

/** The event-loop delay timer's interval, ms; Node's histogram holds whole intervals, so it is subtracted. */
const LOOP_RESOLUTION_MS = 1;

/** Time `fn` (CPU, wall, event-loop delay beyond the 1 ms timer interval). */
async function timed(fn: () => Promise<{ stamps: number[][]; ok: number }>): Promise<ReaderPass> {
  const h = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  h.enable();
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  const { stamps, ok } = await fn();
  const c = process.cpuUsage(c0);
  const wallMs = performance.now() - w0;
  h.disable();
  return {
    cpuMs: (c.user + c.system) / 1000,
    systemMs: c.system / 1000,
    wallMs,
    itlMs: gaps(stamps),
    loopDelayP99Ms: h.percentile(99) / 1e6 - LOOP_RESOLUTION_MS, // samples are whole intervals
    ok,
  };
}

function request(p: PassSpec, id: string, tokens: number, gapMs: number, close: boolean): string {
  const b = body(tokens, gapMs);
  return (
    `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:${p.port}\r\ncontent-type: application/json\r\n` +
    `x-request-id: ${id}\r\ncontent-length: ${Buffer.byteLength(b)}\r\nconnection: ${close ? 'close' : 'keep-alive'}\r\n\r\n${b}`
  );
}

/** `n` raw sockets to 127.0.0.1:`port` (no Nagle), each connected; `extra(i)` adds to socket i's connect options. */
export function openSockets(port: number, n: number, extra?: (i: number) => Partial<NetConnectOpts>): Promise<Socket[]> {
  const one = (_: unknown, i: number) =>
    new Promise<Socket>((resolve, reject) => {
      const s: Socket = connect({ port, host: '127.0.0.1', noDelay: true, ...extra?.(i) }, () => resolve(s));
      s.once('error', reject);
    });
  return Promise.all(Array.from({ length: n }, one));
}

/**
 * The timed pass of the raw-socket readers: each socket sends its request with `connection: close` and is read
 * until the server closes; `watch` (when given) attaches the reader's stamping first. Token events = stamps after
 * the one with the headers (the tail's usage chunk and `[DONE]` may add a read or two).
 */
function closePass(
  p: PassSpec,
  socks: Socket[],
  stamps: number[][],
  watch?: (s: Socket, mine: number[]) => void,
): Promise<ReaderPass> {
  return timed(async () => {
    let ok = 0;
    await Promise.all(
      socks.map(
        (s, i) =>
          new Promise<void>((resolve) => {
            watch?.(s, stamps[i]);
            s.on('end', () => {
              ok++;
              stamps[i].shift(); // the headers' read
              resolve();
            });
            s.on('error', () => resolve());
            s.write(request(p, `${p.prefix}-${i}`, p.tokens, p.gapMs, true));
          }),
      ),
    );
    for (const s of socks) s.destroy();
    return { stamps, ok };
  });
}

/** The floor: C raw sockets, connected first, that stamp every `'data'` callback (see {@link closePass}). */
export async function bareReader(p: PassSpec): Promise<ReaderPass> {
  const socks = await openSockets(p.port, p.streams);
  const stamps = socks.map(() => [] as number[]);
  return closePass(p, socks, stamps, (s, mine) =>
    s.on('data', () => {
      mine.push(performance.now());
    }),
  );
}

/**
 * The floor with Node's `onread` (the read primitive of LoadLab's lean pool, src/client/h1-conn.ts): as `bare`,
 * but each read lands in one reused buffer and calls back directly, with no `Buffer` per read and no `'data'`
 * event. The floor is `bare`; this one says how much of our margin over it is the cheaper read itself.
 */
export async function onreadReader(p: PassSpec): Promise<ReaderPass> {
  const buffer = Buffer.allocUnsafe(64 * 1024);
  const stamps = Array.from({ length: p.streams }, () => [] as number[]);
  const onread = (i: number) => ({
    onread: {
      buffer,
      callback: () => {
        stamps[i].push(performance.now());
        return true;
      },
    },
  });
  return closePass(p, await openSockets(p.port, p.streams, onread), stamps);
}

function undiciOne(pool: Pool, _p: PassSpec, id: string, tokens: number, gapMs: number, stamps: number[]): Promise<boolean> {
  return new Promise((resolve) => {
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: () => {},
      onResponseStart: () => {},
      onResponseData: () => {
        stamps.push(performance.now());
      },
      onResponseEnd: () => resolve(true),
      onResponseError: () => resolve(false),
    };
    const headers = { 'content-type': 'application/json', 'x-request-id': id };
    pool.dispatch({ path: '/v1/chat/completions', method: 'POST', headers, body: body(tokens, gapMs) }, handler);
  });
}

/** undici with a handler that only stamps each body chunk (no decoding, no parsing). */
export async function undiciReader(p: PassSpec): Promise<ReaderPass> {
  const pool = new Pool(p.baseUrl, { connections: p.streams, headersTimeout: 0, bodyTimeout: 0 });
  const none: number[] = [];
  await Promise.all(Array.from({ length: p.streams }, (_, i) => undiciOne(pool, p, `uw-${i}`, 1, 0, none)));
  try {
    return await timed(async () => {
      const stamps = Array.from({ length: p.streams }, () => [] as number[]);
      const res = await Promise.all(stamps.map((s, i) => undiciOne(pool, p, `${p.prefix}-${i}`, p.tokens, p.gapMs, s)));
      return { stamps, ok: res.filter(Boolean).length };
    });
  } finally {
    await pool.close();
  }
}

/** LoadLab's client: `createClient().send`, records and all; ITL from each record's token-chunk stamps. */
export async function oursReader(p: PassSpec): Promise<ReaderPass> {
  const client = createClient({ baseUrl: p.baseUrl, model: NULL_SERVER_MODEL, connections: p.streams });
  const spec = (tokens: number, gapMs: number) => ({
    messages: [{ role: 'user' as const, content: 'hi' }],
    maxTokens: tokens,
    extraBody: { null_gap_ms: gapMs },
  });
  const now = performance.now();
  await Promise.all(
    Array.from({ length: p.streams }, (_, i) =>
      client.send(spec(1, 0), { index: i, intendedStartMs: now, requestId: `ow-${i}` }),
    ),
  );
  try {
    return await timed(async () => {
      const t0 = performance.now();
      const recs = await Promise.all(
        Array.from({ length: p.streams }, (_, i) =>
          client.send(spec(p.tokens, p.gapMs), { index: i, intendedStartMs: t0, requestId: `${p.prefix}-${i}` }),
        ),
      );
      return { stamps: recs.map((r) => r.chunkMs), ok: recs.filter((r) => r.ok).length };
    });
  } finally {
    await client.close();
  }
}
