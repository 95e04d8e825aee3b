/** compareFlags / assertFlagsMatch: requested flags against what a server reports (pure). */
import { describe, expect, it } from 'vitest';
import { assertFlagsMatch, assertRestartedForHidden, compareFlags, serveLine, unverifiedNote } from '../src/vllm/flag-check';

const cacheConfig = {
  block_size: '16',
  enable_prefix_caching: 'True',
  gpu_memory_utilization: '0.92',
  num_gpu_blocks_override: 'None',
};

describe('compareFlags', () => {
  it('visible flags are verified or mismatched; scheduler flags are unverified', () => {
    const c = compareFlags(
      { gpuMemoryUtilization: 0.92, maxModelLen: 8192, maxNumSeqs: 32, enableChunkedPrefill: false },
      { cacheConfig, maxModelLen: 8192 },
    );
    expect(c.mismatches).toEqual([]);
    expect(c.verified).toEqual(
      expect.arrayContaining(['gpu_memory_utilization=0.92', 'max_model_len=8192', 'enable_prefix_caching=True']),
    );
    expect(c.unverified).toEqual(['--max-num-seqs 32', '--no-enable-chunked-prefill']);
    expect(unverifiedNote(c)).toMatch(/not verified: --max-num-seqs 32, --no-enable-chunked-prefill/);
  });

  it('an unrequested flag must be at its fixed vLLM default (prefix caching on, no block override)', () => {
    const c = compareFlags({}, { cacheConfig: { ...cacheConfig, enable_prefix_caching: 'False' } });
    expect(c.mismatches).toEqual([
      "the server runs with enable_prefix_caching=False, but this lesson expects vLLM's default True",
    ]);
    expect(compareFlags({}, {}).mismatches).toEqual([]);
  });

  it('a simulator-only flag cannot be measured on another server; on the simulator it is unverified', () => {
    expect(compareFlags({ preemptionMode: 'swap' }, { cacheConfig }).mismatches[0]).toMatch(
      /preemptionMode=swap exists only in LoadLab's simulator/,
    );
    expect(compareFlags({ preemptionMode: 'swap' }, { cacheConfig, simulated: true }).unverified).toEqual(['preemptionMode']);
  });

  it('assertFlagsMatch throws with the vllm serve line to restart with', () => {
    expect(() =>
      assertFlagsMatch({ gpuMemoryUtilization: 0.4, maxModelLen: 4096 }, { cacheConfig, maxModelLen: 8192 }, 'Qwen/Q'),
    ).toThrow(
      /gpu_memory_utilization=0.92, but this lesson asks for 0.4; the server runs with max_model_len=8192, but this lesson asks for 4096[\s\S]*\n {2}vllm serve Qwen\/Q --max-model-len 4096 --gpu-memory-utilization 0.4\n/,
    );
    expect(serveLine('', {})).toBe('vllm serve <model>');
  });

  it('assertRestartedForHidden: hidden flags changed on the same server process throws; a new start time passes', () => {
    expect(() => assertRestartedForHidden({}, { maxNumSeqs: 32 }, { startedAtS: 100 }, 100, 'm')).toThrow(
      /same server process[\s\S]*vllm serve m --max-num-seqs 32/,
    );
    expect(() => assertRestartedForHidden({}, { maxNumSeqs: 32 }, { startedAtS: 160 }, 100, 'm')).not.toThrow();
    expect(() => assertRestartedForHidden({}, { maxNumSeqs: 32 }, {}, undefined, 'm')).not.toThrow(); // start time unknown: notes only
    expect(() =>
      assertRestartedForHidden(
        { maxNumSeqs: 32 },
        { maxNumSeqs: 32, maxModelLen: 4096 },
        { startedAtS: 100, maxModelLen: 4096 },
        100,
        'm',
      ),
    ).not.toThrow();
  });
});
