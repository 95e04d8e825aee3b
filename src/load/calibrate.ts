/**
 * `calibrateClient`: measure the measurer. Before trusting a latency number, find the limit of
 * the machine that takes it: how many SSE events per second LoadLab's own client (`createClient`)
 * handles, and how late it stamps them.
 *
 * A null server (`./null-server.ts`) runs in a SEPARATE child process and streams vLLM-shaped
 * chat chunks with no model behind them, each carrying its send time (epoch ms). Our real client
 * stamps every chunk's arrival on the same kind of clock, so per chunk:
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
import { join } from 'node:path';
import { createClient } from '../client/client';
import { spawnChild } from '../proc/child';
import { stepTimeMs } from '../sim/cost';
import { percentiles } from '../stats/percentile';
import type { RequestRecord } from '../types';
import { startClientHealth } from './health';
import { epochMinusRealtimeMs, NULL_SERVER_MARKER, NULL_SERVER_MODEL } from './null-server';

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

/** One pass of the calibration. */
export interface CalibrationPass {
  mode: 'paced' | 'flat-out';
  /** Concurrent streams. */
  concurrency: number;
  /** Step gap, ms (0 = flat out). */
  gapMs: number;
  /** What the server meant to send, token events/s (NaN flat out). */
  offeredEventsPerSec: number;
  /** Token events the client received per second of the pass. */
  eventsPerSec: number;
  /** Token events received. */
  events: number;
  /** Requests that did not end `ok`. */
  failed: number;
  /** Arrival − send per token chunk, ms (flat out this includes the socket backlog). */
  stampErrorP50Ms: number;
  stampErrorP99Ms: number;
  stampErrorMaxMs: number;
  /** The client's event-loop delay p99 during the pass, ms. */
  eventLoopDelayP99Ms: number;
  /** The client process's CPU over the pass, % of one core. */
  clientCpuPercent: number;
  /** The null server's CPU over the pass, % of one core. */
  serverCpuPercent: number;
  /** Wall time of the pass, s. */
  seconds: number;
  /** Paced: no failure and stamp error p99 ≤ the limit. Flat out: no failure. */
  keptUp: boolean;
}

/** What {@link calibrateClient} found. */
export interface ClientCalibration {
  passes: CalibrationPass[];
  /** Most token events/s the client handled in any pass (normally the flat-out pass). */
  ceilingEventsPerSec: number;
  /** The busiest paced pass that kept up (undefined when none did). */
  keptUpTo?: { concurrency: number; eventsPerSec: number; stampErrorP99Ms: number };
  /** The first paced pass that did not keep up. */
  fellBehindAt?: { concurrency: number; eventsPerSec: number; stampErrorP99Ms: number };
  /** Every paced pass kept up. */
  ok: boolean;
  /** Stamp error limit used, ms. */
  stampLimitMs: number;
  /** Child epoch clock minus this process's, ms (already corrected in the stamp errors). */
  clockOffsetMs: number;
  /** Start-up of the null server process, s. */
  startupSeconds: number;
  /** Whole call, s. */
  wallSeconds: number;
  /** Logical cores, and the 1-minute load average (the higher of start and end). */
  cores: number;
  loadAverage1m: number;
  /** PID of the null server process (gone when the call returns). */
  serverPid: number;
  /** The verdict in plain words. */
  verdict: string;
}

const epochNow = () => performance.timeOrigin + performance.now();

/** The modelled 4090 decode step for `c` streams at 256 tokens of context, ms (rounded to 0.1). */
export function modelledStepMs(c: number): number {
  const ms = stepTimeMs({ decodes: c, decodeContextTokens: 256 * c, prefillTokens: 0, prefillAttnPairs: 0, sampled: c });
  return Math.round(ms * 10) / 10;
}

interface Child {
  pid: number;
  baseUrl: string;
  offsetMs: number;
  stop(): Promise<void>;
}

/** Spawn the null server (own process, `src/proc/child.ts` kill policy) and wait for its marker line. */
async function spawnNullServer(timeoutMs = 20_000): Promise<Child> {
  const c = await spawnChild({
    entry: join('src', 'load', 'null-server.ts'),
    env: { LOADLAB_NULL_SERVER_MAIN: '1' },
    marker: NULL_SERVER_MARKER,
    name: 'the null server',
    startupTimeoutMs: timeoutMs,
    graceMs: 2000,
    portOf: (payload) => ({ port: Number(payload.split(/\s+/)[0]) }),
  });
  const [port, offset] = c.payload.split(/\s+/);
  return { pid: c.pid, baseUrl: `http://127.0.0.1:${port}`, offsetMs: Number(offset), stop: c.stop };
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

const round = (x: number, d = 3) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);

function checkOptions(o: CalibrateOptions): void {
  if (o.seconds !== undefined && !(typeof o.seconds === 'number' && o.seconds >= 1 && o.seconds <= 120)) {
    throw new TypeError(`seconds must be a number from 1 to 120 such as 5, got ${String(o.seconds)}`);
  }
  for (const c of o.concurrencies ?? []) {
    if (!Number.isInteger(c) || c < 1 || c > 4096) throw new TypeError(`concurrencies must be integers from 1 to 4096 such as [1, 16, 64], got ${c}`);
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
  const gapOf = (c: number) => {
    const g = typeof opts.gapMs === 'function' ? opts.gapMs(c) : (opts.gapMs ?? modelledStepMs(c));
    if (!(g > 0)) throw new TypeError(`gapMs must be > 0 ms, got ${g} for ${c} streams`);
    return g;
  };
  const load0 = loadavg()[0] ?? 0;
  const child = await spawnNullServer();
  const startupSeconds = (performance.now() - t0) / 1000;
  const offsetMs = child.offsetMs - epochMinusRealtimeMs();
  const maxStreams = Math.max(flatStreams, ...concurrencies);
  const client = createClient({ baseUrl: child.baseUrl, model: NULL_SERVER_MODEL, connections: maxStreams, now: epochNow, idleTimeoutMs: 10_000 });
  const passes: CalibrationPass[] = [];
  let index = 0;
  const send = (tokens: number, gapMs: number, durationMs: number): Promise<RequestRecord> =>
    client.send(
      { messages: [{ role: 'user', content: 'hi' }], maxTokens: tokens, extraBody: { null_gap_ms: gapMs, null_duration_ms: durationMs } },
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
      ...concurrencies.map((c) => ({ mode: 'paced' as const, c, gap: gapOf(c) })),
      ...(flatStreams > 0 ? [{ mode: 'flat-out' as const, c: flatStreams, gap: 0 }] : []),
    ];
    for (const p of plan) {
      const tokens = p.gap > 0 ? Math.max(3, Math.floor(passMs / p.gap)) : 1_000_000;
      await getJson(`${child.baseUrl}/stats`); // reset the server's CPU window
      const health = startClientHealth();
      const start = performance.now();
      const records = await Promise.all(Array.from({ length: p.c }, () => send(tokens, p.gap, passMs)));
      const wallMs = performance.now() - start;
      const h = health.stop();
      const server = await getJson<{ cpuMs: number; wallMs: number }>(`${child.baseUrl}/stats`);
      const sent = await getJson<Record<string, number[]>>(`${child.baseUrl}/sent`);
      const errors: number[] = [];
      let events = 0;
      let failed = 0;
      let first = Infinity;
      let last = -Infinity;
      for (const r of records) {
        if (!r.ok) failed++;
        events += r.chunkMs.length;
        first = Math.min(first, r.startMs);
        if (r.chunkMs.length) last = Math.max(last, r.chunkMs[r.chunkMs.length - 1]);
        const times = sent[r.requestId] ?? [];
        const n = Math.min(times.length, r.chunkMs.length);
        for (let k = 0; k < n; k++) errors.push(r.chunkMs[k] - times[k] + offsetMs);
      }
      const [p50, p99, max] = percentiles(errors, [50, 99, 100]);
      const windowS = Number.isFinite(last - first) && last > first ? (last - first) / 1000 : wallMs / 1000;
      const pass: CalibrationPass = {
        mode: p.mode,
        concurrency: p.c,
        gapMs: p.gap,
        offeredEventsPerSec: p.gap > 0 ? round((p.c * 1000) / p.gap, 0) : NaN,
        eventsPerSec: round(events / windowS, 0),
        events,
        failed,
        stampErrorP50Ms: round(p50),
        stampErrorP99Ms: round(p99),
        stampErrorMaxMs: round(max),
        eventLoopDelayP99Ms: round(h.eventLoopDelayP99Ms, 2),
        clientCpuPercent: round(h.cpuPercentOfOneCore, 0),
        serverCpuPercent: round(server.wallMs > 0 ? (server.cpuMs / server.wallMs) * 100 : NaN, 0),
        seconds: round(wallMs / 1000, 2),
        keptUp: failed === 0 && (p.mode === 'flat-out' || p99 <= limit),
      };
      passes.push(pass);
    }
  } finally {
    await client.close().catch(() => undefined);
    await child.stop();
  }
  const paced = passes.filter((p) => p.mode === 'paced');
  const pick = (p: CalibrationPass) => ({ concurrency: p.concurrency, eventsPerSec: p.eventsPerSec, stampErrorP99Ms: p.stampErrorP99Ms });
  const kept = paced.filter((p) => p.keptUp);
  const busiest = kept.reduce<CalibrationPass | undefined>((b, p) => (!b || p.eventsPerSec > b.eventsPerSec ? p : b), undefined);
  const behind = paced.find((p) => !p.keptUp);
  const result: ClientCalibration = {
    passes,
    ceilingEventsPerSec: Math.max(0, ...passes.map((p) => p.eventsPerSec)),
    ...(busiest ? { keptUpTo: pick(busiest) } : {}),
    ...(behind ? { fellBehindAt: pick(behind) } : {}),
    ok: paced.length > 0 && !behind,
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

/** The plain-words verdict of a calibration (English; notebooks may phrase their own). Pure. */
export function calibrationVerdict(c: Omit<ClientCalibration, 'verdict'>): string {
  const f0 = (x: number) => Math.round(x).toLocaleString('en-US');
  const streams = (n: number) => `${n} stream${n === 1 ? '' : 's'}`;
  const flat = c.passes.find((p) => p.mode === 'flat-out');
  const parts: string[] = [];
  if (flat) {
    parts.push(
      `Flat out, this client handled ${f0(flat.eventsPerSec)} SSE events/s over ${streams(flat.concurrency)} ` +
        `(client CPU ${f0(flat.clientCpuPercent)} %, null server ${f0(flat.serverCpuPercent)} % of a core` +
        (flat.serverCpuPercent >= 85 ? '; the server side was the limit, so the client can do more' : '') + ').',
    );
  }
  if (c.ok && c.keptUpTo) {
    parts.push(
      `Paced like a GPU decoding (one chunk per stream per step), it kept up at every concurrency tried, up to ` +
        `${streams(c.keptUpTo.concurrency)} (${f0(c.keptUpTo.eventsPerSec)} events/s) with a stamp error p99 of ` +
        `${c.keptUpTo.stampErrorP99Ms.toFixed(2)} ms (limit ${c.stampLimitMs} ms): timings from this machine are trustworthy at that load.`,
    );
  } else if (c.fellBehindAt) {
    parts.push(
      `It fell behind at ${streams(c.fellBehindAt.concurrency)} (${f0(c.fellBehindAt.eventsPerSec)} events/s): chunks were ` +
        `stamped ${c.fellBehindAt.stampErrorP99Ms.toFixed(2)} ms late at p99 (limit ${c.stampLimitMs} ms), so TTFT and ITL ` +
        `measured at that load include that much of the client's own delay.` +
        (c.keptUpTo ? ` At ${streams(c.keptUpTo.concurrency)} it kept up.` : ''),
    );
    const pass = c.passes.find((p) => p.mode === 'paced' && p.concurrency === c.fellBehindAt?.concurrency);
    if (pass && pass.clientCpuPercent < 50) {
      parts.push(
        `The client itself used only ${f0(pass.clientCpuPercent)} % of a core in that pass, so the delay came from other ` +
          `programs taking the CPU (or too few cores), not from parsing: close them and calibrate again.`,
      );
    } else {
      parts.push('Run fewer streams per process, or give the client a core of its own.');
    }
  }
  if (c.loadAverage1m > c.cores) parts.push(`The machine was busy (load average ${c.loadAverage1m.toFixed(2)} on ${c.cores} cores).`);
  return parts.join(' ');
}
