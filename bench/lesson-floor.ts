/**
 * The lessons' most loaded point against its floor (issue #16, "Done when": no lesson point flagged
 * client-bound). Lesson 02b's c = 256 (a closed loop of 256 streams, 3 × 256 requests of the experiment
 * report's prompt with 128 forced tokens, 2 warm-up requests) is the point every headless run on 2 cores
 * flagged: its token chunks were stamped more than 5 ms late at p99 against the simulator's send log.
 *
 * Is that the machine or the client? One simulator, started as the lessons start it (its engine thread
 * pinned), and two readers of the same point, alternating, three rounds:
 * - `ours`: `runLoad` as the lessons' `measure()` runs it: its own worker thread, pinned off the
 *   simulator's engine CPU, `'turn'` stamps, judged on the send log (src/runner/stamp-lag.ts);
 * - `bare`: the floor: raw `net` sockets on this thread, pinned the same way, one keep-alive connection
 *   per stream sending the same request body, stamping with the same `'turn'` clock
 *   (src/client/chunk-stamp.ts) and counting token chunks by a byte search. No SSE, JSON, records or
 *   undici. Its stamps are checked against the same send log with the same function (`stampLagOf`).
 * Each prints the stamp lag (p50, p99, max) and its load thread's CPU per token chunk, with the load average.
 */
import { loadavg } from 'node:os';
import { chunkClock } from '../src/client/chunk-stamp';
import { buildRequestBody } from '../src/client/body';
import { threadCpuMs } from '../src/proc/cpu-times';
import { loadThreadCpus, pinThisThread } from '../src/proc/cpu-split';
import { monoOffsetMs } from '../src/proc/mono-clock';
import { runLoad } from '../src/runner/runner';
import { fetchSendLog, stampLagOf, type StampLag } from '../src/runner/stamp-lag';
import { closedLoop } from '../src/schedule/shapes';
import { percentile } from '../src/stats/percentile';
import { startSim, type SimHandle } from '../src/sim/start';
import type { RequestSpec } from '../src/types';
import { makeRequest } from '../src/workload/workload';
import { CHALLENGES_PROMPT } from '../src/workload/prompts';
import { getJson, loadLine, machine, round, type BenchOptions, type BenchResult } from './common';
import { openSockets } from './yard-readers';

/** The client-bound limit the lessons judge the stamp lag p99 by (DEFAULT_HEALTH_THRESHOLDS.delayP99Ms), ms. */
const LIMIT_MS = 5;

/** One reader's pass over the point. */
interface Pass {
  reader: 'ours' | 'bare';
  lag: Pick<StampLag, 'chunks' | 'p50Ms' | 'p99Ms' | 'maxMs' | 'minMs'>;
  /** The load thread's CPU per token chunk, µs (its whole pass: sends, reads, records). */
  cpuUsPerChunk: number;
  /** Ours: how long the closed loop's sends after the first wave waited from their slot freeing (`queueMs`), ms. */
  queueMs?: { p50: number; p99: number; max: number };
  loadAverage1m: number;
}

/** Lesson 02b's point: `streams` streams, 3 waves. */
interface Point {
  streams: number;
  requests: number;
  spec: RequestSpec;
}

/** `ours`: the lessons' path (one worker thread), no run folder. */
async function oursPass(sim: SimHandle, p: Point): Promise<Pass> {
  const r = await runLoad({
    baseUrl: sim.baseUrl,
    workload: [p.spec],
    requests: p.requests,
    warmup: 2,
    shape: closedLoop(p.streams),
    out: false,
    thread: true,
    progress: false,
  });
  const lag = r.summary.health?.clientStampLag;
  if (!lag) throw new Error('the run has no stamp lag: was the send log unanswered?');
  const w = (r.manifest.client as { workers?: Array<{ threadCpuPercentOfOneCore?: number; wallMs?: number }> }).workers?.[0];
  const cpuMs = ((w?.threadCpuPercentOfOneCore ?? Number.NaN) / 100) * (w?.wallMs ?? Number.NaN);
  const later = r.records.filter((x) => !x.warmup && x.index >= p.streams + 2).map((x) => x.startMs - x.intendedStartMs);
  const queueMs = { p50: percentile(later, 50), p99: percentile(later, 99), max: Math.max(...later) };
  return { reader: 'ours', lag, cpuUsPerChunk: (cpuMs * 1000) / lag.chunks, queueMs, loadAverage1m: loadavg()[0] };
}

/** The byte pattern of a token chunk's delta: a content string that is not empty (the role chunk's is). */
const TOKEN = Buffer.from('"delta":{"content":"');
const QUOTE = 0x22;
/** The end of a chunked response body. */
const LAST = Buffer.from('\r\n0\r\n\r\n');

function countTokens(b: Buffer): number {
  let n = 0;
  for (let k = b.indexOf(TOKEN); k >= 0; k = b.indexOf(TOKEN, k + TOKEN.length)) if (b[k + TOKEN.length] !== QUOTE) n++;
  return n;
}

/** `bare`: raw sockets, the same closed loop and body, 'turn' stamps on this thread's clock. */
async function barePass(sim: SimHandle, p: Point, prefix: string): Promise<Pass> {
  const url = new URL(sim.baseUrl);
  const json = JSON.stringify(buildRequestBody(p.spec, sim.model));
  const head = `POST /v1/chat/completions HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\n`;
  const request = (id: string) => `${head}x-request-id: ${id}\r\ncontent-length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
  const socks = await openSockets(Number(url.port), p.streams);
  const clock = chunkClock(() => performance.now(), 'turn');
  const stamps = new Map<string, number[]>();
  let next = 0;
  const cpu0 = threadCpuMs();
  await Promise.all(
    socks.map(
      (s) =>
        new Promise<void>((resolve) => {
          let mine: number[] = [];
          const fire = () => {
            if (next >= p.requests) return resolve();
            const id = `${prefix}-${next++}`;
            mine = [];
            stamps.set(id, mine);
            s.write(request(id));
          };
          s.on('data', (b: Buffer) => {
            const t = clock(s);
            for (let n = countTokens(b); n > 0; n--) mine.push(t);
            if (b.length >= LAST.length && b.indexOf(LAST, b.length - LAST.length) >= 0) fire();
          });
          s.on('error', () => resolve());
          fire();
        }),
    ),
  );
  const cpu1 = threadCpuMs();
  for (const s of socks) s.destroy();
  const records = [...stamps].map(([requestId, chunkMs]) => ({ requestId, chunkMs, ok: true, warmup: false }));
  const sends = await fetchSendLog(sim.baseUrl, records);
  const lag = sends ? stampLagOf(records, sends, monoOffsetMs()) : undefined;
  if (!lag) throw new Error("the simulator's send log did not answer for the bare reader's requests");
  const cpuMs = cpu0 !== undefined && cpu1 !== undefined ? cpu1 - cpu0 : Number.NaN;
  return { reader: 'bare', lag, cpuUsPerChunk: (cpuMs * 1000) / lag.chunks, loadAverage1m: loadavg()[0] };
}

/** Pin this thread off the simulator's engine CPU, as a run pins its load threads; returns the release. */
async function pinOffEngine(sim: SimHandle): Promise<{ release: () => void; note: string }> {
  const v = await getJson<{ loadlab_engine_cpu?: number; loadlab_boot_id?: string }>(`${sim.baseUrl}/version`);
  const plan = loadThreadCpus(sim.baseUrl, v.loadlab_engine_cpu, v.loadlab_boot_id);
  if (!plan.cpus) return { release: () => {}, note: plan.note };
  const pin = pinThisThread(plan.cpus);
  return 'reason' in pin ? { release: () => {}, note: `not pinned (${pin.reason})` } : { release: pin.release, note: plan.note };
}

const line = (x: Pass, round: number) =>
  `  round ${round} ${x.reader.padEnd(4)} stamp lag p50 ${x.lag.p50Ms.toFixed(2)}, p99 ${x.lag.p99Ms.toFixed(2)}, ` +
  `max ${x.lag.maxMs.toFixed(1)} ms over ${x.lag.chunks} chunks; load thread ${x.cpuUsPerChunk.toFixed(1)} µs CPU per chunk ` +
  (x.queueMs
    ? `; sends after the first wave waited p50 ${x.queueMs.p50.toFixed(1)}, p99 ${x.queueMs.p99.toFixed(1)}, max ${x.queueMs.max.toFixed(1)} ms`
    : '') +
  ` (load ${x.loadAverage1m.toFixed(2)})`;

/** The median (numpy's linear rule: the middle round of an odd number of rounds). */
const median = (xs: number[]) => percentile(xs, 50);

export async function run(opts: BenchOptions = {}): Promise<BenchResult> {
  const before = machine();
  const streams = opts.quick ? 64 : 256;
  const point: Point = {
    streams,
    requests: 3 * streams,
    spec: makeRequest(CHALLENGES_PROMPT, { maxTokens: 128, fixedOutput: true }),
  };
  const rounds = opts.quick ? 1 : 3;
  const lines: string[] = [];
  const say = (s: string) => {
    lines.push(s);
    console.log(s);
  };
  say(
    `lesson 02b's c = ${streams} point, ${point.requests} requests × 128 forced tokens, against one simulator (${loadLine(before)})`,
  );
  const sim = await startSim();
  const passes: Pass[] = [];
  try {
    for (let r = 1; r <= rounds; r++) {
      const ours = await oursPass(sim, point);
      say(line(ours, r));
      const pin = await pinOffEngine(sim);
      if (r === 1) say(`  bare reader: ${pin.note}`);
      try {
        const bare = await barePass(sim, point, `floor${r}`);
        say(line(bare, r));
        passes.push(ours, bare);
      } finally {
        pin.release();
      }
    }
  } finally {
    await sim.stop();
  }
  const of = (reader: Pass['reader']) => passes.filter((x) => x.reader === reader);
  const p99 = (reader: Pass['reader']) => median(of(reader).map((x) => x.lag.p99Ms));
  const cpu = (reader: Pass['reader']) => median(of(reader).map((x) => x.cpuUsPerChunk));
  say(
    `  median of rounds: ours p99 ${p99('ours').toFixed(2)} ms at ${cpu('ours').toFixed(1)} µs per chunk; ` +
      `bare p99 ${p99('bare').toFixed(2)} ms at ${cpu('bare').toFixed(1)} µs per chunk (the lessons flag p99 > ${LIMIT_MS} ms)`,
  );
  const targets: BenchResult['targets'] = [
    {
      target: `lesson 02b c=${streams}: stamp lag p99 ≤ ${LIMIT_MS} ms (the lessons' client-bound limit), median of rounds`,
      measured: `ours ${round(p99('ours'), 2)} ms; the bare floor ${round(p99('bare'), 2)} ms`,
      met: p99('ours') <= LIMIT_MS,
    },
  ];
  return {
    name: 'lesson-floor',
    lines,
    targets,
    data: { point: { streams, requests: point.requests }, passes },
    machineBefore: before,
    machineAfter: machine(),
  };
}
