/**
 * `loadlab run --workers N`: token events/s at p99 stamp error ≤ 2 ms for 1, 2 and 4 worker threads
 * (issue #16 "More than one core"), against the null server in its own process
 * (src/calibrate/null-server.ts), which puts its send time of every chunk in `GET /sent`.
 *
 * Each pass is one `runLoad` (the real run path: target probe, worker threads, records posted to the
 * main thread, nothing written to disk): a closed loop of C = 256 streams, one long request each,
 * phases spread over the gap, at offered 4k, 8k, 16k and 32k events/s (gap 64 → 8 ms). Stamp error =
 * the record's chunk stamp (run clock + `manifest.clock.originEpochMs` = this process's epoch clock)
 * − the server's send stamp + the two processes' clock offset (`passFigures`,
 * src/calibrate/calibrate-result.ts, the same definition as the client benchmark). A run's events/s
 * counts from its first send to its last chunk. Every pass prints the 1-minute load average beside it.
 * What the machine allows: the best events/s with p99 ≤ 2 ms for each worker count; on 2 cores with the
 * null server (and other programs) sharing them, more workers than free cores cannot add throughput.
 */

import { cpus, loadavg } from 'node:os';
import { NULL_SERVER_MODEL, spawnNullServer, type NullServerChild } from '../src/calibrate/null-server';
import { passFigures } from '../src/calibrate/calibrate-result';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import type { RequestRecord, RequestSpec } from '../src/types';
import { dist, fmtDist, getJson, machine, round, type BenchOptions, type BenchResult, type Dist } from './common';

const STREAMS = 256;
const GAPS_MS = [64, 32, 16, 8];
const WORKERS = [1, 2, 4];

/** One pass: W workers, C streams at one gap. */
interface Pass {
  workers: number;
  streams: number;
  gapMs: number;
  offeredEventsPerSec: number;
  eventsPerSec: number;
  stampErrorMs: Dist;
  failed: number;
  dropped: number;
  /** Process CPU over the load, % of one core (all threads). */
  cpuPercentOfOneCore: number;
  /** The worst worker's event-loop delay p99, ms. */
  eventLoopDelayP99Ms: number;
  /** Each worker thread's own CPU, % of one core (runs with workers > 1, Linux). */
  workerThreadCpuPercent: number[];
  loadAverage1m: number;
}

const spec = (tokens: number, gapMs: number, phaseMs: number): RequestSpec => ({
  messages: [{ role: 'user', content: 'hi' }],
  maxTokens: tokens,
  extraBody: { null_gap_ms: gapMs, null_batch: 1, null_phase_ms: phaseMs },
});

/** The records with their times moved onto this process's epoch clock (what `passFigures` compares). */
function onEpoch(records: readonly RequestRecord[], originEpochMs: number): RequestRecord[] {
  return records.map((r) => ({ ...r, startMs: r.startMs + originEpochMs, chunkMs: r.chunkMs.map((t) => t + originEpochMs) }));
}

async function pass(src: NullServerChild, workers: number, gapMs: number, passS: number): Promise<Pass> {
  const tokens = Math.ceil((passS * 1000) / gapMs);
  await getJson(`${src.baseUrl}/sent`); // empties the server's send log
  const r = await runLoad({
    baseUrl: src.baseUrl,
    model: NULL_SERVER_MODEL,
    shape: closedLoop(STREAMS),
    requests: STREAMS,
    workload: (i) => spec(tokens, gapMs, (i * gapMs) / STREAMS),
    workers,
    out: false,
    abortOnSigint: false,
  });
  const sent = await getJson<Record<string, number[]>>(`${src.baseUrl}/sent`);
  const f = passFigures(onEpoch(r.records, r.manifest.clock.originEpochMs), sent, src.offsetMs, 1);
  const client = r.manifest.client as {
    cpuPercentOfOneCore: number;
    eventLoopDelayP99Ms: number;
    workers?: Array<{ threadCpuPercentOfOneCore?: number }>;
  };
  return {
    workers,
    streams: STREAMS,
    gapMs,
    offeredEventsPerSec: round((STREAMS * 1000) / gapMs, 0),
    eventsPerSec: round(f.eventsPerSec, 0),
    stampErrorMs: dist(f.stampErrorsMs),
    failed: f.failed,
    dropped: r.records.reduce((a, x) => a + Math.max(0, tokens - x.chunkMs.length), 0),
    cpuPercentOfOneCore: round(client.cpuPercentOfOneCore, 1),
    eventLoopDelayP99Ms: round(client.eventLoopDelayP99Ms),
    workerThreadCpuPercent: (client.workers ?? []).map((w) => round(w.threadCpuPercentOfOneCore ?? NaN, 1)),
    loadAverage1m: round(loadavg()[0] ?? 0, 2),
  };
}

/** Run the workers benchmark (`quick`: 0.5 s passes instead of 3 s, a smoke test). */
export async function run(opts: BenchOptions = {}): Promise<BenchResult> {
  const passS = opts.quick ? 0.5 : 3;
  const machineBefore = machine();
  const src = await spawnNullServer();
  const lines: string[] = [];
  const passes: Pass[] = [];
  try {
    await pass(src, 1, 16, 0.5); // warm-up: JIT-compile the run path before anything is measured
    for (const w of WORKERS) {
      for (const gap of GAPS_MS) {
        const p = await pass(src, w, gap, passS);
        passes.push(p);
        lines.push(
          `workers ${w}, C=${STREAMS}, gap ${gap} ms: ${p.eventsPerSec} events/s (offered ${p.offeredEventsPerSec}), stamp error ` +
            `${fmtDist(p.stampErrorMs)}, process CPU ${p.cpuPercentOfOneCore} % of a core` +
            `${p.workerThreadCpuPercent.length ? ` (worker threads ${p.workerThreadCpuPercent.join(' / ')} %)` : ''}, worst loop delay p99 ` +
            `${p.eventLoopDelayP99Ms} ms, dropped ${p.dropped}, failed ${p.failed} [load ${p.loadAverage1m}]`,
        );
      }
    }
  } finally {
    await src.stop();
  }
  const best = WORKERS.map((w) => {
    const ok = passes.filter((p) => p.workers === w && p.stampErrorMs.p99 <= 2 && p.failed === 0 && p.dropped === 0);
    return { workers: w, pass: ok.sort((a, b) => b.eventsPerSec - a.eventsPerSec)[0] };
  });
  const say = (b: (typeof best)[number]) =>
    b.pass
      ? `${b.workers} worker(s): ${b.pass.eventsPerSec} events/s (p99 ${b.pass.stampErrorMs.p99} ms, load ${b.pass.loadAverage1m})`
      : `${b.workers} worker(s): no pass with p99 ≤ 2 ms`;
  lines.push(`${cpus().length} cores: best events/s at p99 stamp error ≤ 2 ms — ${best.map(say).join('; ')}`);
  return {
    name: 'workers',
    lines,
    targets: [
      {
        target: 'events/s at p99 stamp error ≤ 2 ms measured for 1, 2 and 4 workers (what this machine allows)',
        measured: best.map(say).join('; '),
        met: best.every((b) => b.pass !== undefined),
      },
    ],
    data: { streams: STREAMS, gapsMs: GAPS_MS, passS, passes },
    machineBefore,
    machineAfter: machine(),
  };
}
