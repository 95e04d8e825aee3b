/**
 * Lesson 01 (serial baseline): the headline phenomena, read from the run the notebook saved in
 * data/01-serial-baseline/serial/. Skipped until the lesson has been executed (`npm run lessons`).
 *
 * - the warm-up requests are in the records, flagged, and left out of the summary;
 * - closed loop of 1: never more than one request in flight;
 * - TPOT p50 sits in the simulator's calibrated single-stream band (≈ 6–9 ms on the 4090 model) and
 *   above the pure weights-bandwidth floor (weights ÷ memory bandwidth ≈ 4.4 ms), on a real GPU too.
 * - the remote-API pitfall (simulator only, data/01-serial-baseline/serial-delayed/): a known delay in
 *   front of every response moves TTFT by about that delay and E2E / n by about delay / n, and leaves
 *   vLLM's TPOT = (E2E − TTFT)/(n − 1) where it was.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromRoot } from '../src/paths';
import { loadRun } from '../src/run/loader';
import { DEFAULT_PROFILE } from '../src/sim/engine/profile';
import { percentile } from '../src/stats/percentile';
import { naiveTpotValues } from '../src/lesson/story-01';
import { lessonDataReady } from './helpers/lesson-data';

const dir = fromRoot('data', '01-serial-baseline', 'serial');
const ready = lessonDataReady(existsSync(`${dir}/summary.json`), dir);
const why = ready ? dir : `${dir} not found: run \`npm run lessons\` first to execute the notebooks`;

describe.skipIf(!ready)(`lesson 01 saved run (${why})`, () => {
  const run = () => {
    const r = loadRun(dir);
    expect(r.manifest.status, 'the run did not complete').toBe('complete');
    expect(r.problems).toEqual([]);
    return r;
  };

  it('flags the warm-up requests and leaves them out of the summary', () => {
    const r = run();
    const warmup = Number((r.manifest.workload as Record<string, unknown> | undefined)?.warmup ?? NaN);
    const warm = r.records.filter((x) => x.warmup);
    const measured = r.records.filter((x) => !x.warmup);
    expect(warmup).toBeGreaterThanOrEqual(1);
    expect(warm).toHaveLength(warmup);
    // Warm-ups go first, one by one, and take the lowest indices.
    expect(Math.max(...warm.map((x) => x.index))).toBeLessThan(Math.min(...measured.map((x) => x.index)));
    expect(r.summary!.requests).toBe(measured.length);
    expect(r.summary!.completed).toBe(measured.length);
    expect(r.summary!.ttftMs.n).toBe(measured.length);
  });

  it('is serial: closed loop of 1, peak in-flight 1, no overlap between requests', () => {
    const r = run();
    expect(r.manifest.load.options.concurrency).toBe(1);
    expect((r.manifest.client as Record<string, unknown>).peakInFlight).toBe(1);
    const byStart = [...r.records].sort((a, b) => a.startMs - b.startMs);
    for (let i = 1; i < byStart.length; i++) expect(byStart[i].startMs).toBeGreaterThanOrEqual(byStart[i - 1].endMs);
  });

  it('TPOT p50 is in the calibrated band and above the weights-bandwidth floor', () => {
    const r = run();
    const tpot = r.records.filter((x) => !x.warmup && x.ok && Number.isFinite(x.tpotMs)).map((x) => x.tpotMs!);
    expect(tpot.length).toBeGreaterThanOrEqual(10);
    const p50 = percentile(tpot, 50);
    const m = DEFAULT_PROFILE.model;
    const floorMs = ((m.linearWeightBytes + m.lmHeadBytes) / DEFAULT_PROFILE.gpu.memoryBandwidthBytesPerSec) * 1e3;
    expect(floorMs).toBeCloseTo(4.44, 2);
    expect(p50).toBeGreaterThan(floorMs);
    if (r.manifest.target.simulated) {
      expect(p50).toBeGreaterThanOrEqual(6);
      expect(p50).toBeLessThanOrEqual(9);
    }
    // E2E = TTFT + generation, per request.
    for (const x of r.records.filter((y) => y.ok && y.outputTokens! >= 2)) {
      expect(x.e2eMs!).toBeCloseTo(x.ttftMs! + x.tpotMs! * (x.outputTokens! - 1), 6);
    }
  });
});

const delayedDir = fromRoot('data', '01-serial-baseline', 'serial-delayed');
const delayedReady = ready && lessonDataReady(existsSync(`${delayedDir}/summary.json`), delayedDir);

describe.skipIf(!delayedReady)(`lesson 01 remote-API pitfall (${delayedDir})`, () => {
  it('the injected delay moves TTFT and E2E / n, not vLLM TPOT', () => {
    const base = loadRun(dir);
    const delayed = loadRun(delayedDir);
    expect(delayed.manifest.status).toBe('complete');
    expect(delayed.manifest.target.simulated).toBe(true);
    // The delay is an input of the experiment, written in the run's notes ("… 0.2 s before the response headers").
    const note = (delayed.manifest.notes ?? []).find((n) => n.includes('slow_headers')) ?? '';
    const delayMs = Number(/([\d.]+) s before/.exec(note)?.[1] ?? NaN) * 1000;
    expect(delayMs).toBeGreaterThan(0);
    const ok = (r: typeof base) => r.records.filter((x) => !x.warmup && x.ok);
    const p50 = (xs: number[]) => percentile(xs, 50);
    const ttft = (r: typeof base) => p50(ok(r).map((x) => x.ttftMs!));
    const tpot = (r: typeof base) =>
      p50(
        ok(r)
          .map((x) => x.tpotMs!)
          .filter(Number.isFinite),
      );
    // Every delayed request waited at least the delay before its first token.
    for (const x of ok(delayed)) expect(x.ttftMs!).toBeGreaterThanOrEqual(delayMs * 0.95);
    expect(ttft(delayed) - ttft(base)).toBeGreaterThan(delayMs * 0.8);
    // vLLM's TPOT does not see a delay that comes before the first token.
    expect(tpot(delayed) / tpot(base)).toBeGreaterThan(0.8);
    expect(tpot(delayed) / tpot(base)).toBeLessThan(1.25);
    // E2E / n does: it is above TPOT in both runs, and higher with the delay.
    expect(p50(naiveTpotValues(base.records))).toBeGreaterThan(tpot(base));
    expect(p50(naiveTpotValues(delayed.records)) - p50(naiveTpotValues(base.records))).toBeGreaterThan(0);
  });
});
