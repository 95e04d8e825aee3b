/**
 * The `vllm serve` flags the simulator used to reject: parsed as vLLM's argparse does
 * (`vllm/engine/arg_utils.py`, `human_readable_int[_or_auto]`), validated with a message that names
 * the fix, and resolved with vLLM's semantics; plus the 0.19 default gpu_memory_utilization (0.9).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kvCacheTokens, resolveEngineConfig, V1_DEFAULTS } from '../src/sim/engine/config';
import { kvBlockBytes } from '../src/sim/engine/profile';
import { type SimHandle, startSim } from '../src/sim/start';
import { compareFlags } from '../src/vllm/flag-check';
import { parseServeArgs, toServeArgs } from '../src/vllm/flags';
import { makeHarness, submit } from './sim-engine-harness';

const GiB = 1024 ** 3;
const BLOCK = kvBlockBytes(); // 917,504 B for Qwen2.5-7B at block size 16

describe('parsing', () => {
  it('--scheduling-policy fcfs|priority', () => {
    expect(parseServeArgs(['--scheduling-policy', 'priority']).flags.schedulingPolicy).toBe('priority');
    expect(parseServeArgs(['--scheduling-policy=fcfs']).flags.schedulingPolicy).toBe('fcfs');
    expect(() => parseServeArgs(['--scheduling-policy', 'lifo'])).toThrow('--scheduling-policy must be one of fcfs, priority');
  });

  it('--scheduler-reserve-full-isl and --no-scheduler-reserve-full-isl', () => {
    expect(parseServeArgs(['--no-scheduler-reserve-full-isl']).flags.schedulerReserveFullIsl).toBe(false);
    expect(parseServeArgs(['--scheduler-reserve-full-isl']).flags.schedulerReserveFullIsl).toBe(true);
    expect(() => parseServeArgs(['--scheduler-reserve-full-isl=false'])).toThrow('--no-scheduler-reserve-full-isl');
  });

  it('--performance-mode balanced|interactivity|throughput', () => {
    expect(parseServeArgs(['--performance-mode', 'throughput']).flags.performanceMode).toBe('throughput');
    expect(() => parseServeArgs(['--performance-mode', 'fast'])).toThrow(
      '--performance-mode must be one of balanced, interactivity, throughput',
    );
  });

  it('--kv-cache-memory-bytes takes human_readable_int: 4G = 4·2^30, 4g = 4·10^9, no decimals with G', () => {
    expect(parseServeArgs(['--kv-cache-memory-bytes', '4G']).flags.kvCacheMemoryBytes).toBe(4 * GiB);
    expect(parseServeArgs(['--kv-cache-memory-bytes', '4g']).flags.kvCacheMemoryBytes).toBe(4e9);
    expect(parseServeArgs(['--kv-cache-memory-bytes', '2.5g']).flags.kvCacheMemoryBytes).toBe(2.5e9);
    expect(parseServeArgs(['--kv-cache-memory-bytes', '1073741824']).flags.kvCacheMemoryBytes).toBe(GiB);
    expect(() => parseServeArgs(['--kv-cache-memory-bytes', '1.5G'])).toThrow(/no decimals with K\/M\/G\/T/);
    expect(() => parseServeArgs(['--kv-cache-memory-bytes', '-1'])).toThrow(
      "--kv-cache-memory-bytes must be an integer ≥ 0, got '-1'",
    );
  });

  it('--max-model-len auto / -1 (human_readable_int_or_auto), and suffixes on --max-num-batched-tokens', () => {
    for (const v of ['auto', 'AUTO', '-1']) expect(parseServeArgs(['--max-model-len', v]).flags.maxModelLen).toBe(-1);
    expect(parseServeArgs(['--max-model-len', '25.6k']).flags.maxModelLen).toBe(25_600);
    expect(parseServeArgs(['--max-model-len', '16K']).flags.maxModelLen).toBe(16_384);
    expect(parseServeArgs(['--max-num-batched-tokens', '4k']).flags.maxNumBatchedTokens).toBe(4000);
    expect(() => parseServeArgs(['--max-model-len', '-2'])).toThrow("--max-model-len must be an integer ≥ 1, got '-2'");
  });

  it('all five are vLLM flags: toServeArgs writes them for a real vllm serve and reads them back', () => {
    const flags = {
      maxModelLen: -1,
      kvCacheMemoryBytes: 4 * GiB,
      schedulingPolicy: 'priority' as const,
      schedulerReserveFullIsl: false,
      performanceMode: 'throughput' as const,
    };
    const args = toServeArgs(flags, { target: 'vllm' });
    expect(args).toEqual(
      expect.arrayContaining(['--max-model-len', '-1', '--scheduling-policy', 'priority', '--no-scheduler-reserve-full-isl']),
    );
    expect(args).toEqual(
      expect.arrayContaining(['--performance-mode', 'throughput', '--kv-cache-memory-bytes', String(4 * GiB)]),
    );
    expect(parseServeArgs(args).flags).toEqual(flags);
  });

  it('flag check: max_model_len auto cannot be contradicted by the served length; the scheduler flags are unverified', () => {
    const check = compareFlags(
      { maxModelLen: -1, schedulingPolicy: 'priority', performanceMode: 'throughput' },
      { maxModelLen: 32768, cacheConfig: { enable_prefix_caching: 'True', num_gpu_blocks_override: 'None' } },
    );
    expect(check.mismatches).toEqual([]);
    expect(check.unverified).toEqual(
      expect.arrayContaining(['--max-model-len -1', '--scheduling-policy priority', '--performance-mode throughput']),
    );
  });
});

describe('resolution (effective engine config)', () => {
  it('gpu_memory_utilization defaults to 0.9 as in vLLM 0.19: 17,045 KV blocks on the 4090 profile', () => {
    expect(V1_DEFAULTS.gpuMemoryUtilization).toBe(0.9);
    const c = resolveEngineConfig({});
    expect(c.numGpuBlocks).toBe(17_045);
    expect(kvCacheTokens(c)).toBe(272_720);
    expect(resolveEngineConfig({ gpuMemoryUtilization: 0.92 }).numGpuBlocks).toBe(17_595);
    expect(c).toMatchObject({ schedulingPolicy: 'fcfs', reserveFullIsl: true });
  });

  it('scheduling policy and reserve-full-isl pass through', () => {
    expect(resolveEngineConfig({ schedulingPolicy: 'priority' }).schedulingPolicy).toBe('priority');
    expect(() => resolveEngineConfig({ schedulingPolicy: 'lifo' as never })).toThrow(
      '--scheduling-policy must be one of fcfs, priority',
    );
    expect(resolveEngineConfig({ schedulerReserveFullIsl: false }).reserveFullIsl).toBe(false);
  });

  it('performance-mode throughput doubles the defaults (4096 / 512 on a 4090), never a value the user gave', () => {
    const pick = (c: { maxNumBatchedTokens: number; maxNumSeqs: number }) => [c.maxNumBatchedTokens, c.maxNumSeqs];
    expect(pick(resolveEngineConfig({ performanceMode: 'throughput' }))).toEqual([4096, 512]);
    expect(pick(resolveEngineConfig({ performanceMode: 'balanced' }))).toEqual([2048, 256]);
    expect(pick(resolveEngineConfig({ performanceMode: 'interactivity' }))).toEqual([2048, 256]);
    expect(pick(resolveEngineConfig({ performanceMode: 'throughput', maxNumSeqs: 100 }))).toEqual([4096, 100]);
    expect(pick(resolveEngineConfig({ performanceMode: 'throughput', maxNumBatchedTokens: 1024 }))).toEqual([1024, 512]);
    // Doubling happens before the clamps: chunked prefill off still takes max(max_model_len, 4096).
    expect(resolveEngineConfig({ performanceMode: 'throughput', enableChunkedPrefill: false }).maxNumBatchedTokens).toBe(32768);
    expect(resolveEngineConfig({ performanceMode: 'throughput', maxModelLen: 8 }).maxNumBatchedTokens).toBe(4096);
    expect(() => resolveEngineConfig({ performanceMode: 'fast' as never })).toThrow(/--performance-mode must be one of/);
  });

  it('kv-cache-memory-bytes sizes the KV cache directly and ignores gpu_memory_utilization', () => {
    expect(resolveEngineConfig({ kvCacheMemoryBytes: 4 * GiB }).numGpuBlocks).toBe(Math.floor((4 * GiB) / BLOCK));
    // 0.3 alone leaves too little for one 32768-token sequence; with explicit KV bytes it is not used.
    expect(() => resolveEngineConfig({ gpuMemoryUtilization: 0.3 })).toThrow(/--gpu-memory-utilization/);
    expect(resolveEngineConfig({ gpuMemoryUtilization: 0.3, kvCacheMemoryBytes: 4 * GiB }).numGpuBlocks).toBe(4681);
    expect(resolveEngineConfig({ kvCacheMemoryBytes: 0 }).numGpuBlocks).toBe(17_045); // 0 is falsy in vLLM: profiled
    expect(resolveEngineConfig({ kvCacheMemoryBytes: GiB, numGpuBlocksOverride: 64 }).numGpuBlocks).toBe(64);
  });

  it('kv-cache-memory-bytes: bad sizes throw, naming the fix', () => {
    expect(() => resolveEngineConfig({ kvCacheMemoryBytes: 30 * GiB })).toThrow(
      /does not fit beside the weights.*lower it to ≤ \d+/,
    );
    expect(() => resolveEngineConfig({ kvCacheMemoryBytes: 1000 })).toThrow(/holds no KV block of 917504 bytes; raise it/);
    expect(() => resolveEngineConfig({ kvCacheMemoryBytes: GiB })).toThrow(
      /32768 needs 2048 KV blocks but only 1170 fit at --kv-cache-memory-bytes 1073741824.*raise --kv-cache-memory-bytes.*--max-model-len auto/,
    );
    expect(() => resolveEngineConfig({ kvCacheMemoryBytes: 1.5 })).toThrow('--kv-cache-memory-bytes must be an integer ≥ 0');
  });

  it('max-model-len auto: the largest length whose blocks fit in the KV memory, at most the model’s 32768', () => {
    expect(resolveEngineConfig({ maxModelLen: -1 }).maxModelLen).toBe(32768);
    const c = resolveEngineConfig({ maxModelLen: -1, kvCacheMemoryBytes: GiB });
    expect(c.maxModelLen).toBe(1170 * 16);
    expect(c.numGpuBlocks).toBe(1170);
    // vLLM sets the batch limits from the model's 32768 before it fits max_model_len at KV-cache init.
    expect(resolveEngineConfig({ maxModelLen: -1, kvCacheMemoryBytes: BLOCK, maxNumSeqs: 2 }).maxNumBatchedTokens).toBe(2048);
    expect(resolveEngineConfig({ maxModelLen: 16, maxNumSeqs: 2 }).maxNumBatchedTokens).toBe(32);
    expect(
      resolveEngineConfig({ maxModelLen: -1, kvCacheMemoryBytes: GiB, enableChunkedPrefill: false }).maxNumBatchedTokens,
    ).toBe(32768);
    expect(() => resolveEngineConfig({ maxModelLen: -1, gpuMemoryUtilization: 0.25 })).toThrow(/no memory left for the KV cache/);
    expect(() => resolveEngineConfig({ maxModelLen: -1, gpuMemoryUtilization: 0.25, numGpuBlocksOverride: 64 })).toThrow(
      /cannot fit --max-model-len auto/,
    );
  });
});

describe('--no-scheduler-reserve-full-isl (engine on a virtual clock)', () => {
  /**
   * 8 requests of 400 prompt + 100 output tokens at once into 64 KV blocks (25 blocks per prompt),
   * prefilled in 256-token chunks; returns preemptions, the most running at once and the finishes.
   */
  function burst(reserve: boolean) {
    const h = makeHarness({
      maxModelLen: 2048,
      numGpuBlocksOverride: 64,
      maxNumBatchedTokens: 256,
      schedulerReserveFullIsl: reserve,
    });
    for (let i = 0; i < 8; i++) {
      const prompt = Array.from({ length: 400 }, (_, k) => 10_000 * (i + 1) + k);
      submit(h, 0, prompt, { maxTokens: 100 });
    }
    h.clock.advance(120_000);
    h.engine.close();
    return {
      preemptions: h.engine.stats().numPreemptions,
      maxRunning: Math.max(...h.steps.map((s) => s.running)),
      finished: h.recs.filter((r) => r.finish === 'length').length,
    };
  }

  it('admits on the first chunk alone, so more requests run at once and more are preempted than with the default', () => {
    const withReserve = burst(true);
    const without = burst(false);
    expect(withReserve.finished).toBe(8);
    expect(without.finished).toBe(8);
    expect(without.maxRunning).toBeGreaterThan(withReserve.maxRunning);
    expect(without.preemptions).toBeGreaterThan(withReserve.preemptions);
  });
});

describe('the simulator process with the new flags (real HTTP)', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim({
      extraArgs: [
        '--stats-interval-s',
        '0',
        '--max-model-len',
        'auto',
        '--kv-cache-memory-bytes',
        '1G',
        '--performance-mode',
        'throughput',
        '--no-scheduler-reserve-full-isl',
        '--scheduling-policy',
        'priority',
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await sim?.stop();
  });

  it('serves max_model_len fitted to 1 GiB of KV (18,720 tokens) and reports 1,170 blocks', async () => {
    const models = (await (await fetch(`${sim.baseUrl}/v1/models`)).json()) as { data: { max_model_len: number }[] };
    expect(models.data[0].max_model_len).toBe(18_720);
    const metrics = await (await fetch(`${sim.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/vllm:cache_config_info\{[^}]*gpu_memory_utilization="0.9"[^}]*num_gpu_blocks="1170"/);
    const res = await fetch(`${sim.baseUrl}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: sim.model, prompt: 'Hi', max_tokens: 2, priority: 3 }),
    });
    expect(res.status).toBe(200);
  });
});
