/**
 * Lesson 05 (KV pressure): read from the runs the notebook saved in data/05-kv-pressure/.
 * Skipped until the lesson has been executed (`npm run lessons`).
 *
 * What the lesson claims, checked on the saved runs:
 * - `u095-fits` (the course's gpu_memory_utilization 0.95, no override) holds all 60 requests at their
 *   peak, so it has no preemption; `tight-recompute` sets `--num-gpu-blocks-override` to the count at
 *   which exactly half of them fit (30 × peak blocks + the null block), and the server ran with it
 *   (`num_gpu_blocks` in `vllm:cache_config_info`), so it preempts (vllm:num_preemptions_total).
 * - `tight-swap` is measured on the simulator (its swap mode) or on a real vLLM V0 with
 *   `--preemption-mode swap` (vllm/core/scheduler.py `_preempt`); never on V1, which preempts by
 *   recompute only (vllm/v1/core/sched/scheduler.py `_preempt_request`). Checked when saved.
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
const TIGHT = 'tight-recompute';
const SWAP = 'tight-swap';
const N = 60;
const OUTPUT_TOKENS = 200;
const BLOCK_SIZE = 16;
const saved = (p: string) => existsSync(join(dir, p, 'summary.json'));
const ready = lessonDataReady(saved(FITS) && saved(TIGHT), dir);
/** The swap point is measured only on the simulator or a vLLM V0. */
const OVERCOMMITTED = saved(SWAP) ? [TIGHT, SWAP] : [TIGHT];
const POINTS = [FITS, ...OVERCOMMITTED];

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

const maxOf = (point: string, key: 'kvUsage' | 'running') => Math.max(...(run(point).metrics ?? []).map((m) => m[key] ?? 0));

/** KV blocks the server reported (`vllm:cache_config_info` num_gpu_blocks). */
function serverBlocks(point: string): number {
  const blocks = Number(run(point).manifest.target.cacheConfig?.num_gpu_blocks);
  expect(Number.isInteger(blocks) && blocks > 0, `${point}: num_gpu_blocks not in the manifest`).toBe(true);
  return blocks;
}

/** Blocks one request holds at its peak (prompt + 200 output tokens), from the saved records. */
function peakBlocks(point: string): number {
  const prompts = run(point)
    .records.filter((r) => !r.warmup)
    .map((r) => r.promptTokens ?? NaN);
  expect(prompts.every(Number.isInteger), `${point}: records without promptTokens`).toBe(true);
  return Math.ceil((Math.max(...prompts) + OUTPUT_TOKENS) / BLOCK_SIZE);
}

describe.skipIf(!ready)(
  `lesson 05 saved runs (${ready ? dir : 'not found: run `npm run lessons` first to execute the notebooks'})`,
  () => {
    it(`every request completed in every run, with all ${OUTPUT_TOKENS} output tokens`, () => {
      for (const p of POINTS) {
        const r = run(p);
        expect(r.summary!.failed, p).toBe(0);
        expect(r.summary!.completed, p).toBe(r.summary!.requests);
        expect(r.summary!.requests, p).toBe(N);
        for (const rec of r.records.filter((x) => !x.warmup)) expect(rec.outputTokens, p).toBe(OUTPUT_TOKENS);
      }
    });

    it('the tight points ran with --num-gpu-blocks-override = half the requests at their peak + the null block', () => {
      for (const p of OVERCOMMITTED) {
        const t = run(p).manifest.target;
        const override = Number(t.flags?.numGpuBlocksOverride);
        expect(override, `${p}: flags`).toBe((N / 2) * peakBlocks(p) + 1);
        expect(serverBlocks(p), `${p}: the server's num_gpu_blocks`).toBe(override);
        expect(Math.floor((serverBlocks(p) - 1) / peakBlocks(p)), p).toBeLessThan(N);
      }
      expect(run(FITS).manifest.target.flags?.numGpuBlocksOverride).toBeUndefined();
      expect(serverBlocks(FITS) - 1, 'the fits point holds all requests at their peak').toBeGreaterThanOrEqual(
        N * peakBlocks(FITS),
      );
    });

    it('preemptions only where the KV cache is overcommitted', () => {
      expect(preemptions(FITS)).toBe(0);
      for (const p of OVERCOMMITTED) expect(preemptions(p), p).toBeGreaterThan(0);
    });

    it('the overcommitted runs filled the KV cache and ran more requests than fit at their peak; the one that fits did not fill it', () => {
      expect(maxOf(FITS, 'kvUsage')).toBeLessThan(0.9);
      for (const p of OVERCOMMITTED) {
        expect(maxOf(p, 'kvUsage'), p).toBeGreaterThan(0.9);
        // Admission checks only the prompt, so more requests run than fit at their peak (what makes preemption certain).
        expect(maxOf(p, 'running'), p).toBeGreaterThan(N / 2);
        expect(maxOf(p, 'running'), p).toBeLessThan(N);
      }
    });

    it('the swap point comes only from the simulator or a vLLM V0, run with --preemption-mode swap', () => {
      if (saved(SWAP)) {
        const t = run(SWAP).manifest.target;
        expect(t.simulated || t.engine === 'V0', `engine ${t.engine}`).toBe(true);
        expect(t.flags?.preemptionMode).toBe('swap');
      }
      for (const p of [FITS, TIGHT]) expect(typeof run(p).manifest.target.simulated, p).toBe('boolean');
    });
  },
);
