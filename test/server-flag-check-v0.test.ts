/**
 * The flag check on a vLLM V0 server: prefix caching defaults to off there, and V0's
 * `--swap-space` / `--preemption-mode` are real flags (hidden from HTTP, so unverified), while on
 * V1 they remain a mismatch. Pure: no server.
 */
import { describe, expect, it } from 'vitest';
import { compareFlags, serveLine } from '../src/vllm/flag-check';
import { toServeArgs } from '../src/vllm/flags';

const v0Cache = { enable_prefix_caching: 'False', block_size: '16', num_gpu_blocks_override: 'None' };
const v1Cache = { enable_prefix_caching: 'True', block_size: '16', num_gpu_blocks_override: 'None' };
const SWAP = { preemptionMode: 'swap', swapSpace: 4 } as const;

describe('compareFlags on a V0 server', () => {
  it("expects V0's default prefix caching (off), and V1's (on) elsewhere", () => {
    expect(compareFlags({}, { cacheConfig: v0Cache, engine: 'V0' }).mismatches).toEqual([]);
    expect(compareFlags({}, { cacheConfig: v0Cache, engine: 'V1' }).mismatches[0]).toMatch(/enable_prefix_caching=False/);
    expect(compareFlags({ enablePrefixCaching: true }, { cacheConfig: v0Cache, engine: 'V0' }).mismatches[0]).toMatch(
      /this lesson asks for True/,
    );
  });

  it('takes --swap-space and --preemption-mode as real, unverified V0 flags', () => {
    const check = compareFlags(SWAP, { cacheConfig: v0Cache, engine: 'V0' });
    expect(check.mismatches).toEqual([]);
    expect(check.unverified.sort()).toEqual(['--preemption-mode swap', '--swap-space 4']);
  });

  it('refuses them on a V1 or unknown server, naming V1 recompute-only preemption', () => {
    for (const engine of ['V1', 'unknown', undefined] as const) {
      const m = compareFlags(SWAP, { cacheConfig: v1Cache, ...(engine ? { engine } : {}) }).mismatches;
      expect(m).toHaveLength(2);
      expect(m[0]).toMatch(/exists only in LoadLab's simulator and in vLLM V0/);
      expect(m[0]).toMatch(/vllm\/v1\/core\/sched\/scheduler\.py/);
    }
  });

  it('writes them into the vllm serve line only for V0', () => {
    const flags = { numGpuBlocksOverride: 3391, ...SWAP };
    expect(serveLine('m', flags, 'V0')).toBe('vllm serve m --num-gpu-blocks-override 3391 --swap-space 4 --preemption-mode swap');
    expect(serveLine('m', flags, 'V1')).toBe('vllm serve m --num-gpu-blocks-override 3391');
    expect(serveLine('m', flags)).toBe('vllm serve m --num-gpu-blocks-override 3391');
    expect(toServeArgs({ seed: 1, ...SWAP }, { target: 'vllm-v0' })).toEqual(['--swap-space', '4', '--preemption-mode', 'swap']);
  });
});
