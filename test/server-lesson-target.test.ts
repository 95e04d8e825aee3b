/**
 * The real-GPU path end to end, against a stand-in `vllm` executable that runs the simulator with
 * the same flags (test/fixtures/vllm-sim): a lesson launches vLLM with chunked prefill off, runs
 * the long-plus-20-short scenario, restarts it with chunked prefill on, runs again, and stops.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { measure } from '../src/lesson/measure';
import { longPlusShort } from '../src/workload/workload';
import { openTarget, type LessonTarget } from '../src/lesson/open-target';
import { isListening } from '../src/proc/port';

const root = mkdtempSync(join(tmpdir(), 'loadlab-target-'));
let target: LessonTarget | undefined;
afterAll(async () => {
  await target?.stop();
  rmSync(root, { recursive: true, force: true });
});

describe('openTarget with LOADLAB_VLLM_MODEL: launch, measure, restart with other flags, measure, stop', () => {
  it('records the effective flags and a metrics timeline for each run, and leaves nothing behind', async () => {
    const env = {
      LOADLAB_VLLM_MODEL: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
      LOADLAB_VLLM_BIN: join(__dirname, 'fixtures', 'vllm-sim'),
      LOADLAB_VLLM_PORT: '0',
    };
    target = await openTarget({ flags: { enableChunkedPrefill: false }, env });
    expect(target.mode).toBe('launched');
    const scenario = longPlusShort();
    const off = await measure(target, { lesson: 'ab', name: 'off', root, shape: scenario, sampleMetrics: 100, progress: false });
    const firstUrl = target.baseUrl;
    await target.restart({ enableChunkedPrefill: true, maxNumBatchedTokens: 512 });
    const on = await measure(target, { lesson: 'ab', name: 'on', root, shape: scenario, sampleMetrics: 100, progress: false });

    for (const [run, flags] of [
      [off, { enableChunkedPrefill: false }],
      [on, { enableChunkedPrefill: true, maxNumBatchedTokens: 512 }],
    ] as const) {
      expect(run.summary.completed).toBe(21);
      const manifest = JSON.parse(readFileSync(join(run.dir, 'manifest.json'), 'utf8'));
      expect(manifest.target.flags).toEqual(flags);
      expect(manifest.target.mode).toBe('launched');
      expect(manifest.target.serverVersion).toBeTruthy();
      expect(manifest.target.cacheConfig.num_gpu_blocks).toBeTruthy();
      const lines = readFileSync(join(run.dir, 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const first = Math.min(...run.records.map((r) => r.startMs));
      const last = Math.max(...run.records.map((r) => r.endMs));
      expect(lines.filter((m) => m.tMs >= first && m.tMs <= last).length).toBeGreaterThan(0);
      expect(existsSync(join(run.dir, 'server.log'))).toBe(true);
    }

    const url = target.baseUrl;
    await target.stop();
    expect(await isListening(Number(new URL(url).port), '127.0.0.1')).toBe(false);
    expect(await isListening(Number(new URL(firstUrl).port), '127.0.0.1')).toBe(false);
    expect(target.logTail()).toContain('SIMULATED');
  }, 90_000);
});
