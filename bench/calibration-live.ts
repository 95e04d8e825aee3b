/**
 * Live held-out checks of `loadlab calibrate` (issue #14). For each seed: start a simulator with a
 * hidden "unknown GPU" profile, calibrate against it (the quick plan), write the calibrated profile
 * file, start a second simulator from it, then MEASURE both servers the same way with `runLoad`:
 * (a) closed-loop output throughput at c = 1, 4, 16, 64 (256-token prompts, 128 output tokens,
 * ignore_eos) and (b) the TTFT p50 of a seeded Poisson 90/10 short/long mix (256/128 and 4000/128
 * tokens). The held-out error is calibrated-measured against hidden-measured; the engine-side
 * predictions (`predictClosedLoop`/`predictTtftMix`, virtual clock) are printed beside it.
 * Both simulators run in real time on this machine's shared cores: every run's health flags and
 * the load average are kept with its figures. `--quick`: one seed, fewer requests.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calibrate } from '../src/fit/calibration';
import { hiddenProfile } from '../src/fit/hidden-profile';
import { predictClosedLoop, predictTtftMix } from '../src/fit/predict';
import { calibratedDocument } from '../src/fit/profile-doc';
import { runLoad } from '../src/runner/runner';
import { closedLoop, openLoop, type LoadShape } from '../src/schedule/shapes';
import { DEFAULT_PROFILE, type Profile } from '../src/sim/engine/profile';
import { loadProfileFile } from '../src/sim/engine/profile-file';
import { startSim } from '../src/sim/start';
import type { RequestRecord, RequestSpec } from '../src/types';
import { type Live, tableLines } from './calibration-live-table';
import { machine, round, type BenchOptions, type BenchResult } from './common';

const GRADIENT = [1, 4, 16, 64];
const SHORT: [number, number] = [256, 128];
const LONG: [number, number] = [4000, 128];
const MIX_RATE = 4; // requests/s, as predictTtftMix's default

/** Exact-length token-id prompt, unique per `id` (its first token differs): no prefix-cache hits between requests. */
function spec(id: number, [prompt, output]: [number, number], tag?: string): RequestSpec {
  const ids = Array.from({ length: prompt }, (_, k) => 1 + ((id * 131 + k * 17) % 100_000));
  return { api: 'completions', prompt: ids, maxTokens: output, fixedOutput: true, temperature: 0, ...(tag ? { tag } : {}) };
}

/**
 * Steady-state output tokens/s of a closed loop, as `predictClosedLoop` counts it: the first `c`
 * completions are warm-up; tokens of the later ones over the time from the c-th to the last end.
 */
function closedThroughput(records: readonly RequestRecord[], c: number): number {
  const ok = records.filter((r) => r.ok).sort((a, b) => a.endMs - b.endMs);
  const later = ok.slice(c);
  if (later.length === 0) return NaN;
  const tokens = later.reduce((a, r) => a + (r.outputTokens ?? 0), 0);
  return (1e3 * tokens) / (later[later.length - 1].endMs - ok[c - 1].endMs);
}

async function measure(
  baseUrl: string,
  shape: LoadShape,
  workload: (i: number) => RequestSpec,
  requests: number,
  value: (records: RequestRecord[], ttftP50: number) => number,
): Promise<Live> {
  const r = await runLoad({ baseUrl, shape, workload, requests, out: false, progress: false, sampleMetrics: false });
  const s = r.summary;
  return {
    value: value(r.records, s.ttftMs.p50),
    completed: s.completed,
    failed: s.failed,
    cachedTokens: r.records.reduce((a, x) => a + (x.cachedTokens ?? 0), 0),
    clientBound: s.health?.clientBound ?? false,
    simBehind: s.health?.simBehind ?? false,
    load1: machine().loadAverage[0],
  };
}

/** Every live figure of one server; request ids start at `base` on both servers, so both get the same prompts. */
async function liveFigures(baseUrl: string, quick: boolean) {
  let base = 1_000;
  await measure(
    baseUrl,
    closedLoop(2),
    (i) => spec(base + i, [64, 8]),
    4,
    () => 0,
  ); // warm-up, not kept
  const closed: Record<number, Live> = {};
  const closedRequests: Record<number, number> = {};
  for (const c of GRADIENT) {
    base += 10_000;
    const b = base;
    const n = (closedRequests[c] = Math.max(16, (quick ? 3 : 4) * c));
    closed[c] = await measure(
      baseUrl,
      closedLoop(c),
      (i) => spec(b + i, SHORT),
      n,
      (rs) => closedThroughput(rs, c),
    );
  }
  base += 10_000;
  const mb = base;
  const n = quick ? 80 : 160;
  const longAt = longPositions(n, 0.1, 5);
  const mix = await measure(
    baseUrl,
    openLoop(MIX_RATE, { seed: 14 }),
    (i) => (longAt.has(i) ? spec(mb + i, LONG, 'long') : spec(mb + i, SHORT, 'short')),
    n,
    (_rs, p50) => p50,
  );
  return { closed, closedRequests, mix, mixRequests: n };
}

/** Exactly round(n·share) long positions, seeded (a Fisher–Yates prefix, as `shortLongMix`). */
function longPositions(n: number, share: number, seed: number): Set<number> {
  let s = seed >>> 0 || 1;
  const rnd = () => (s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
  const idx = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return new Set(idx.slice(0, Math.round(n * share)));
}

async function withSim<T>(profileFile: string, f: (baseUrl: string) => Promise<T>): Promise<T> {
  // cached_tokens is reported only with --enable-prompt-tokens-details (vllm/entrypoints/openai/completion/serving.py):
  // the bench keeps each run's count to show no prefix-cache hit entered a figure.
  const sim = await startSim({ profile: profileFile, extraArgs: ['--enable-prompt-tokens-details'] });
  try {
    return await f(sim.baseUrl);
  } finally {
    await sim.stop();
  }
}

const rel = (a: number, b: number) => a / b - 1;

async function one(seed: number, quick: boolean, dir: string) {
  const h = hiddenProfile(seed);
  const hiddenFile = join(dir, `hidden-${seed}.json`);
  writeFileSync(hiddenFile, JSON.stringify(h.document));
  const fitFile = join(dir, `calibrated-${seed}.json`);
  let wallSeconds = 0;
  let fitted: Profile = DEFAULT_PROFILE;
  const hidden = await withSim(hiddenFile, async (url) => {
    const r = await calibrate({ baseUrl: url, prior: DEFAULT_PROFILE, quick: true });
    wallSeconds = r.wallSeconds;
    fitted = r.fit.profile;
    writeFileSync(fitFile, JSON.stringify(calibratedDocument(r, loadProfileFile(), `calibrated-live-${seed}`)));
    return liveFigures(url, quick);
  });
  const calibrated = await withSim(fitFile, (url) => liveFigures(url, quick));
  const [sp, so] = SHORT;
  const closed = GRADIENT.map((c) => {
    // The engine counts as many completions after the first c as the live run did.
    const opts = { promptTokens: sp, outputTokens: so, requests: hidden.closedRequests[c] - c };
    const eh = predictClosedLoop(h.profile, c, opts);
    const ef = predictClosedLoop(fitted, c, opts);
    const [a, b] = [hidden.closed[c], calibrated.closed[c]];
    return {
      c,
      hidden: a,
      calibrated: b,
      error: rel(b.value, a.value),
      engineHidden: eh,
      engineFitted: ef,
      engineError: rel(ef, eh),
    };
  });
  const mixOpts = { requests: hidden.mixRequests, ratePerSec: MIX_RATE, short: SHORT, long: LONG };
  const eh = predictTtftMix(h.profile, mixOpts);
  const ef = predictTtftMix(fitted, mixOpts);
  const mix = {
    requests: hidden.mixRequests,
    hidden: hidden.mix,
    calibrated: calibrated.mix,
    error: rel(calibrated.mix.value, hidden.mix.value),
    engineHidden: eh,
    engineFitted: ef,
    engineError: rel(ef, eh),
  };
  return { seed, calibrationWallSeconds: round(wallSeconds, 1), closed, mix };
}

type Row = Awaited<ReturnType<typeof one>>;

/** Run the benchmark (≈ 4 min per seed; `quick`: one seed, fewer requests). */
export async function run(o: BenchOptions = {}): Promise<BenchResult> {
  const machineBefore = machine();
  const quick = o.quick === true;
  const dir = mkdtempSync(join(tmpdir(), 'loadlab-bench-calibration-live-'));
  const rows: Row[] = [];
  try {
    for (const seed of quick ? [7] : [7, 11]) rows.push(await one(seed, quick, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const lines = rows.flatMap(tableLines);
  lines.push(
    'measured: live runs on two real-time simulators (hidden profile, calibrated profile), the same requests; error = calibrated / hidden − 1.',
    'engine: the same shapes on the simulator engine with a virtual clock (no API overhead, no machine load); throughput counts completions after the first c.',
  );
  const tputErr = Math.max(...rows.flatMap((r) => r.closed.map((p) => Math.abs(p.error))));
  const ttftErr = Math.max(...rows.map((r) => Math.abs(r.mix.error)));
  const wall = Math.max(...rows.map((r) => r.calibrationWallSeconds));
  const unhealthy = rows.flatMap((r) => [...r.closed.flatMap((p) => [p.hidden, p.calibrated]), r.mix.hidden, r.mix.calibrated]);
  const flagged = unhealthy.filter((l) => l.clientBound || l.simBehind || l.failed > 0 || l.cachedTokens > 0).length;
  return {
    name: 'calibration-live',
    lines,
    targets: [
      { target: 'calibration wall time (quick plan) ≤ 180 s', measured: `${wall} s (worst seed)`, met: wall <= 180 },
      {
        target: 'live throughput c=1–64 within 5 %',
        measured: `${(100 * tputErr).toFixed(1)} % (worst point)`,
        met: tputErr <= 0.05,
      },
      {
        target: 'live TTFT p50 of a 90/10 mix within 10 %',
        measured: `${(100 * ttftErr).toFixed(1)} % (worst seed)`,
        met: ttftErr <= 0.1,
      },
      {
        target: 'no run client-bound, sim-behind, with failures or prefix-cache hits',
        measured: `${flagged} of ${unhealthy.length} flagged`,
        met: flagged === 0,
      },
    ],
    data: { quick, rows },
    machineBefore,
    machineAfter: machine(),
  };
}
