/**
 * A fair yardstick for the client: four readers side by side against the same step-loop server
 * (the null server, src/calibrate/null-server.ts, in its own process: one timer steps every
 * stream together, one token chunk per stream per step, like one engine step), in one run:
 * bare `net` (the floor), undici with a stamp-only handler, LoadLab's client, and an aiohttp
 * client timed like `vllm bench serve` (bench/aiohttp_reader.py; skipped with a message when
 * Debian's python3-aiohttp is absent). See bench/yard-readers.ts for each reader.
 *
 * Full run: 128 streams × 600 tokens at 10 ms gaps, eight rounds (the order of readers rotates
 * each round; one pass moves by ±20 % on a shared VM, so each target is judged on the rounds' median and its
 * interval, bench/verdict.ts: met, missed, or the rounds cannot decide; eight rounds give the interval from the
 * second smallest to the second largest round at 93.0 %, where five gave [min, max] at 93.8 %, so one stray round
 * no longer decides it); `--quick`: 32 streams × 100 tokens,
 * one round. For each reader and round:
 * - CPU per token event (µs) = reader CPU over the pass / (streams × tokens), and its ratio to
 *   the bare reader's in the SAME round;
 * - ITL p99 as the reader sees it, beside the true gap: the p99 of the server's own send-time
 *   gaps for the same streams (`GET /sent`);
 * - event-loop delay p99 (Node readers; `perf_hooks.monitorEventLoopDelay`, 1 ms resolution).
 * A whole `loadlab run` (reader `run`) is set against aiohttp's whole process, beside the floor of the same round
 * (the bare reader + a whole process's fixed cost, bench/whole-process.ts) and, where this machine sets
 * NODE_EXTRA_CA_CERTS, beside the ratio without what that costs every Node start. Each line carries the load average.
 */
import { loadavg } from 'node:os';
import { spawnNullServer, type NullServerChild } from '../src/calibrate/null-server';
import { dist, getJson, loadLine, machine, round, syscallCost, type BenchOptions, type BenchResult, type Dist } from './common';
import { aiohttpMissing, aiohttpReader } from './aiohttp-reader';
import { bareReader, onreadReader, oursReader, undiciReader, type PassSpec, type ReaderPass } from './yard-readers';
import { splitCores } from './cpu-split';
import { cliCpuMs, type FixedCosts, fixedCosts, fixedLine, loadlabRunReader } from './whole-process';
import { judgeRounds, judgementText } from './verdict';

const FULL = { streams: 128, tokens: 600, gapMs: 10, rounds: 8 };
const QUICK = { streams: 32, tokens: 100, gapMs: 10, rounds: 1 };

const READERS = {
  bare: bareReader,
  onread: onreadReader,
  undici: undiciReader,
  ours: oursReader,
  aiohttp: aiohttpReader,
  run: loadlabRunReader,
};
type ReaderName = keyof typeof READERS;

/** One reader's figures in one round. */
export interface YardRow {
  reader: ReaderName;
  round: number;
  cpuUsPerEvent: number;
  /** Of it, kernel (system) time, µs per event. */
  systemUsPerEvent: number;
  /** CPU per event / the bare reader's in the same round. */
  ratioToBare: number;
  itlMs: Dist;
  /** The server's send gaps for the same streams, ms (the true gap). */
  trueGapMs: Dist;
  loopDelayP99Ms: number | null;
  ok: number;
  cpuPercentOfOneCore: number;
  processCpuMs?: number;
  loadAverage1m: number;
}

/** Send gaps of the server for ids starting with `prefix` (from `GET /sent`), ms. */
async function sentGaps(src: NullServerChild, prefix: string): Promise<number[]> {
  const sent = await getJson<Record<string, number[]>>(`${src.baseUrl}/sent`);
  const out: number[] = [];
  for (const [id, t] of Object.entries(sent)) {
    if (!id.startsWith(`${prefix}-`)) continue;
    for (let k = 1; k < t.length; k++) out.push(t[k] - t[k - 1]);
  }
  return out;
}

function line(r: YardRow): string {
  const loop = r.loopDelayP99Ms === null ? 'n/a' : `${r.loopDelayP99Ms} ms`;
  return (
    `round ${r.round} ${r.reader.padEnd(7)} ${r.reader === 'run' ? 'whole-process CPU' : 'CPU'} ${r.cpuUsPerEvent} µs/event (kernel ${r.systemUsPerEvent}; ${r.ratioToBare}× bare, ${r.cpuPercentOfOneCore} % of a core), ` +
    `ITL p50 ${r.itlMs.p50} / p99 ${r.itlMs.p99} ms vs true gap p99 ${r.trueGapMs.p99} ms, loop delay p99 ${loop}, ` +
    `ok ${r.ok}${r.processCpuMs !== undefined ? `, whole process ${round(r.processCpuMs, 0)} ms CPU` : ''} [load ${r.loadAverage1m}]`
  );
}

/** One reader's row (its ratio to bare is filled in once the round is done). */
async function row(
  src: NullServerChild,
  reader: ReaderName,
  rnd: number,
  r: ReaderPass,
  events: number,
  prefix: string,
): Promise<YardRow> {
  const out: YardRow = {
    reader,
    round: rnd,
    cpuUsPerEvent: round((r.cpuMs * 1000) / events, 2),
    systemUsPerEvent: round((r.systemMs * 1000) / events, 2),
    ratioToBare: NaN,
    itlMs: dist(r.itlMs),
    trueGapMs: dist(await sentGaps(src, r.idPrefix ?? prefix)),
    loopDelayP99Ms: Number.isNaN(r.loopDelayP99Ms) ? null : round(r.loopDelayP99Ms),
    ok: r.ok,
    cpuPercentOfOneCore: round((r.cpuMs / r.wallMs) * 100, 1),
    loadAverage1m: round(loadavg()[0], 2),
  };
  if (r.processCpuMs !== undefined) out.processCpuMs = r.processCpuMs;
  return out;
}

/** Run the yardstick (`quick`: 32 × 100, one round). */
export async function run(opts: BenchOptions = {}): Promise<BenchResult> {
  const size = opts.quick ? QUICK : FULL;
  const machineBefore = machine();
  const lines: string[] = [];
  const missing = await aiohttpMissing();
  const names = (Object.keys(READERS) as ReaderName[]).filter((n) => n !== 'aiohttp' || missing === undefined);
  if (missing !== undefined) lines.push(`aiohttp reader skipped: ${missing}`);
  const syscall = syscallCost();
  lines.push(syscall.line);
  const src = await spawnNullServer();
  const split = splitCores(src.pid);
  lines.push(split.line);
  const rows: YardRow[] = [];
  const help = await cliCpuMs(['--help'], 5);
  const helpLoad = round(loadavg()[0], 2);
  lines.push(
    `loadlab --help, whole process: CPU median ${round(help.medianMs, 1)} ms of ${help.all.map((x) => round(x, 0)).join(', ')} [load ${helpLoad}]`,
  );
  const fixed = await fixedCosts(src.baseUrl, src.port);
  lines.push(fixedLine(fixed));
  try {
    // Warm-up: JIT-compile every Node reader's path before anything is measured.
    for (const n of names.filter((x) => x !== 'aiohttp' && x !== 'run')) {
      await READERS[n]({ baseUrl: src.baseUrl, port: src.port, streams: 16, tokens: 100, gapMs: 2, prefix: `warm-${n}` });
    }
    await getJson(`${src.baseUrl}/sent`);
    for (let rnd = 1; rnd <= size.rounds; rnd++) {
      // The order rotates each round, so no reader always follows the same one as the load drifts.
      const order = names.map((_, i) => names[(i + rnd - 1) % names.length]);
      const round1: YardRow[] = [];
      for (const reader of order) {
        const p: PassSpec = { baseUrl: src.baseUrl, port: src.port, ...size, prefix: `${reader}-${rnd}` };
        const r: ReaderPass = await READERS[reader](p);
        round1.push(await row(src, reader, rnd, r, size.streams * size.tokens, p.prefix));
      }
      const bareUs = round1.find((r) => r.reader === 'bare')!.cpuUsPerEvent;
      for (const r of round1) {
        r.ratioToBare = round(r.cpuUsPerEvent / bareUs, 2);
        rows.push(r);
        lines.push(line(r));
      }
    }
  } finally {
    split.release();
    await src.stop();
  }
  lines.push(loadLine());
  const help16 = { medianMs: round(help.medianMs, 1), all: help.all, loadAverage1m: helpLoad };
  return {
    name: 'yard-client',
    lines,
    targets: [...targets(rows), ...wholeTargets(rows, help16, fixed, size.streams * size.tokens)],
    data: {
      size,
      cores: split.line,
      ...syscall.data,
      rows,
      helpCpu: help16,
      fixedCpu: fixed,
    },
    machineBefore,
    machineAfter: machine(),
  };
}

/** Median (mean of the middle two when even). */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : round((s[m - 1] + s[m]) / 2);
}

/**
 * The issue's targets, each judged over the rounds with its interval (bench/verdict.ts; one pass moves by ±20 %
 * here); each names the bare reader's figure of the same kind, the floor on this machine in this run.
 */
function targets(rows: YardRow[]): BenchResult['targets'] {
  const of = (reader: ReaderName) => rows.filter((r) => r.reader === reader);
  const mid = (reader: ReaderName, k: (r: YardRow) => number) => median(of(reader).map(k));
  const ratio = judgeRounds(
    of('ours').map((r) => r.ratioToBare),
    1.2,
    'lower',
  );
  const itl = judgeRounds(
    of('ours').map((r) => r.itlMs.p99),
    12,
    'lower',
  );
  const loop = judgeRounds(
    of('ours').map((r) => r.loopDelayP99Ms ?? Infinity),
    2,
    'lower',
  );
  const over = mid('ours', (r) => round(r.itlMs.p99 - r.trueGapMs.p99));
  const at = of('ours')
    .map((r) => r.loadAverage1m)
    .join(', ');
  return [
    {
      target: 'client CPU per token event ≤ 1.2× the bare net reader (same round)',
      measured: `${judgementText(ratio, 1.2, '×')}; rounds ${of('ours')
        .map((r) => r.ratioToBare)
        .join(', ')}; against the onread floor (the read the client uses): ${onreadRatios(rows)} [load ${at}]`,
      met: ratio.verdict === 'met',
      verdict: ratio.verdict,
    },
    {
      target: 'client ITL p99 ≤ 12 ms at a true 10 ms gap',
      measured: `${judgementText(itl, 12, ' ms')}; the server's own send-gap p99 is the floor: ours exceeds it by ${over} ms, bare by ${mid('bare', (r) => round(r.itlMs.p99 - r.trueGapMs.p99))} ms (medians) [load ${at}]`,
      met: itl.verdict === 'met',
      verdict: itl.verdict,
    },
    {
      target: 'client event-loop delay p99 ≤ 2 ms',
      measured: `${judgementText(loop, 2, ' ms')} (bare reader's median ${mid('bare', (r) => r.loopDelayP99Ms ?? Infinity)} ms) [load ${at}]`,
      met: loop.verdict === 'met',
      verdict: loop.verdict,
    },
  ];
}

/** Ours over the `onread` reader of the same round, the median and the rounds. */
function onreadRatios(rows: YardRow[]): string {
  const xs: number[] = [];
  for (const r of rows.filter((x) => x.reader === 'ours')) {
    const o = rows.find((x) => x.reader === 'onread' && x.round === r.round);
    if (o) xs.push(round(r.cpuUsPerEvent / o.cpuUsPerEvent, 2));
  }
  return xs.length === 0 ? 'not measured' : `median ${median(xs)}× (rounds ${xs.join(', ')})`;
}

/**
 * Row 2 of issue #16: a whole `loadlab run` against aiohttp's whole process (median rounds), and `loadlab --help`.
 * Beside it, the floor of the same round: aiohttp's CPU over the bare reader's for the same events plus a bare
 * `node -e 0`, or plus a one-request `loadlab run` (the per-event cost at the floor, our start-up as it is).
 */
function wholeTargets(
  rows: YardRow[],
  help: { medianMs: number; all: number[]; loadAverage1m: number },
  fixed: FixedCosts,
  events: number,
): BenchResult['targets'] {
  const out: BenchResult['targets'] = [];
  const ratios: number[] = [];
  const floors: number[] = [];
  const floorsOurs: number[] = [];
  const caMs = fixed.nodeWithoutCaMs === undefined ? 0 : fixed.nodeMs - fixed.nodeWithoutCaMs; // not charged to aiohttp
  const withoutCa: number[] = [];
  for (const r of rows.filter((x) => x.reader === 'run')) {
    const a = rows.find((x) => x.reader === 'aiohttp' && x.round === r.round);
    const bare = rows.find((x) => x.reader === 'bare' && x.round === r.round);
    if (a?.processCpuMs === undefined || !r.processCpuMs) continue;
    ratios.push(round(a.processCpuMs / r.processCpuMs, 2));
    if (caMs > 0) withoutCa.push(round(a.processCpuMs / (r.processCpuMs - caMs), 2));
    if (!bare) continue;
    const bareMs = (bare.cpuUsPerEvent * events) / 1000;
    floors.push(round(a.processCpuMs / (bareMs + fixed.nodeMs), 2));
    floorsOurs.push(round(a.processCpuMs / (bareMs + fixed.oneRunMs), 2));
  }
  if (ratios.length > 0) {
    const at = rows.filter((x) => x.reader === 'run').map((r) => r.loadAverage1m);
    const floor =
      floors.length > 0
        ? `; the floor in the same rounds (bare reader + node -e 0): ${judgementText(judgeRounds(floors, 2.5, 'higher'), 2.5, '×')}, rounds ${floors.join(', ')}; ` +
          `with loadlab run's own start-up instead: ${median(floorsOurs)}× (rounds ${floorsOurs.join(', ')})`
        : '';
    const noCa =
      withoutCa.length > 0
        ? `; without this machine's NODE_EXTRA_CA_CERTS (${round(caMs, 1)} ms of every Node start): ${median(withoutCa)}× (rounds ${withoutCa.join(', ')})`
        : '';
    const j = judgeRounds(ratios, 2.5, 'higher');
    out.push({
      target: 'whole loadlab run process ≥ 2.5× cheaper than aiohttp timed like vllm bench serve (same server, same round)',
      measured: `${judgementText(j, 2.5, '×')}; rounds ${ratios.join(', ')}${floor}${noCa} [load ${at.join(', ')}]`,
      met: j.verdict === 'met',
      verdict: j.verdict,
    });
  }
  const h = judgeRounds(help.all, 150, 'lower');
  out.push({
    target: 'loadlab --help ≤ 150 ms CPU (whole process)',
    measured: `${judgementText(h, 150, ' ms', 'runs')} [load ${help.loadAverage1m}]`,
    met: h.verdict === 'met',
    verdict: h.verdict,
  });
  return out;
}
