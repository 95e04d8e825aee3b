/**
 * Client ceiling: how many SSE token events per second our client (createClient/send) handles,
 * and how late it stamps them, against the null server in a separate process
 * (`spawnNullServer`, src/calibrate/null-server.ts) that puts its send time in every chunk.
 *
 * Stamp error = client arrival stamp − server send stamp + the two processes' clock offset, both
 * stamps `performance.timeOrigin + performance.now()` on this host; stamp errors and events/s are
 * computed by `passFigures` (src/calibrate/calibrate-result.ts), the same definitions as
 * `calibrateClient`. The offset is measured against the system clock's ticks and reported.
 * `run({ quick: true })` (`npm run bench -- client --quick`) runs every pass shorter, as a smoke test.
 *
 * Passes, each at C concurrent streams:
 * - paced: C = 1, 64, 256, 1024 at gap max(5 ms, C/32 ms), i.e. up to 32,000 events/s offered, 3 s,
 *   each twice: lockstep (every stream's token on one server timer, as one engine step sends them)
 *   and spread (stream phases `null_phase_ms` spread over the gap);
 * - sweep: C = 256 spread at 4k, 8k, 16k, 32k events/s, to find where p99 ≤ 2 ms stops;
 * - memory: C streams at a 200 ms gap; at mid-stream a full GC, then (heap, external, rss) − baseline, / C;
 * - flat out: C = 64 and 256, gap 0 (the server writes as fast as the socket takes it).
 * Ideal: stamp error ≈ the loopback hop (tens of µs), nothing dropped, CPU well under one core.
 */

import { createClient } from '../src/client/client';
import { startClientHealth, type ClientHealth } from '../src/runner/health';
import type { RequestRecord, RequestSpec } from '../src/types';
import {
  dist,
  fmtDist,
  fullGc,
  getJson,
  loadLine,
  machine,
  pause,
  round,
  type BenchOptions,
  type BenchResult,
  type Dist,
} from './common';
import { NULL_SERVER_MODEL, spawnNullServer, type NullServerChild } from '../src/calibrate/null-server';
import { passFigures } from '../src/calibrate/calibrate-result';

const origin = performance.timeOrigin;
const epoch = () => origin + performance.now();
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const spec = (tokens: number, gapMs: number, batch = 1, phaseMs = 0): RequestSpec => ({
  messages: [{ role: 'user', content: 'hi' }],
  maxTokens: tokens,
  extraBody: { null_gap_ms: gapMs, null_batch: batch, null_phase_ms: phaseMs },
});

/** The null server's `GET /stats`: CPU and wall ms since the previous call, streams open now. */
interface ServerStats {
  open: number;
  peakOpen: number;
  tokenEvents: number;
  cpuMs: number;
  wallMs: number;
}

/** Pass lengths: the full run, and a short smoke run (`quick`). */
const FULL = { passS: 3, flatEvents: 200_000, memoryTokens: 20, memoryPauseMs: 2000 };
const QUICK = { passS: 0.5, flatEvents: 20_000, memoryTokens: 6, memoryPauseMs: 600 };
type Sizes = typeof FULL;

/** Figures of one timed pass. */
interface PassResult {
  /** lockstep: every stream's token at the same instant (like one engine step); spread: phases spread over the gap; flat-out: gap 0. */
  mode: 'lockstep' | 'spread' | 'flat-out';
  streams: number;
  gapMs: number;
  tokensPerStream: number;
  offeredEventsPerSec: number | null;
  eventsPerSec: number;
  tokenEvents: number;
  dropped: number;
  failed: number;
  stampErrorMs: Dist;
  clientCpuMsPer1kEvents: number;
  clientCpuPercent: number;
  eventLoopDelayMs: { p50: number; p99: number; max: number };
  serverCpuPercent: number;
  loadAverage1m: number;
}

/**
 * Offset of the server's epoch stamps from ours, ms, two ways: both against the system clock's
 * ticks (µs-exact, `spawnNullServer`'s `offsetMs`), and the classic fastest-of-30 round trips
 * (bounded by half the round trip).
 */
async function clockOffset(src: NullServerChild): Promise<{ offsetMs: number; roundTripOffsetMs: number; rttMs: number }> {
  const offsetMs = src.offsetMs;
  let best = { off: NaN, rtt: Infinity };
  for (let i = 0; i < 30; i++) {
    const c0 = epoch();
    const { t } = await getJson<{ t: number }>(`${src.baseUrl}/now`);
    const c1 = epoch();
    if (c1 - c0 < best.rtt) best = { off: t - (c0 + c1) / 2, rtt: c1 - c0 };
  }
  return { offsetMs: round(offsetMs, 4), roundTripOffsetMs: round(best.off, 4), rttMs: round(best.rtt, 4) };
}

async function timedPass(
  src: NullServerChild,
  offsetMs: number,
  streams: number,
  gapMs: number,
  tokens: number,
  spread = false,
): Promise<PassResult> {
  const client = createClient({ baseUrl: src.baseUrl, model: NULL_SERVER_MODEL, connections: streams, now: epoch });
  // Open every connection first (a one-token request each), so connects are not in the figures.
  await Promise.all(
    range(streams).map((i) => client.send(spec(1, 0), { index: i, intendedStartMs: epoch(), requestId: `warm-${streams}-${i}` })),
  );
  await getJson(`${src.baseUrl}/sent`);
  await getJson<ServerStats>(`${src.baseUrl}/stats`); // starts the server's CPU window
  const watch = startClientHealth();
  const cpu0 = process.cpuUsage();
  const tStart = epoch();
  const mode = gapMs <= 0 ? 'flat-out' : spread ? 'spread' : 'lockstep';
  const ids = range(streams).map((i) => `${mode}-${streams}-${i}`);
  const records: RequestRecord[] = await Promise.all(
    ids.map((requestId, i) =>
      client.send(spec(tokens, gapMs, 1, spread ? (i * gapMs) / streams : 0), { index: i, intendedStartMs: tStart, requestId }),
    ),
  );
  const cpu = process.cpuUsage(cpu0);
  const health: ClientHealth = watch.stop();
  const s1 = await getJson<ServerStats>(`${src.baseUrl}/stats`);
  const sent = await getJson<Record<string, number[]>>(`${src.baseUrl}/sent`);
  await client.close();

  const f = passFigures(records, sent, offsetMs, epoch() - tStart);
  const dropped = records.reduce((a, r) => a + Math.max(0, tokens - r.chunkMs.length), 0);
  const events = f.events;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  return {
    mode,
    streams,
    gapMs,
    tokensPerStream: tokens,
    offeredEventsPerSec: gapMs > 0 ? round((streams * 1000) / gapMs, 0) : null,
    eventsPerSec: round(f.eventsPerSec, 0),
    tokenEvents: events,
    dropped,
    failed: f.failed,
    stampErrorMs: dist(f.stampErrorsMs),
    clientCpuMsPer1kEvents: round((cpuMs * 1000) / Math.max(1, events)),
    clientCpuPercent: round(health.cpuPercentOfOneCore, 1),
    eventLoopDelayMs: {
      p50: round(health.eventLoopDelayP50Ms),
      p99: round(health.eventLoopDelayP99Ms),
      max: round(health.eventLoopDelayMaxMs),
    },
    serverCpuPercent: round((s1.cpuMs / s1.wallMs) * 100, 1),
    loadAverage1m: health.loadAverage1m,
  };
}

/** Memory per open stream: C streams open at a 200 ms gap; full GC before and at mid-stream. */
async function memoryPass(src: NullServerChild, streams: number, sizes: Sizes) {
  const client = createClient({ baseUrl: src.baseUrl, model: NULL_SERVER_MODEL, connections: streams, now: epoch });
  fullGc();
  const m0 = process.memoryUsage();
  const all = Promise.all(
    range(streams).map((i) =>
      client.send(spec(sizes.memoryTokens, 200), { index: i, intendedStartMs: epoch(), requestId: `m${streams}-${i}` }),
    ),
  );
  await pause(sizes.memoryPauseMs);
  const open = (await getJson<ServerStats>(`${src.baseUrl}/stats`)).open;
  fullGc();
  const m1 = process.memoryUsage();
  const records = await all;
  await client.close();
  await getJson(`${src.baseUrl}/sent`);
  const kb = (a: number, b: number) => round((b - a) / streams / 1024, 1);
  return {
    streams,
    openAtSnapshot: open,
    ok: records.filter((r) => r.ok).length,
    heapPerStreamKB: kb(m0.heapUsed, m1.heapUsed),
    externalPerStreamKB: kb(m0.external, m1.external),
    rssPerStreamKB: kb(m0.rss, m1.rss),
    heapPlusExternalPerStreamKB: kb(m0.heapUsed + m0.external, m1.heapUsed + m1.external),
  };
}

/** Run the client-ceiling benchmark (`quick`: every pass shorter, a smoke test). */
export async function run(opts: BenchOptions = {}): Promise<BenchResult> {
  const sizes = opts.quick ? QUICK : FULL;
  const machineBefore = machine();
  const src = await spawnNullServer();
  const lines: string[] = [];
  try {
    const offset = await clockOffset(src);
    lines.push(
      `clock offset server−client ${offset.offsetMs} ms (via system-clock ticks; round trips say ${offset.roundTripOffsetMs} ± ${round(offset.rttMs / 2)} ms)`,
    );
    await timedPass(src, offset.offsetMs, 16, 2, 200); // warm-up: JIT-compile the client path before anything is measured
    const paced: PassResult[] = [];
    for (const c of [1, 64, 256, 1024]) {
      const gap = Math.max(5, c / 32);
      for (const spread of c > 1 ? [true, false] : [false]) {
        const p = await timedPass(src, offset.offsetMs, c, gap, Math.ceil((sizes.passS * 1000) / gap), spread);
        paced.push(p);
        lines.push(
          `${p.mode} C=${c} gap ${gap} ms: ${p.eventsPerSec} events/s (offered ${p.offeredEventsPerSec}), stamp error ${fmtDist(p.stampErrorMs)}, ` +
            `CPU ${p.clientCpuMsPer1kEvents} ms/1k events (${p.clientCpuPercent} % of a core), loop delay p99 ${p.eventLoopDelayMs.p99} ms, ` +
            `dropped ${p.dropped}, failed ${p.failed}, server CPU ${p.serverCpuPercent} % [load ${p.loadAverage1m}]`,
        );
      }
    }
    // Where does p99 ≤ 2 ms stop? C = 256 spread, offered 4k → 32k events/s.
    const sweep: PassResult[] = [];
    for (const gap of [64, 32, 16, 8]) {
      const p = await timedPass(src, offset.offsetMs, 256, gap, Math.ceil((sizes.passS * 1000) / gap), true);
      sweep.push(p);
      lines.push(
        `sweep spread C=256 gap ${gap} ms: ${p.eventsPerSec} events/s, stamp error ${fmtDist(p.stampErrorMs)}, CPU ${p.clientCpuPercent} % of a core, ` +
          `loop delay p99 ${p.eventLoopDelayMs.p99} ms [load ${p.loadAverage1m}]`,
      );
    }
    const memory = [];
    for (const c of [64, 256, 1024]) {
      const m = await memoryPass(src, c, sizes);
      memory.push(m);
      lines.push(
        `memory C=${c} (${m.openAtSnapshot} open): heap ${m.heapPerStreamKB} KB + external ${m.externalPerStreamKB} KB, rss ${m.rssPerStreamKB} KB per open stream`,
      );
    }
    const flat: PassResult[] = [];
    for (const c of [64, 256]) {
      const p = await timedPass(src, offset.offsetMs, c, 0, Math.ceil(sizes.flatEvents / c));
      flat.push(p);
      lines.push(
        `flat out C=${c}: ${p.eventsPerSec} events/s, CPU ${p.clientCpuMsPer1kEvents} ms/1k events (${p.clientCpuPercent} % of a core), ` +
          `server CPU ${p.serverCpuPercent} %, loop delay p99 ${p.eventLoopDelayMs.p99} ms, dropped ${p.dropped} [load ${p.loadAverage1m}]`,
      );
    }
    const best = [...paced, ...sweep].filter((p) => p.stampErrorMs.p99 <= 2).sort((a, b) => b.eventsPerSec - a.eventsPerSec)[0];
    const c1024 = paced.filter((p) => p.streams === 1024);
    const m1024 = memory.find((m) => m.streams === 1024)!;
    const maxFlat = Math.max(...flat.map((p) => p.eventsPerSec));
    const perStream = Math.max(m1024.heapPlusExternalPerStreamKB, m1024.rssPerStreamKB);
    const targets = [
      {
        target: '≥ 30,000 token events/s on one core with p99 stamp error ≤ 2 ms',
        measured: best
          ? `${best.eventsPerSec} events/s at C=${best.streams} (${best.mode}) with p99 ${best.stampErrorMs.p99} ms (${best.clientCpuPercent} % of a core); flat-out ceiling ${maxFlat} events/s`
          : `no paced pass had p99 ≤ 2 ms; flat-out ceiling ${maxFlat} events/s`,
        met: best !== undefined && best.eventsPerSec >= 30_000,
      },
      {
        target: '1,024 concurrent streams with nothing dropped',
        measured: c1024
          .map((p) => `${p.mode}: ${p.dropped} dropped, ${p.failed} failed of 1024 × ${p.tokensPerStream} tokens`)
          .join('; '),
        met: c1024.every((p) => p.dropped === 0 && p.failed === 0),
      },
      {
        target: 'memory per open stream ≤ 50 KB',
        measured: `heap+external ${m1024.heapPlusExternalPerStreamKB} KB, rss ${m1024.rssPerStreamKB} KB per stream at C=1024`,
        met: perStream <= 50,
      },
    ];
    return {
      name: 'client',
      lines,
      targets,
      data: { quick: opts.quick === true, clockOffset: offset, paced, sweep, memory, flatOut: flat },
      machineBefore,
      machineAfter: machine(),
    };
  } finally {
    await src.stop();
    lines.push(loadLine());
  }
}
