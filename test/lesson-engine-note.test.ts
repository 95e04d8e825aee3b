/**
 * `engineNote` / `swapPlan` (src/lesson/engine-note.ts): every topic × V0 / V1 / unknown / simulated.
 * Pure facts first; then real targets over real HTTP on 127.0.0.1 port 0: a V0 vLLM stand-in serving
 * the 0.6 `/metrics` fixture (opened as an external target, as LOADLAB_BASE_URL does) and the simulator
 * started with `--vllm-version 0.6` and with its default generation.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineNote, swapPlan, type EngineNoteTarget, type EngineTopic } from '../src/lesson/helpers';
import { openTarget } from '../src/lesson/open-target';
import { recordEffectiveConfig } from '../src/observe/effective-config';
import { startSim } from '../src/sim/start';

const TOPICS: EngineTopic[] = ['chunked-prefill', 'preemption', 'prefix-caching'];
const MODEL = 'Qwen2.5-7B-Instruct-GPTQ-Int4';

function facts(
  engine: 'V0' | 'V1' | 'unknown',
  version: string,
  evidence: string,
  extra: Partial<EngineNoteTarget> = {},
): EngineNoteTarget {
  return {
    simulated: false,
    flags: {},
    config: { engine, engineEvidence: evidence, version, models: [{ id: MODEL, maxModelLen: 32768 }] },
    ...extra,
  };
}
const V0 = facts('V0', '0.6.6', 'V0-only metrics present');
const V1 = facts('V1', '0.19.0', 'metrics carry an engine label');
const UNKNOWN = facts('unknown', '0.9.2', 'no telling metrics');
const SIM: EngineNoteTarget = { ...facts('V1', '0.19.0', 'simulated'), simulated: true };

/** Every sentence after the opening one cites a vLLM source file (or, for LoadLab's own check, a src/ file). */
function expectCited(sentences: string[]): void {
  for (const s of sentences.slice(1)) expect(s, s).toMatch(/vllm\/[\w/]+\.py|src\/[\w/.-]+\.ts/);
}

describe('engineNote: each topic × V0 / V1 / unknown / simulated', () => {
  it('V1: chunked prefill on by default, recompute only, prefix caching on by default', () => {
    const n = (t: EngineTopic) => engineNote(V1, t);
    for (const t of TOPICS) {
      expect(n(t)).toMatchObject({ topic: t, rules: 'V1', simulated: false });
      expect(n(t).sentences[0]).toMatch(/vLLM 0\.19\.0，引擎 \*\*V1\*\*/);
      expectCited(n(t).sentences);
    }
    expect(n('chunked-prefill').sentences.join('')).toMatch(/V1 默认\*\*开启\*\*分块预填充/);
    expect(n('preemption').sentences.join('')).toMatch(/只有重算.*_preempt_request/);
    expect(n('preemption').sentences.join('')).toMatch(/--swap-space.*vllm\/engine\/arg_utils\.py/);
    expect(n('prefix-caching').sentences.join('')).toMatch(/V1 默认\*\*开启\*\*自动前缀缓存/);
  });

  it('V0 (0.6): chunked prefill off below 32K context, recompute for n=1 unless swap, prefix caching off', () => {
    const n = (t: EngineTopic, x: EngineNoteTarget = V0) => engineNote(x, t);
    for (const t of TOPICS) {
      expect(n(t).rules).toBe('V0');
      expect(n(t).sentences[0]).toMatch(/引擎 \*\*V0\*\*.*vllm:num_requests_swapped/);
      expectCited(n(t).sentences);
    }
    const chunked = n('chunked-prefill').sentences.join('');
    expect(chunked).toMatch(/max_model_len > 32768/);
    expect(chunked).toMatch(/`max_model_len` = 32768，不超过 32768，所以默认\*\*关闭\*\*/);
    expect(chunked).toMatch(/_schedule_default.*不排解码/);
    const long = { ...V0, config: { ...V0.config, models: [{ id: MODEL, maxModelLen: 65536 }] } };
    expect(n('chunked-prefill', long).sentences.join('')).toMatch(/超过 32768，默认会打开/);
    expect(n('chunked-prefill', { ...V0, flags: { enableChunkedPrefill: true } }).sentences.join('')).toMatch(/要求打开分块/);
    const pre = n('preemption').sentences.join('');
    expect(pre).toMatch(/`n=1`.*\*\*重算\*\*.*--preemption-mode swap/);
    expect(pre).toMatch(/默认 4 GiB/);
    expect(pre).toMatch(/vllm:num_requests_swapped/);
    expect(n('preemption', { ...V0, flags: { preemptionMode: 'swap', swapSpace: 4 } }).sentences.join('')).toMatch(
      /要求 `--preemption-mode swap` `--swap-space 4`/,
    );
    expect(n('prefix-caching').sentences.join('')).toMatch(/默认\*\*关闭\*\*前缀缓存.*EngineArgs.*__post_init__/);
  });

  it('unknown: says why it could not be decided, then both engines, each marked', () => {
    for (const t of TOPICS) {
      const note = engineNote(UNKNOWN, t);
      expect(note.rules).toBe('unknown');
      expect(note.sentences[0]).toMatch(/无法判断.*V0 还是 V1.*0\.9\.2.*VLLM_USE_V1=0/);
      expect(note.sentences.some((s) => s.startsWith('若是 V1：'))).toBe(true);
      expect(note.sentences.some((s) => s.startsWith('若是 V0：'))).toBe(true);
      expectCited(note.sentences);
    }
    const other = facts('unknown', '', 'not a vLLM server');
    expect(engineNote(other, 'preemption').sentences[0]).toMatch(/不像 vLLM/);
  });

  it('simulated: V1 rules whatever version it emulates, and its swap mode labelled as simulated', () => {
    for (const t of TOPICS) {
      const note = engineNote(SIM, t);
      expect(note).toMatchObject({ rules: 'V1', simulated: true });
      expect(note.sentences[0]).toMatch(/\*\*模拟\*\*服务器.*0\.19\.0（V1）.*始终按 V1 的规则.*src\/sim\/http\/generation\.ts/);
      expectCited(note.sentences);
    }
    const emulating06 = { ...SIM, config: { ...SIM.config, version: '0.6.6' } };
    expect(engineNote(emulating06, 'chunked-prefill').sentences[0]).toMatch(/vLLM 0\.6\.6（V0）.*始终按 V1 的规则/);
    expect(engineNote(emulating06, 'chunked-prefill').rules).toBe('V1');
    expect(engineNote(SIM, 'preemption').sentences.join('')).toMatch(
      /swap 模式.*模拟.*_swap_out.*loadlab:sim_swap_out_blocks_total/,
    );
    expect(engineNote(V1, 'preemption').sentences.join('')).not.toMatch(/loadlab:/);
  });

  it('the prefix-caching note repeats what vllm:cache_config_info shows', () => {
    const shown = { ...V0, config: { ...V0.config, cacheConfig: { enable_prefix_caching: 'False' } } };
    expect(engineNote(shown, 'prefix-caching').sentences.at(-1)).toBe(
      '这个服务器的 `vllm:cache_config_info` 显示 `enable_prefix_caching=False`。',
    );
  });

  it('refuses an unknown topic, naming the topics', () => {
    expect(() => engineNote(V1, 'swap' as EngineTopic)).toThrow(
      /topic must be one of chunked-prefill, preemption, prefix-caching, got "swap"/,
    );
  });
});

describe('swapPlan', () => {
  it('simulator: its swap mode; V0: for real with --swap-space 4 --preemption-mode swap; V1 and unknown: skipped with the reason', () => {
    expect(swapPlan(SIM)).toMatchObject({ measurable: true, how: 'simulated' });
    expect(swapPlan(V0)).toMatchObject({ measurable: true, how: 'V0' });
    expect(swapPlan(V0).reason).toMatch(/--swap-space 4 --preemption-mode swap.*vllm\/core\/scheduler\.py/);
    expect(swapPlan(V1)).toMatchObject({ measurable: false });
    expect(swapPlan(V1).reason).toMatch(/跳过 swap.*_preempt_request.*vllm\/engine\/arg_utils\.py/);
    expect(swapPlan(UNKNOWN).reason).toMatch(/跳过 swap：无法判断/);
    expect(swapPlan(UNKNOWN).how).toBeUndefined();
  });
});

// A V0 vLLM's /metrics, written from `Metrics` in vllm/engine/metrics.py (see fixtures/vllm-wire/v0.6/README.md).
const FIXTURE = readFileSync(join(__dirname, 'fixtures', 'vllm-wire', 'v0.6', 'metrics.txt'), 'utf8');

describe('a real V0 target over HTTP (external, as LOADLAB_BASE_URL)', () => {
  let server: Server;
  let baseUrl = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/metrics') return res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(FIXTURE);
      if (req.url === '/version') return json({ version: '0.6.6' });
      if (req.url === '/v1/models')
        return json({
          object: 'list',
          data: [{ id: MODEL, object: 'model', owned_by: 'vllm', root: MODEL, max_model_len: 4096 }],
        });
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('is V0, its notes follow V0, swap is measurable, and restarting for swap asks for the vllm serve line with V0 flags', async () => {
    const target = await openTarget({ env: { LOADLAB_BASE_URL: baseUrl } });
    expect(target.config.engine).toBe('V0');
    // V0's default prefix caching (off) is what vLLM V0 shows: no mismatch note.
    expect(target.notes).toEqual([]);
    expect(engineNote(target, 'chunked-prefill').sentences.join('')).toMatch(/`max_model_len` = 4096，不超过 32768/);
    expect(engineNote(target, 'prefix-caching').sentences.at(-1)).toMatch(/enable_prefix_caching=False/);
    expect(swapPlan(target).how).toBe('V0');
    const swap = { numGpuBlocksOverride: 3391, preemptionMode: 'swap', swapSpace: 4 } as const;
    // num_gpu_blocks_override is visible and differs: refused with the full V0 line.
    await expect(target.restart(swap)).rejects.toThrow(
      `vllm serve ${MODEL} --num-gpu-blocks-override 3391 --swap-space 4 --preemption-mode swap`,
    );
  });
});

describe('the simulator as a target (real process, real HTTP)', () => {
  for (const [label, extraArgs, wire] of [
    ['--vllm-version 0.6', ['--vllm-version', '0.6'], '0.6.6（V0）'],
    ['default generation', [], '（V1）'],
  ] as const) {
    it(`${label}: simulated, V1 rules, the emulated version named`, async () => {
      const sim = await startSim({ extraArgs: [...extraArgs] });
      try {
        const config = await recordEffectiveConfig(sim.baseUrl);
        const target = { simulated: config.simulated, flags: {}, config };
        expect(target.simulated).toBe(true);
        for (const t of TOPICS) {
          const note = engineNote(target, t);
          expect(note.rules).toBe('V1');
          expect(note.sentences[0]).toContain(wire);
          expect(note.sentences[0]).toMatch(/始终按 V1 的规则/);
        }
        expect(swapPlan(target).how).toBe('simulated');
      } finally {
        await sim.stop();
      }
    });
  }
});
