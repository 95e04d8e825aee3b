/**
 * The four readers of the client yardstick (bench/client-yardstick.ts), each reading C streams of
 * the null server (src/calibrate/null-server.ts) at once and returning its arrival stamps:
 * - `bare`: raw `net` sockets that only stamp and count `'data'` callbacks (the floor);
 * - `undici`: an undici Pool with a handler that only stamps `onResponseData`;
 * - `ours`: LoadLab's client (`createClient().send`: stamp, SSE, JSON, record);
 * - `aiohttp`: bench/aiohttp_reader.py, timed like vLLM's benchmark, in its own Python process;
 * - `run`: one whole `loadlab run` process (bench/whole-process.ts), start-up included.
 * Every reader opens its connections first (one tiny request each), so connects are not timed.
 * CPU is this process's `process.cpuUsage()` over the timed pass (Python: `resource.getrusage`).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Pool, type Dispatcher } from 'undici';
import { createClient } from '../src/client/client';
import { NULL_SERVER_MODEL } from '../src/calibrate/null-server';
import { fromRoot } from '../src/paths';

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

/** `n` raw sockets to 127.0.0.1:`port` (no Nagle), each connected. */
export function openSockets(port: number, n: number): Promise<Socket[]> {
  const one = () =>
    new Promise<Socket>((resolve, reject) => {
      const s: Socket = connect({ port, host: '127.0.0.1', noDelay: true }, () => resolve(s));
      s.once('error', reject);
    });
  return Promise.all(Array.from({ length: n }, one));
}

/**
 * The floor: C raw sockets, connected first; each sends its request with `connection: close` and
 * stamps every `'data'` callback until the server closes. Token events = callbacks after the one
 * with the headers (the tail's usage chunk and `[DONE]` may add a callback or two).
 */
export async function bareReader(p: PassSpec): Promise<ReaderPass> {
  const socks = await openSockets(p.port, p.streams);
  return timed(async () => {
    const stamps = socks.map(() => [] as number[]);
    let ok = 0;
    await Promise.all(
      socks.map(
        (s, i) =>
          new Promise<void>((resolve) => {
            const mine = stamps[i];
            s.on('data', () => {
              mine.push(performance.now());
            });
            s.on('end', () => {
              ok++;
              mine.shift(); // the headers' callback
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

/** Debian's Python with aiohttp (pyenv's `python3` on PATH lacks it). */
export const PYTHON = '/usr/bin/python3';

/** Why the aiohttp reader cannot run here, or undefined when it can. */
export async function aiohttpMissing(): Promise<string | undefined> {
  if (!existsSync(PYTHON)) return `${PYTHON} not found`;
  const code = await new Promise<number | null>((resolve) => {
    const c = spawn(PYTHON, ['-c', 'import aiohttp'], { stdio: 'ignore' });
    c.on('exit', resolve);
    c.on('error', () => resolve(-1));
  });
  return code === 0 ? undefined : `${PYTHON} has no aiohttp (apt-get install python3-aiohttp)`;
}

/** The reference: bench/aiohttp_reader.py in its own process; CPU from its `getrusage`. */
export async function aiohttpReader(p: PassSpec): Promise<ReaderPass> {
  const cfg = {
    base_url: p.baseUrl,
    model: NULL_SERVER_MODEL,
    streams: p.streams,
    tokens: p.tokens,
    gap_ms: p.gapMs,
    prefix: p.prefix,
  };
  const child = spawn(PYTHON, [fromRoot('bench', 'aiohttp_reader.py'), JSON.stringify(cfg)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`aiohttp reader exited with ${code}: ${err.slice(-600)}`);
  const r = JSON.parse(out) as {
    cpu_s: number;
    sys_s: number;
    wall_s: number;
    itl_ms: number[];
    ok: number;
    process_cpu_s: number;
  };
  return {
    cpuMs: r.cpu_s * 1000,
    systemMs: r.sys_s * 1000,
    wallMs: r.wall_s * 1000,
    itlMs: r.itl_ms,
    loopDelayP99Ms: NaN,
    ok: r.ok,
    processCpuMs: r.process_cpu_s * 1000,
  };
}
