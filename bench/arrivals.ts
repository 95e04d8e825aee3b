/**
 * Arrival accuracy of open-loop runs: how far the actual send time is from the intended one,
 * at 10, 100 and 1,000 req/s (Poisson, 2 s each; 0.5 s with `quick`), against a tiny fast server in
 * its own process (the null server of src/calibrate/null-server.ts, answering 2 tokens flat out).
 *
 * Two layers, both on the run clock:
 * - pacer: `dispatchLoad` with a `fire` that only stamps `now() − due` (sleepUntil alone);
 * - runLoad: each record's `queueMs = startMs − intendedStartMs` (pacer + client send path; startMs
 *   is stamped when undici writes the request to a socket, so a new connection's connect counts).
 * Ideal: 0; target p99 ≤ 2 ms at 1,000 req/s. A last run repeats 1,000 req/s with `maxConcurrency: 64`
 * (at most 64 connections) to show what bounding the connection count buys when the loop stalls,
 * and the pacer alone is swept over its spin window (0 = plain setTimeout to the absolute due time).
 */

import { openLoopOffsets } from '../src/schedule/arrivals';
import { dispatchLoad } from '../src/schedule/dispatch';
import { sleepUntil } from '../src/schedule/pacer';
import { startClientHealth } from '../src/runner/health';
import { runLoad } from '../src/runner/runner';
import { openLoop } from '../src/schedule/shapes';
import type { RequestSpec } from '../src/types';
import { spawnNullServer } from '../src/calibrate/null-server';
import { dist, fmtDist, loadLine, machine, round, type BenchOptions, type BenchResult, type Dist } from './common';

/** Rates, and a 1,000 req/s run whose connections are capped (see the README: what a cap buys). */
const POINTS: Array<{ rate: number; maxConcurrency?: number }> = [
  { rate: 10 },
  { rate: 100 },
  { rate: 1000 },
  { rate: 1000, maxConcurrency: 64 },
];
/** Seconds per point: the full run, and a short smoke run (`quick`). */
const FULL_SECONDS = 2;
const QUICK_SECONDS = 0.5;

const spec: RequestSpec = { messages: [{ role: 'user', content: 'hi' }], maxTokens: 2, extraBody: { null_gap_ms: 0 } };

interface RatePoint {
  rate: number;
  /** The open loop's cap on requests in flight (= client connections); unset = one per request. */
  maxConcurrency: number | null;
  peakInFlight: number;
  requests: number;
  pacerLatenessMs: Dist;
  sendLatenessMs: Dist;
  ok: number;
  achievedPerSec: number;
  eventLoopDelayP99Ms: number;
  clientCpuPercent: number;
  loadAverage1m: number;
}

/** sleepUntil alone: lateness of each due time under an open-loop schedule, no requests. */
async function pacerOnly(rate: number, n: number): Promise<number[]> {
  const origin = performance.now();
  const now = () => performance.now() - origin;
  const late: number[] = [];
  await dispatchLoad(openLoop(rate), n, async (_i, due) => void late.push(now() - due), {
    now,
    signal: new AbortController().signal,
  });
  return late;
}

/**
 * The pacer's spin window at `rate`: sleepUntil on the absolute schedule with `spinMs` (0 = plain
 * setTimeout to the absolute due time), no requests. Returns lateness and CPU.
 */
async function spinSweep(
  rate: number,
  spinMs: number,
  seconds: number,
): Promise<{ spinMs: number; latenessMs: Dist; cpuPercent: number }> {
  const offsets = openLoopOffsets(rate * seconds, rate, 1, 1);
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const late: number[] = [];
  for (const o of offsets) {
    const due = start + o;
    late.push(due > performance.now() ? await sleepUntil(due, { spinMs }) : performance.now() - due);
  }
  const cpu = process.cpuUsage(cpu0);
  return { spinMs, latenessMs: dist(late), cpuPercent: round((cpu.user + cpu.system) / 10 / (performance.now() - start), 1) };
}

/** Run the arrival-accuracy benchmark (`quick`: 0.5 s per point instead of 2, a smoke test). */
export async function run(opts: BenchOptions = {}): Promise<BenchResult> {
  const seconds = opts.quick ? QUICK_SECONDS : FULL_SECONDS;
  const machineBefore = machine();
  const src = await spawnNullServer();
  const points: RatePoint[] = [];
  const lines: string[] = [];
  try {
    for (const { rate, maxConcurrency } of POINTS) {
      const n = rate * seconds;
      const pacer = await pacerOnly(rate, n);
      const watch = startClientHealth();
      const shape = openLoop(rate, { seed: 1, ...(maxConcurrency !== undefined ? { maxConcurrency } : {}) });
      const r = await runLoad({ baseUrl: src.baseUrl, workload: [spec], requests: n, shape, warmup: 3, out: false });
      const health = watch.stop();
      const measured = r.records.filter((x) => !x.warmup);
      const starts = measured.map((x) => x.startMs);
      const p: RatePoint = {
        rate,
        maxConcurrency: maxConcurrency ?? null,
        peakInFlight: r.peakInFlight,
        requests: n,
        pacerLatenessMs: dist(pacer),
        sendLatenessMs: dist(measured.map((x) => x.startMs - x.intendedStartMs)),
        ok: measured.filter((x) => x.ok).length,
        achievedPerSec: round(((n - 1) * 1000) / (Math.max(...starts) - Math.min(...starts)), 1),
        eventLoopDelayP99Ms: round(health.eventLoopDelayP99Ms),
        clientCpuPercent: round(health.cpuPercentOfOneCore, 1),
        loadAverage1m: health.loadAverage1m,
      };
      points.push(p);
      lines.push(
        `${rate} req/s${maxConcurrency ? ` max ${maxConcurrency} in flight` : ''} (${n} requests, ${p.ok} ok, achieved ${p.achievedPerSec}/s, peak in flight ${p.peakInFlight}): ` +
          `pacer late ${fmtDist(p.pacerLatenessMs)}; ` +
          `intended→sent ${fmtDist(p.sendLatenessMs)}; loop delay p99 ${p.eventLoopDelayP99Ms} ms, CPU ${p.clientCpuPercent} % [load ${p.loadAverage1m}]`,
      );
    }
  } finally {
    await src.stop();
  }
  const spins = [];
  for (const spinMs of [0, 0.5, 1, 2]) {
    const sp = await spinSweep(1000, spinMs, seconds);
    spins.push(sp);
    lines.push(
      `pacer alone at 1000 req/s, spin window ${spinMs} ms${spinMs === 2 ? ' (default)' : ''}: late ${fmtDist(sp.latenessMs)}, CPU ${sp.cpuPercent} %`,
    );
  }
  lines.push(loadLine());
  const top = points.find((p) => p.rate === 1000 && p.maxConcurrency === null)!;
  const capped = points.find((p) => p.rate === 1000 && p.maxConcurrency !== null)!;
  return {
    name: 'arrivals',
    lines,
    targets: [
      {
        target: 'intended − actual send time p99 ≤ 2 ms at 1,000 req/s',
        measured:
          `p99 ${top.sendLatenessMs.p99} ms (pacer alone ${top.pacerLatenessMs.p99} ms), max ${top.sendLatenessMs.max} ms; ` +
          `capped at ${capped.maxConcurrency} in flight: p99 ${capped.sendLatenessMs.p99} ms`,
        met: top.sendLatenessMs.p99 <= 2,
      },
    ],
    data: {
      quick: opts.quick === true,
      seconds,
      shape: 'open, Poisson (burstiness 1), seed 1',
      points,
      pacerSpinSweep1000: spins,
    },
    machineBefore,
    machineAfter: machine(),
  };
}
