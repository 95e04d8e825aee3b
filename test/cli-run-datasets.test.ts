import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../src/cli/run';
import { startSim, type SimHandle } from '../src/sim/start';
import { startScriptedServer } from './helpers/sse-server';
import { capture, readJson, lines } from './helpers/cli-io';

const SAMPLE = join(__dirname, '..', 'datasets', 'sample-sharegpt.json');

let tmp: string;
let sim: SimHandle;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-cli-datasets-'));
  sim = await startSim();
}, 60_000);
afterAll(async () => {
  await sim?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('loadlab run --dataset-name against the simulator', () => {
  it('sharegpt sample, 8 prompts, goodput and vLLM-style percentiles', { timeout: 60_000 }, async () => {
    const out = join(tmp, 'sharegpt');
    const { out: o, io } = capture();
    const code = await runCommand(
      [
        '--base-url',
        sim.baseUrl,
        '--dataset-name',
        'sharegpt',
        '--dataset-path',
        SAMPLE,
        '--num-prompts',
        '8',
        '--max-concurrency',
        '4',
        '--goodput',
        'ttft:600000',
        'e2el:600000',
        '--percentile-metrics',
        'ttft,tpot,e2el',
        '--metric-percentiles',
        '50,90',
        '--out',
        out,
        '--quiet',
      ],
      io,
    );
    expect(o.stderr).toBe('');
    expect(code).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    expect(s.completed).toBe(8);
    expect(s.goodput.slo).toEqual({ ttftMs: 600000, e2eMs: 600000 });
    expect(s.goodput.good).toBeLessThanOrEqual(s.completed);
    const m = readJson(join(out, 'manifest.json'));
    expect(m.target.simulated).toBe(true);
    expect(m.workload).toMatchObject({ dataset: 'sharegpt', path: SAMPLE, seed: 0, requests: 8, conversations: 21 });
    expect(m.workload.metricPercentiles).toEqual([50, 90]);
    // Every record's prompt was a first turn: the server counted its tokens.
    for (const r of lines(join(out, 'requests.jsonl'))) expect(r.promptTokens).toBeGreaterThan(4);
    expect(o.stdout).toMatch(/metric \(ms\)\s+n\s+mean\s+median\s+P50\s+P90/);
    expect(o.stdout).toMatch(/^E2EL\s+8\s/m);
    expect(o.stdout).not.toMatch(/^ITL/m);
    expect(o.stdout).toMatch(/goodput [\d.]+ req\/s \(\d of 8 met ttft:600000 e2el:600000\)/);
    expect(o.stdout).toContain('closed c=4, 8 requests, dataset sharegpt');
  });
});

describe('loadlab run datasets against a scripted server', () => {
  it('random: seeded lengths become max_tokens; an open loop with --seed', async () => {
    const s = await startScriptedServer({ firstTokenDelayMs: 2, gapMs: 1, tokens: 3 });
    try {
      const out = join(tmp, 'random');
      const args = ['--base-url', s.url, '--dataset-name', 'random', '--random-input-len', '40', '--random-output-len', '6'];
      const more = [
        '--random-range-ratio',
        '0.5',
        '--num-prompts',
        '6',
        '--request-rate',
        '500',
        '--seed',
        '9',
        '--out',
        out,
        '--quiet',
      ];
      const { out: o, io } = capture();
      expect(await runCommand([...args, ...more], io)).toBe(0);
      expect(o.stderr).toBe('');
      const bodies = (await s.stats()).recent.map((r) => r.body as { max_tokens: number; messages: Array<{ content: string }> });
      expect(bodies).toHaveLength(6);
      for (const b of bodies) {
        // uniform on [floor(6·0.5), ceil(6·1.5)] = [3, 9] (vLLM's --random-range-ratio)
        expect(b.max_tokens).toBeGreaterThanOrEqual(3);
        expect(b.max_tokens).toBeLessThanOrEqual(9);
      }
      expect(new Set(bodies.map((b) => b.messages[0].content)).size).toBe(6);
      const m = readJson(join(out, 'manifest.json'));
      expect(m.load).toMatchObject({ shape: 'open', options: { rate: 500, seed: 9 } });
      expect(m.workload).toMatchObject({ dataset: 'random', seed: 9, inputLen: 40, outputLen: 6, rangeRatio: 0.5 });
    } finally {
      await s.close();
    }
  });

  it('trace: each request is intended at its own timestamp', async () => {
    const s = await startScriptedServer({ firstTokenDelayMs: 2, gapMs: 1, tokens: 2 });
    try {
      const trace = join(tmp, 'trace.jsonl');
      writeFileSync(
        trace,
        '{"timestamp": 5000, "input_length": 30, "output_length": 2}\n{"timestamp": 5000, "input_length": 30, "output_length": 2}\n{"timestamp": 5250, "input_length": 12, "output_length": 2}\n',
      );
      const out = join(tmp, 'trace');
      const { out: o, io } = capture();
      const code = await runCommand(
        ['--base-url', s.url, '--dataset-name', 'trace', '--dataset-path', trace, '--out', out, '--quiet'],
        io,
      );
      expect(o.stderr).toBe('');
      expect(code).toBe(0);
      const starts = lines(join(out, 'requests.jsonl'))
        .map((r) => r.intendedStartMs as number)
        .sort((a, b) => a - b);
      expect(starts).toHaveLength(3);
      expect(starts[1] - starts[0]).toBeCloseTo(0, 6);
      expect(starts[2] - starts[0]).toBeCloseTo(250, 6);
      expect(readJson(join(out, 'manifest.json')).load.shape).toBe('timeline');
    } finally {
      await s.close();
    }
  });

  it('a malformed dataset file exits 2 naming the file and the line', async () => {
    const bad = join(tmp, 'bad.jsonl');
    writeFileSync(bad, '{"prompt": "a"}\n{"prompt": \n');
    const { out: o, io } = capture();
    const args = ['--base-url', 'http://127.0.0.1:9', '--dataset-name', 'custom', '--dataset-path', bad, '--num-prompts', '2'];
    expect(await runCommand([...args, '--out', join(tmp, 'never')], io)).toBe(2);
    expect(o.stderr).toContain(`loadlab run: ${bad} line 2: not valid JSON`);
  });
});
