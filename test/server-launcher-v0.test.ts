/**
 * `launchVllm` writes V0's `--swap-space` / `--preemption-mode` when a lesson asks for them (lesson 05
 * on a real vLLM V0), and the help check refuses them on a vLLM whose `serve --help=all` lacks them
 * (V1), naming the alternative. Uses the stand-in `test/fixtures/vllm-fake` on 127.0.0.1 port 0.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LaunchError, launchVllm } from '../src/vllm/launcher';

const FAKE = join(__dirname, 'fixtures', 'vllm-fake');
const dir = mkdtempSync(join(tmpdir(), 'loadlab-launch-v0-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SWAP = { numGpuBlocksOverride: 3391, preemptionMode: 'swap', swapSpace: 4, seed: 3 } as const;

describe('launchVllm and V0 flags', () => {
  it('passes --swap-space and --preemption-mode to vllm serve (simulator-only flags stay out)', async () => {
    const server = await launchVllm({
      model: 'fake',
      port: 0,
      bin: FAKE,
      flags: SWAP,
      checkFlags: false,
      env: { FAKE_VLLM_HEALTHY: '1' },
      startupTimeoutMs: 60_000,
      healthPollMs: 100,
    });
    try {
      const args = server.argv.slice(3);
      expect(args.join(' ')).toContain('--num-gpu-blocks-override 3391 --swap-space 4 --preemption-mode swap');
      expect(args).not.toContain('--seed');
    } finally {
      await server.stop();
    }
  });

  it('refuses them before spawning on a vLLM without them (V1), with the retired-flag advice', async () => {
    const calls = join(dir, 'calls.txt');
    writeFileSync(calls, '');
    let err: unknown;
    try {
      const s = await launchVllm({
        model: 'fake',
        port: 0,
        bin: FAKE,
        flags: SWAP,
        helpCacheDir: join(dir, 'cache'),
        env: { FAKE_VLLM_CALLS: calls, FAKE_VLLM_VERSION: '0.11.0' },
      });
      await s.stop();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LaunchError);
    expect((err as LaunchError).kind).toBe('bad_flag');
    expect((err as Error).message).toMatch(/--swap-space: V1 preempts by recompute only/);
    expect((err as Error).message).toMatch(/--preemption-mode: V1 always preempts by recompute/);
    expect(readFileSync(calls, 'utf8')).not.toMatch(/serve fake/);
  });
});
