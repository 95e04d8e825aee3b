/**
 * Lesson 01 (serial baseline): the headline phenomena, read from the run the notebook saved in
 * data/01-serial-baseline/serial/. Skipped until the lesson has been executed (`npm run lessons`).
 *
 * - the warm-up requests are in the records, flagged, and left out of the summary;
 * - closed loop of 1: never more than one request in flight;
 * - TPOT p50 sits in the simulator's calibrated single-stream band (≈ 6–9 ms on the 4090 model) and
 *   above the pure weights-bandwidth floor (weights ÷ memory bandwidth ≈ 4.4 ms), on a real GPU too.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromRoot } from '../src/paths';
import { loadRun } from '../src/run/loader';
import { DEFAULT_PROFILE } from '../src/sim/engine/profile';
import { percentile } from '../src/stats/percentile';
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
