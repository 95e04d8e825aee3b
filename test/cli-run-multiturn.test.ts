import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../src/cli/run';
import { startSim, type SimHandle } from '../src/sim/start';
import { capture, readJson, lines } from './helpers/cli-io';

const SAMPLE = join(__dirname, '..', 'datasets', 'sample-sharegpt.json');

let tmp: string;
let sim: SimHandle;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-cli-multiturn-'));
  sim = await startSim();
}, 60_000);
afterAll(async () => {
  await sim?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('loadlab run --multi-turn against the simulator', () => {
  it('replays sample ShareGPT conversations turn by turn and prints TTFT by turn', { timeout: 90_000 }, async () => {
    const out = join(tmp, 'mt');
    const { out: o, io } = capture();
    const argv = ['--base-url', sim.baseUrl, '--dataset-name', 'sharegpt', '--dataset-path', SAMPLE, '--multi-turn'];
    const code = await runCommand(
      [...argv, '--num-prompts', '21', '--max-concurrency', '3', '--think-time-ms', '10', '--out', out, '--quiet'],
      io,
    );
    expect(o.stderr).toBe('');
    expect(code).toBe(0);
    const manifest = readJson(join(out, 'manifest.json'));
    const records = lines(join(out, 'requests.jsonl'));
    // The sample's 21 conversations: 16 of 2 messages, 4 of 4, 1 of 6 → 21 first turns, 5 second, 1 third.
    expect(manifest.workload).toMatchObject({
      dataset: 'sharegpt',
      multiTurn: true,
      conversations: 21,
      turns: 27,
      thinkTimeMs: 10,
    });
    expect(manifest.target.simulated).toBe(true);
    expect(manifest.load).toMatchObject({ shape: 'sessions', options: { maxConcurrency: 3, thinkTimeMs: 10 } });
    expect(records).toHaveLength(27);
    expect(
      records.every((r: { session?: string; turn?: number }) => typeof r.session === 'string' && Number.isInteger(r.turn)),
    ).toBe(true);
    expect(manifest.client.peakInFlight).toBeLessThanOrEqual(3);
    const summary = readJson(join(out, 'summary.json'));
    expect(summary.byTurn.map((t: { turn: number; requests: number }) => [t.turn, t.requests])).toEqual([
      [0, 21],
      [1, 5],
      [2, 1],
    ]);
    // A later turn carries the earlier answer: its prompt (server usage) is longer than its first turn's.
    const convo = records.filter(
      (r: { session: string }) => r.session === records.find((x: { turn: number }) => x.turn === 2).session,
    );
    const prompts = convo
      .sort((a: { turn: number }, b: { turn: number }) => a.turn - b.turn)
      .map((r: { promptTokens: number }) => r.promptTokens);
    expect(prompts[1]).toBeGreaterThan(prompts[0]);
    expect(prompts[2]).toBeGreaterThan(prompts[1]);
    expect(o.stdout).toContain('sessions 21 conversations, max 3 live, think 10 ms');
    expect(o.stdout).toMatch(/TTFT by turn \(ms\)\nturn\s+sent\s+failed\s+TTFT n\s+p50\s+p95\s+p99\n0\s+21\s+0\s+21\s/);
  });

  it('refuses a flag --multi-turn replaces, before any request', async () => {
    const { out: o, io } = capture();
    const code = await runCommand(
      [
        '--base-url',
        sim.baseUrl,
        '--dataset-name',
        'sharegpt',
        '--dataset-path',
        SAMPLE,
        '--multi-turn',
        '--num-prompts',
        '2',
        '--request-rate',
        '4',
        '--out',
        join(tmp, 'never'),
      ],
      io,
    );
    expect(code).toBe(2);
    expect(o.stderr).toContain('--request-rate does not apply with --multi-turn');
  });
});
