/**
 * `calibrateClient`: measure the measurer. Before trusting a latency number, find the limit of
 * the machine that takes it: how many SSE events per second LoadLab's own client (`createClient`)
 * handles, and how late it stamps them.
 *
 * A null server (`./null-server.ts`) runs in a SEPARATE child process and streams vLLM-shaped
 * chat chunks with no model behind them, and logs the time just before each went into its socket (epoch ms, `GET
 * /sent`). Our real client stamps every chunk's arrival on the same kind of clock, so per chunk:
 *
 *   stamp error = arrival (client) − send (server) + clock offset between the two processes
 *
 * which is the loopback hop plus every delay of the client's own (event loop, parsing, GC).
 * The offset comes from both processes reading their epoch stamp at a `Date.now()` tick.
 *
 * Passes, in order, sharing the time budget:
 * - paced (default 1, 16, 64, 128 streams): chunks in lockstep, one per stream per step, the step
 *   being what a 4090 would take to decode that batch (`stepTimeMs`, context 256), i.e. the rate
 *   a real server would send at that concurrency;
 * - flat out (16 streams): the server writes as fast as the sockets drain; the events/s handled is
 *   the client's ceiling on this machine (the server process's CPU is reported beside it: if it is
 *   near 100 %, the ceiling is the server's, and the client's is higher).
 * Each pass also reports the client's event-loop delay p99 and CPU (`startClientHealth`).
 */
import { cpus, loadavg } from 'node:os';
import { createClient } from '../client/client';
import { stepTimeMs } from '../sim/engine/cost';
import type { RequestRecord } from '../types';
import {
  calibrationPass,
  calibrationVerdict,
  judgePasses,
  passFigures,
  round,
  type CalibrationPass,
  type ClientCalibration,
} from './calibrate-result';
import { startClientHealth } from '../runner/health';
import { NULL_SERVER_MODEL, spawnNullServer } from './null-server';

export { calibrationVerdict, type CalibrationPass, type ClientCalibration } from './calibrate-result';

/** Options of {@link calibrateClient}. */
export interface CalibrateOptions {
  /**
   * Wall-time budget, s, start-up of the child process included; default 5. The passes share
   * what is left after start-up (at least 0.15 s each). `seconds: 2` is a quick check.
   */
  seconds?: number;
  /** Concurrent streams of the paced passes; default `[1, 16, 64, 128]`. */
  concurrencies?: number[];
  /** Step gap of the paced passes, ms: a number, or per concurrency; default the modelled 4090 decode step. */
  gapMs?: number | ((concurrency: number) => number);
  /** Streams of the flat-out pass, 0 = no flat-out pass; default 16. */
  flatOutStreams?: number;
  /** A paced pass keeps up when its stamp error p99 is at most this, ms; default 2. */
  stampLimitMs?: number;
}

const epochNow = () => performance.timeOrigin + performance.now();

/** The modelled 4090 decode step for `c` streams at 256 tokens of context, ms (rounded to 0.1). */
export function modelledStepMs(c: number): number {
  const ms = stepTimeMs({ decodes: c, decodeContextTokens: 256 * c, prefillTokens: 0, prefillAttnPairs: 0, sampled: c });
  return Math.round(ms * 10) / 10;
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

function checkOptions(o: CalibrateOptions): void {
  if (o.seconds !== undefined && !(typeof o.seconds === 'number' && o.seconds >= 1 && o.seconds <= 120)) {
    throw new TypeError(`seconds must be a number from 1 to 120 such as 5, got ${String(o.seconds)}`);
  }
  for (const c of o.concurrencies ?? []) {
    if (!Number.isInteger(c) || c < 1 || c > 4096)
      throw new TypeError(`concurrencies must be integers from 1 to 4096 such as [1, 16, 64], got ${c}`);
  }
  const f = o.flatOutStreams;
  if (f !== undefined && !(Number.isInteger(f) && f >= 0 && f <= 4096)) {
    throw new TypeError(`flatOutStreams must be an integer from 0 to 4096 (0 = no flat-out pass), got ${f}`);
  }
}

/**
 * Measure this machine's client ceiling against a null SSE server in a child process (see the
 * module comment). Takes about `seconds` (default 5) and always stops the child, also on error.
 * @throws when the options are out of range or the child does not start.
 */
export async function calibrateClient(opts: CalibrateOptions = {}): Promise<ClientCalibration> {
  checkOptions(opts);
  const t0 = performance.now();
  const budgetMs = (opts.seconds ?? 5) * 1000;
  const concurrencies = opts.concurrencies ?? [1, 16, 64, 128];
  const flatStreams = opts.flatOutStreams ?? 16;
  const limit = opts.stampLimitMs ?? 2;
  const load0 = loadavg()[0] ?? 0;
  const child = await spawnNullServer();
  const startupSeconds = (performance.now() - t0) / 1000;
  const offsetMs = child.offsetMs;
  const maxStreams = Math.max(flatStreams, ...concurrencies);
  const client = createClient({
    baseUrl: child.baseUrl,
    model: NULL_SERVER_MODEL,
    connections: maxStreams,
    now: epochNow,
    idleTimeoutMs: 10_000,
  });
  const passes: CalibrationPass[] = [];
  let index = 0;
  const send: SendFn = (tokens, gapMs, durationMs) =>
    client.send(
      {
        messages: [{ role: 'user', content: 'hi' }],
        maxTokens: tokens,
        extraBody: { null_gap_ms: gapMs, null_duration_ms: durationMs },
      },
      { index: index++, intendedStartMs: epochNow() },
    );
  try {
    // Warm-up: connections, JIT, the server's first request.
    await Promise.all(Array.from({ length: Math.min(maxStreams, 16) }, () => send(3, 1, 1000)));
    await getJson(`${child.baseUrl}/sent`);
    const nPasses = concurrencies.length + (flatStreams > 0 ? 1 : 0);
    const leftMs = budgetMs - (performance.now() - t0) - 150 * nPasses; // ~150 ms of bookkeeping per pass
    const passMs = Math.max(150, leftMs / Math.max(1, nPasses));
    const plan = [
      ...concurrencies.map((c) => ({ mode: 'paced' as const, c, gap: gapOf(opts, c) })),
      ...(flatStreams > 0 ? [{ mode: 'flat-out' as const, c: flatStreams, gap: 0 }] : []),
    ];
    for (const p of plan) passes.push(await runPass(child.baseUrl, send, { ...p, passMs, offsetMs, limit }));
  } finally {
    await client.close().catch(() => undefined);
    await child.stop();
  }
  const result: ClientCalibration = {
    passes,
    ...judgePasses(passes),
    stampLimitMs: limit,
    clockOffsetMs: round(offsetMs, 4),
    startupSeconds: round(startupSeconds, 2),
    wallSeconds: round((performance.now() - t0) / 1000, 2),
    cores: cpus().length,
    loadAverage1m: round(Math.max(load0, loadavg()[0] ?? 0), 2),
    serverPid: child.pid,
    verdict: '',
  };
  result.verdict = calibrationVerdict(result);
  return result;
}

/** The step gap of a paced pass at `c` streams, ms (`opts.gapMs`, else the modelled 4090 step). */
function gapOf(opts: CalibrateOptions, c: number): number {
  const g = typeof opts.gapMs === 'function' ? opts.gapMs(c) : (opts.gapMs ?? modelledStepMs(c));
  if (!(g > 0)) throw new TypeError(`gapMs must be > 0 ms, got ${g} for ${c} streams`);
  return g;
}

type SendFn = (tokens: number, gapMs: number, durationMs: number) => Promise<RequestRecord>;

/** One pass: `c` streams for `passMs` at step `gap` (0 = flat out), with the client's and the server's CPU. */
async function runPass(
  baseUrl: string,
  send: SendFn,
  p: { mode: 'paced' | 'flat-out'; c: number; gap: number; passMs: number; offsetMs: number; limit: number },
): Promise<CalibrationPass> {
  const tokens = p.gap > 0 ? Math.max(3, Math.floor(p.passMs / p.gap)) : 1_000_000;
  await getJson(`${baseUrl}/stats`); // reset the server's CPU window
  const health = startClientHealth();
  const start = performance.now();
  const records = await Promise.all(Array.from({ length: p.c }, () => send(tokens, p.gap, p.passMs)));
  const wallMs = performance.now() - start;
  const h = health.stop();
  const server = await getJson<{ cpuMs: number; wallMs: number }>(`${baseUrl}/stats`);
  const sent = await getJson<Record<string, number[]>>(`${baseUrl}/sent`);
  return calibrationPass(passFigures(records, sent, p.offsetMs, wallMs), {
    mode: p.mode,
    concurrency: p.c,
    gapMs: p.gap,
    eventLoopDelayP99Ms: h.eventLoopDelayP99Ms,
    cpuPercentOfOneCore: h.cpuPercentOfOneCore,
    server,
    wallMs,
    limitMs: p.limit,
    ...(h.stall ? { stallCause: h.stall.cause } : {}),
  });
}
