import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { counterDeltas, counterIncrease, counterRates, prefixHitRates } from '../src/stats/counters';
import { parsePrometheus } from '../src/observe/prometheus';
import { cacheConfigInfo, simLatenessMs, summarizeCacheConfig, toMetricsSample } from '../src/observe/vllm-metrics';
import type { MetricsSample } from '../src/types';

const scrape = (name: string) => parsePrometheus(readFileSync(join(__dirname, 'fixtures', name), 'utf8'));

describe('toMetricsSample', () => {
  it('maps current vLLM V1 names', () => {
    expect(toMetricsSample(scrape('vllm-metrics-v1.prom'), 1250)).toEqual({
      tMs: 1250,
      running: 7,
      waiting: 3,
      kvUsage: 0.4375,
      preemptionsTotal: 2,
      promptTokensTotal: 52311,
      generationTokensTotal: 18044,
      prefixQueriesTotal: 52311,
      prefixHitsTotal: 20480,
    });
  });

  it('maps old names (gpu_cache_usage_perc, gpu_prefix_cache_*) and sums over engines', () => {
    const s = toMetricsSample(scrape('vllm-metrics-old.prom'), 0);
    expect(s).toMatchObject({
      running: 9,
      waiting: 2,
      preemptionsTotal: 4,
      promptTokensTotal: 3000,
      generationTokensTotal: 700,
      prefixQueriesTotal: 3000,
      prefixHitsTotal: 480,
    });
    // KV usage is per engine: averaged, weighted by each engine's block count (3000 and 1000).
    expect(s.kvUsage).toBeCloseTo((0.5 * 3000 + 0.25 * 1000) / 4000);
  });

  it('prefers the current name when a server exports both', () => {
    const fams = parsePrometheus('vllm:kv_cache_usage_perc{engine="0"} 0.7\nvllm:gpu_cache_usage_perc{engine="0"} 0.1\n');
    expect(toMetricsSample(fams, 0).kvUsage).toBe(0.7);
  });

  it('leaves out what the scrape lacks, and can filter by model', () => {
    expect(toMetricsSample(parsePrometheus('other_metric 1\n'), 5)).toEqual({ tMs: 5 });
    const two = parsePrometheus('vllm:num_requests_running{model_name="a"} 1\nvllm:num_requests_running{model_name="b"} 2\n');
    expect(toMetricsSample(two, 0, { labels: { model_name: 'b' } }).running).toBe(2);
  });
});

describe('simulator lateness', () => {
  const lateness = (counts: number[]) =>
    parsePrometheus(
      [
        '# TYPE loadlab:sim_step_lateness_seconds histogram',
        ...['0.001', '0.002', '0.005', '+Inf'].map(
          (le, i) => `loadlab:sim_step_lateness_seconds_bucket{engine="0",le="${le}"} ${counts[i]}`,
        ),
        `loadlab:sim_step_lateness_seconds_count{engine="0"} ${counts[3]}`,
        'loadlab:sim_step_lateness_seconds_sum{engine="0"} 0.1',
      ].join('\n'),
    );

  it('is the p99 of the steps between two scrapes, in ms', () => {
    const a = lateness([100, 100, 100, 100]);
    const b = lateness([100, 100, 200, 200]); // the interval's 100 steps were all in (2, 5] ms
    expect(simLatenessMs(b, a)).toBeCloseTo(2 + 3 * 0.99);
    expect(toMetricsSample(b, 0, { previous: a }).simLatenessMs).toBeCloseTo(4.97);
    expect(simLatenessMs(a)).toBeCloseTo(0.99); // without a previous scrape: all steps so far
    expect(simLatenessMs(a, a)).toBeUndefined(); // no steps in the interval
    expect(simLatenessMs(scrape('vllm-metrics-v1.prom'))).toBeUndefined(); // a real vLLM
  });
});

describe('cache_config_info', () => {
  it('returns the labels and parses the fields LoadLab uses', () => {
    const labels = cacheConfigInfo(scrape('vllm-metrics-v1.prom'))!;
    expect(labels).toMatchObject({
      block_size: '16',
      num_gpu_blocks: '9362',
      gpu_memory_utilization: '0.9',
      enable_prefix_caching: 'True',
      cache_dtype: 'auto',
      engine: '0',
    });
    expect(summarizeCacheConfig(labels)).toEqual({
      numGpuBlocks: 9362,
      blockSize: 16,
      kvCapacityTokens: 149792,
      gpuMemoryUtilization: 0.9,
      enablePrefixCaching: true,
      cacheDtype: 'auto',
    });
    expect(cacheConfigInfo(scrape('vllm-metrics-old.prom'), '1')!.num_gpu_blocks).toBe('1000');
    expect(cacheConfigInfo(parsePrometheus('x 1\n'))).toBeUndefined();
    expect(summarizeCacheConfig({ num_gpu_blocks: 'None', block_size: '16' })).toEqual({ blockSize: 16 });
  });
});

describe('counter deltas and rates', () => {
  const s = (tMs: number, generationTokensTotal?: number): MetricsSample => ({ tMs, generationTokensTotal });
  // 0 → 250 → 500 ms: +100, +50; the server restarts before 750 (counter 30); then +20.
  const samples = [s(0, 1000), s(250, 1100), s(500, 1150), s(600), s(750, 30), s(1000, 50)];

  it('gives per-interval increases, skipping samples without the field and counting from 0 after a reset', () => {
    expect(counterDeltas(samples, 'generationTokensTotal')).toEqual([
      { startMs: 0, endMs: 250, delta: 100, reset: false },
      { startMs: 250, endMs: 500, delta: 50, reset: false },
      { startMs: 500, endMs: 750, delta: 30, reset: true },
      { startMs: 750, endMs: 1000, delta: 20, reset: false },
    ]);
    expect(counterIncrease(samples, 'generationTokensTotal')).toBe(200);
  });

  it('gives rates per second at interval midpoints', () => {
    expect(counterRates(samples, 'generationTokensTotal').map((r) => [r.tMs, r.perSec])).toEqual([
      [125, 400],
      [375, 200],
      [625, 120],
      [875, 80],
    ]);
    expect(counterRates([s(0, 1)], 'generationTokensTotal')).toEqual([]);
    expect(counterRates([s(0, 1), s(0, 5)], 'generationTokensTotal')).toEqual([]); // no time between them
  });

  it('prefixHitRates divides hit and query increases', () => {
    const p = (tMs: number, q: number, h: number): MetricsSample => ({ tMs, prefixQueriesTotal: q, prefixHitsTotal: h });
    const r = prefixHitRates([p(0, 0, 0), p(250, 1000, 250), p(500, 1000, 250)]);
    expect(r[0].hitRate).toBe(0.25);
    expect(r[1].hitRate).toBeNaN();
  });
});
