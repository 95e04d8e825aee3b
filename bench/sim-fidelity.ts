/**
 * Simulator real-time fidelity: does the simulated engine keep its modelled step times in real
 * time while our client reads its streams, both on this machine?
 *
 * For C = 1, 32, 128, 256 streams (ignore_eos, outputs long enough for ~5 s of steady decode), the
 * simulator runs in its own process (startSim); this process sends the C requests at once and
 * scrapes /metrics every 250 ms. The steady window runs from the first scrape with
 * `vllm:num_requests_running` = C to the last one. Over that window:
 * - step lateness p50/p99/max: delta of `loadlab:sim_step_lateness_seconds` (histogram, so
 *   p50/p99 are PromQL-style estimates and max is a bucket bound), plus the exact per-second p99s
 *   the simulator logs (`--stats-interval-s 1`);
 * - the model's step time: mean of `vllm:inter_token_latency_seconds` over the window (the engine
 *   stamps it on planned step ends, so it is the cost model's truth), and the cost model itself
 *   for C decodes at the window's mid context;
 * - the client-observed ITL over the same window (gaps whose later chunk falls inside it):
 *   p50/p99 and their error against the model's step time.
 * Ideal: lateness 0 and client ITL = model step time. Target: lateness p99 ≤ 2 ms at 128 streams.
 */

import { readFileSync } from 'node:fs';
import { createClient } from '../src/client/client';
import { startClientHealth } from '../src/runner/health';
import { histogramDelta, histogramQuantile, readHistogram, type HistogramSnapshot } from '../src/observe/histogram';
import { httpGet } from '../src/client/http-get';
import { parsePrometheus, pickValue, type MetricFamily } from '../src/observe/prometheus';
import { addDecode, emptyBatch, stepTimeMs } from '../src/sim/engine/cost';
import { startSim, type SimHandle } from '../src/sim/start';
import type { RequestRecord, RequestSpec } from '../src/types';
import { dist, fmtDist, loadLine, machine, pause, round, type BenchResult, type Dist } from './common';

const LEVELS = [1, 32, 128, 256];
const STEADY_MS = 5000;

interface Scrape {
  tMs: number;
  running: number;
  steps: number;
  fams: MetricFamily[];
}

async function scrape(sim: SimTarget): Promise<Scrape> {
  const t0 = performance.now();
  const res = await httpGet(`${sim.baseUrl}/metrics`, { timeoutMs: 5000 });
  const fams = parsePrometheus(res.text);
  return {
    tMs: (t0 + performance.now()) / 2,
    running: pickValue(fams, 'vllm:num_requests_running') ?? NaN,
    steps: pickValue(fams, 'loadlab:sim_steps_total') ?? NaN,
    fams,
  };
}

/** Largest bucket bound that gained observations (the histogram's resolution of "max"), ms. */
function maxBoundMs(h: HistogramSnapshot): number {
  let prev = 0;
  let top = 0;
  h.counts.forEach((c, i) => {
    if (c > prev) top = h.le[i];
    prev = c;
  });
  return top * 1000;
}

/** CPU ms and involuntary context switches of another process, from /proc (Linux); undefined elsewhere. */
function procStat(pid: number): { cpuMs: number; preempted: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]); // utime + stime, in clock ticks (100/s on Linux)
    const m = /nonvoluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuMs: ticks * 10, preempted: m ? Number(m[1]) : NaN };
  } catch {
    return undefined;
  }
}

/** Model step time for `c` decodes at context `ctx` tokens, ms (src/sim/engine/cost.ts). */
function modelStepMs(c: number, ctx: number): number {
  const b = emptyBatch();
  for (let i = 0; i < c; i++) addDecode(b, ctx);
  return stepTimeMs(b);
}

/** Figures of one level (C streams). */
export interface Level {
  streams: number;
  outputTokens: number;
  steadyWindowS: number;
  steps: number;
  latenessMs: { p50: number; p99: number; maxBucketMs: number; loggedP99PerSecondMax: number | null };
  /** Served step time (engine ITL mean; includes resyncs after late steps) and the cost model's, ms. */
  modelStepMs: { engineItlMean: number; costModelMidWindow: number };
  clientItlMs: Dist;
  /** Client ITL − cost-model step time for that token's batch (C decodes at that context), per gap, ms. */
  itlErrorMs: Dist;
  simCpuPercent: number | null;
  simPreemptionsPerSec: number | null;
  clientPreemptionsPerSec: number;
  ok: number;
  clientEventLoopDelayP99Ms: number;
  clientCpuPercent: number;
  loadAverage1m: number;
}

/** What a level needs of a running simulator (a `SimHandle` has it all). */
export type SimTarget = Pick<SimHandle, 'baseUrl' | 'model' | 'pid' | 'logTail'>;

/** Measure one level: C streams sent at once, steady window from the /metrics scrapes. */
export async function measureLevel(sim: SimTarget, c: number): Promise<Level> {
  const outputTokens = Math.ceil((STEADY_MS + 1500) / modelStepMs(c, 300));
  const spec: RequestSpec = {
    messages: [{ role: 'user', content: 'Say anything.' }],
    maxTokens: outputTokens,
    fixedOutput: true,
  };
  const client = createClient({ baseUrl: sim.baseUrl, model: sim.model, connections: c });
  await client.send({ ...spec, maxTokens: 4 }, { index: -1, intendedStartMs: performance.now() }); // warm the prefix cache and the path
  const scrapes: Scrape[] = [];
  const procs = new Map<Scrape, ReturnType<typeof procStat>>();
  let running = true;
  const poller = (async () => {
    while (running) {
      const s = await scrape(sim);
      scrapes.push(s);
      procs.set(s, procStat(sim.pid));
      await pause(250);
    }
  })();
  const watch = startClientHealth();
  const ru0 = process.resourceUsage().involuntaryContextSwitches;
  const records: RequestRecord[] = await Promise.all(
    Array.from({ length: c }, (_, i) => client.send(spec, { index: i, intendedStartMs: performance.now() })),
  );
  const health = watch.stop();
  const clientPreempted = process.resourceUsage().involuntaryContextSwitches - ru0;
  running = false;
  await poller;
  await client.close();

  const steady = scrapes.filter((s) => s.running === c);
  if (steady.length < 2)
    throw new Error(
      `sim bench: C=${c} never held ${c} running requests across two scrapes (saw ${scrapes.map((s) => s.running).join(',')})`,
    );
  const [a, b] = [steady[0], steady[steady.length - 1]];
  const lateH = histogramDelta(
    readHistogram(b.fams, 'loadlab:sim_step_lateness_seconds')!,
    readHistogram(a.fams, 'loadlab:sim_step_lateness_seconds'),
  );
  const itlH = histogramDelta(
    readHistogram(b.fams, 'vllm:inter_token_latency_seconds')!,
    readHistogram(a.fams, 'vllm:inter_token_latency_seconds'),
  );
  const engineItlMs = (itlH.sum / itlH.count) * 1000;
  const prompt = records.find((r) => r.promptTokens !== undefined)?.promptTokens ?? 20;
  const itl: number[] = [];
  const err: number[] = [];
  const model = new Map<number, number>(); // context → model step, memoised
  for (const r of records) {
    for (let k = 1; k < r.chunkMs.length; k++) {
      if (r.chunkMs[k] <= a.tMs || r.chunkMs[k] > b.tMs) continue;
      const gap = r.chunkMs[k] - r.chunkMs[k - 1];
      // Output token k+1 comes from a decode step over prompt + k tokens (scheduler.ts: addDecode(computed + 1)),
      // taken by all C requests together (they started together; prefill chunks shift them by a token or two).
      const ctx = prompt + k;
      if (!model.has(ctx)) model.set(ctx, modelStepMs(c, ctx));
      itl.push(gap);
      err.push(gap - model.get(ctx)!);
    }
  }
  const clientItl = dist(itl);
  const [pa, pb] = [procs.get(a), procs.get(b)];
  const windowS = (b.tMs - a.tMs) / 1000;
  const midCtx = prompt + Math.round(((a.tMs + b.tMs) / 2 - (records[0].firstTokenMs ?? a.tMs)) / engineItlMs);
  // The simulator's own exact p99 per stats interval (log lines), for the intervals of this level.
  const logged = [...sim.logTail(400).matchAll(/Running: (\d+) reqs.*sim step lateness p99: ([\d.]+) ms/g)]
    .filter((m) => Number(m[1]) === c)
    .map((m) => Number(m[2]));
  return {
    streams: c,
    outputTokens,
    steadyWindowS: round(windowS, 2),
    steps: b.steps - a.steps,
    latenessMs: {
      p50: round(histogramQuantile(lateH, 0.5) * 1000),
      p99: round(histogramQuantile(lateH, 0.99) * 1000),
      maxBucketMs: maxBoundMs(lateH),
      loggedP99PerSecondMax: logged.length > 0 ? Math.max(...logged) : null,
    },
    modelStepMs: { engineItlMean: round(engineItlMs), costModelMidWindow: round(modelStepMs(c, midCtx)) },
    clientItlMs: clientItl,
    itlErrorMs: dist(err),
    simCpuPercent: pa && pb ? round((pb.cpuMs - pa.cpuMs) / windowS / 10, 1) : null,
    simPreemptionsPerSec: pa && pb ? round((pb.preempted - pa.preempted) / windowS, 1) : null,
    clientPreemptionsPerSec: round(
      clientPreempted / ((records.reduce((m, r) => Math.max(m, r.endMs), 0) - records[0].startMs) / 1000),
      1,
    ),
    ok: records.filter((r) => r.ok).length,
    clientEventLoopDelayP99Ms: round(health.eventLoopDelayP99Ms),
    clientCpuPercent: round(health.cpuPercentOfOneCore, 1),
    loadAverage1m: health.loadAverage1m,
  };
}

/** Run the simulator-fidelity benchmark. */
export async function run(): Promise<BenchResult> {
  const machineBefore = machine();
  const sim = await startSim({ extraArgs: ['--stats-interval-s', '1'] });
  const levels: Level[] = [];
  const lines: string[] = [];
  try {
    for (const c of LEVELS) {
      const l = await measureLevel(sim, c);
      levels.push(l);
      lines.push(
        `C=${c} (${l.ok}/${c} ok, ${l.steps} steps in ${l.steadyWindowS} s steady): lateness p50 ${l.latenessMs.p50} / p99 ${l.latenessMs.p99} ms ` +
          `(max ${Number.isFinite(l.latenessMs.maxBucketMs) ? `≤ ${l.latenessMs.maxBucketMs}` : '> 100'} ms; worst logged 1-s p99 ${l.latenessMs.loggedP99PerSecondMax ?? '–'} ms); ` +
          `cost-model step ${l.modelStepMs.costModelMidWindow} ms, served ${l.modelStepMs.engineItlMean} ms; client ITL ${fmtDist(l.clientItlMs)}, ` +
          `error vs model ${fmtDist(l.itlErrorMs)}; sim CPU ${l.simCpuPercent} % preempted ${l.simPreemptionsPerSec}/s; ` +
          `client loop p99 ${l.clientEventLoopDelayP99Ms} ms, CPU ${l.clientCpuPercent} %, preempted ${l.clientPreemptionsPerSec}/s [load ${l.loadAverage1m}]`,
      );
      await pause(1500); // let the level's last stats line print
    }
  } finally {
    await sim.stop();
  }
  lines.push(loadLine());
  const l128 = levels.find((l) => l.streams === 128)!;
  return {
    name: 'sim',
    lines,
    targets: [
      {
        target: 'simulator step lateness p99 ≤ 2 ms at 128 streams (client and simulator on this machine)',
        measured: `p99 ${l128.latenessMs.p99} ms (histogram estimate); client ITL error vs model p50 ${l128.itlErrorMs.p50} / p99 ${l128.itlErrorMs.p99} ms`,
        met: l128.latenessMs.p99 <= 2,
      },
    ],
    data: { steadyTargetMs: STEADY_MS, levels },
    machineBefore,
    machineAfter: machine(),
  };
}
