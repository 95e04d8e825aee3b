/**
 * Calibration recovers a profile it was not told (issue #14). A simulator runs a hidden "unknown GPU"
 * profile (every fitted perf parameter scaled by a seeded factor within ±40 %); `calibrate` starts
 * from the default profile and must bring every parameter it reports identified within 5 % of the
 * hidden value. The simulator runs in real time on a loaded machine, so the fit reads its /metrics
 * (modelled step times) and the assertions are on the fit, never on wall-clock.
 * Predictions are compared on the simulator's engine with a virtual clock: the fitted profile
 * against the hidden one, closed-loop throughput at 1–64 and the TTFT p50 of a 90/10 short/long mix.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CalibrationResult, calibrate } from '../src/fit/calibration';
import { hiddenProfile } from '../src/fit/hidden-profile';
import { predictClosedLoop, predictTtftMix } from '../src/fit/predict';
import { calibratedDocument } from '../src/fit/profile-doc';
import { DEFAULT_PROFILE } from '../src/sim/engine/profile';
import { loadProfileFile } from '../src/sim/engine/profile-file';
import { parseProfileDocument } from '../src/sim/engine/profile-schema';
import { type SimHandle, startSim } from '../src/sim/start';

const SEED = 7;
const hidden = hiddenProfile(SEED);
const tmp = mkdtempSync(join(tmpdir(), 'loadlab-fit-recovery-'));
let sim: SimHandle | undefined;
let result: CalibrationResult;
const progress: string[] = [];

beforeAll(async () => {
  const file = join(tmp, 'hidden.json');
  writeFileSync(file, JSON.stringify(hidden.document, null, 2));
  sim = await startSim({ profile: file });
  result = await calibrate({ baseUrl: sim.baseUrl, prior: DEFAULT_PROFILE, quick: true, onProgress: (l) => progress.push(l) });
}, 170_000);

afterAll(async () => {
  await sim?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const rel = (a: number, b: number) => Math.abs(a / b - 1);

describe('calibrate against a simulator with a hidden profile', () => {
  it('the hidden profile differs from the prior by more than the tolerance in most parameters', () => {
    const far = result.params.filter((p) => rel(p.prior, hidden.profile.perf[p.name]) > 0.05);
    expect(far.length).toBeGreaterThanOrEqual(5);
  });

  it('reads its means from /metrics, labels the target a simulator, and prints progress per probe', () => {
    expect(result.target.simulated).toBe(true);
    expect(result.target.measuredFrom).toBe('server /metrics');
    expect(result.target.kvCapacityTokens).toBeGreaterThan(0);
    expect(progress.filter((l) => /^\[\d+\/\d+\]/.test(l))).toHaveLength(result.plan.length);
  });

  it('brings every identified parameter within 5 % of the hidden value, and identifies the main ones', () => {
    const identified = result.params.filter((p) => p.identified);
    for (const p of identified) expect(rel(p.value, hidden.profile.perf[p.name]), p.name).toBeLessThan(0.05);
    const why = result.params.map((p) => `${p.name}: ${p.reason ?? 'identified'}`).join('; ');
    const seen = result.observations.map((o, i) => `${o.probe} ${o.ms.toFixed(3)} ms (${result.fit.residuals[i].toFixed(4)})`);
    expect(
      identified.map((p) => p.name),
      `${why}; observations ${seen.join(', ')}`,
    ).toEqual(expect.arrayContaining(['etaWeights', 'marlinFlops']));
    for (const p of result.params.filter((x) => !x.identified)) expect(p.reason, p.name).toMatch(/\S/);
    expect(result.notIdentified).toEqual(result.params.filter((p) => !p.identified).map((p) => p.name));
  });

  it('predicts closed-loop throughput over 1–64 within 5 % of the hidden profile', () => {
    for (const c of [1, 2, 4, 8, 16, 32, 64]) {
      const truth = predictClosedLoop(hidden.profile, c);
      const predicted = predictClosedLoop(result.fit.profile, c);
      expect(rel(predicted, truth), `concurrency ${c}: ${predicted} vs ${truth} tok/s`).toBeLessThan(0.05);
    }
  });

  it('predicts the engine-side TTFT p50 of a 90/10 short/long mix within 10 %', () => {
    const truth = predictTtftMix(hidden.profile);
    const predicted = predictTtftMix(result.fit.profile);
    expect(rel(predicted, truth), `${predicted} vs ${truth} ms`).toBeLessThan(0.1);
  });

  it('writes a calibrated profile file that the profile checker accepts and the loader reads back', () => {
    const doc = calibratedDocument(result, loadProfileFile(), 'calibrated-hidden');
    const parsed = parseProfileDocument(doc, 'calibrated-hidden');
    expect(parsed.profile.status).toBe('calibrated');
    expect(parsed.calibration?.residuals).toHaveLength(result.observations.length);
    expect(Object.keys(parsed.calibration?.intervals ?? {}).sort()).toEqual(
      result.params
        .filter((p) => p.identified)
        .map((p) => p.name)
        .sort(),
    );
    expect(parsed.calibration?.notIdentified).toEqual(result.notIdentified);
    expect(String(doc.description)).toMatch(/SIMULATOR/);
    const file = join(tmp, 'calibrated.json');
    writeFileSync(file, JSON.stringify(doc));
    expect(loadProfileFile(file).profile.perf.marlinFlops).toBeCloseTo(result.fit.profile.perf.marlinFlops, -9);
  });

  it('the calibrated file runs in the simulator (loadlab sim --profile FILE), which reports it calibrated', async () => {
    const file = join(tmp, 'calibrated-run.json');
    writeFileSync(file, JSON.stringify(calibratedDocument(result, loadProfileFile(), 'calibrated-run')));
    const fitted = await startSim({ profile: file });
    try {
      expect(fitted.profile).toMatchObject({ id: 'calibrated-run', status: 'calibrated' });
    } finally {
      await fitted.stop();
    }
  }, 60_000);
});
