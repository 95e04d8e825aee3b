/**
 * Lesson 05 (KV pressure): read from the runs the notebook saved in data/05-kv-pressure/.
 * Skipped until the lesson has been executed (`npm run lessons`).
 *
 * - The run sized to fit (gpu_memory_utilization 0.95) has no preemption; the overcommitted runs
 *   (utilisation 0.4, recompute and swap) have some, counted from vllm:num_preemptions_total in
 *   metrics.jsonl.
 * - Every request completed in every run: preemption delays requests, it does not fail them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromRoot } from '../src/paths';
import { counterIncrease } from '../src/stats/counters';
import { loadRun, type LoadedRun } from '../src/run/loader';
import { lessonDataReady } from './helpers/lesson-data';

const dir = fromRoot('data', '05-kv-pressure');
const FITS = 'u095-fits';
const OVERCOMMITTED = ['u040-recompute', 'u040-swap'];
const POINTS = [FITS, ...OVERCOMMITTED];
const ready = lessonDataReady(POINTS.every((p) => existsSync(join(dir, p, 'summary.json'))), dir);

function run(point: string): LoadedRun {
  const r = loadRun(join(dir, point));
  expect(r.manifest.status, `${point} did not complete`).toBe('complete');
  return r;
}

function preemptions(point: string): number {
  const metrics = run(point).metrics ?? [];
  expect(metrics.filter((m) => m.preemptionsTotal !== undefined).length, `${point}: no /metrics samples`).toBeGreaterThan(1);
  return counterIncrease(metrics, 'preemptionsTotal');
}

describe.skipIf(!ready)(`lesson 05 saved runs (${ready ? dir : 'not found: run `npm run lessons` first to execute the notebooks'})`, () => {
  it('every request completed in every run, with all 200 output tokens', () => {
    for (const p of POINTS) {
      const r = run(p);
      expect(r.summary!.failed, p).toBe(0);
      expect(r.summary!.completed, p).toBe(r.summary!.requests);
      expect(r.summary!.requests, p).toBe(60);
      for (const rec of r.records.filter((x) => !x.warmup)) expect(rec.outputTokens, p).toBe(200);
    }
  });

  it('preemptions only where the KV cache is overcommitted', () => {
    expect(preemptions(FITS)).toBe(0);
    for (const p of OVERCOMMITTED) expect(preemptions(p), p).toBeGreaterThan(0);
  });

  it('the overcommitted runs filled the KV cache; the one that fits did not', () => {
    const maxKv = (p: string) => Math.max(...(run(p).metrics ?? []).map((m) => m.kvUsage ?? 0));
    expect(maxKv(FITS)).toBeLessThan(0.9);
    for (const p of OVERCOMMITTED) expect(maxKv(p), p).toBeGreaterThan(0.9);
  });
});
