import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepCommand } from '../src/cli/sweep';
import { isRunComplete } from '../src/run/folder';
import { startSim, type SimHandle } from '../src/sim/start';
import type { SweepFile } from '../src/sweep/sweep-file';
import { capture } from './helpers/cli-io';

const BIN = join(__dirname, '..', 'bin', 'loadlab.js');

const readSweep = (dir: string): SweepFile => JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8'));
const runIdOf = (dir: string): string => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).runId;

let tmp: string;
let sim: SimHandle;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-cli-sweep-'));
  // 4 sequences at most: beyond c=4 requests wait for a slot, so throughput stops growing (a knee).
  sim = await startSim({ flags: { maxNumSeqs: 4 } });
}, 60_000);
afterAll(async () => {
  await sim?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** Short outputs: one wave of 16 tokens takes the simulated 4090 about 0.1 s. */
const small = (maxTokens = 16) => [
  '--base-url',
  sim.baseUrl,
  '--num-prompts',
  '12',
  '--max-tokens',
  String(maxTokens),
  '--quiet',
];

describe('loadlab sweep on the simulator', () => {
  // retry: on a shared 2-core machine a busy neighbour can slow a point; a retry is a fresh sweep in a fresh folder.
  it('sweeps c=1,4,16: a folder per point, the knee, saturation and the capacity under an SLO', {
    retry: 2,
    timeout: 120_000,
  }, async () => {
    const out = mkdtempSync(join(tmp, 'conc-'));
    const { out: o, io } = capture();
    // TTFT 80 ms: met while every request has a slot (c ≤ 4); at c=16, 8 of 12 wait a whole wave.
    const argv = [...small(), '--max-concurrency', '1,4,16', '--goodput', 'ttft:80', '--out', out];
    expect(await sweepCommand(argv, io)).toBe(0);
    const f = readSweep(out);
    expect(f.status).toBe('complete');
    expect(f.provenance).toBe('simulated');
    expect(f.points.map((p) => p.name)).toEqual(['c=1', 'c=4', 'c=16']);
    for (const p of f.points) {
      expect(isRunComplete(join(out, p.name))).toBe(true);
      expect(p).toMatchObject({ status: 'complete', reused: false, simulated: true, completed: 12 });
      expect(p.verdict).toMatch(/^(ok|client-bound|sim-behind|client-bound\+sim-behind)$/);
    }
    expect(f.knee.value).toBeDefined();
    expect(f.knee.value).toBeLessThan(16);
    expect(f.saturation.value).toBeDefined();
    const cap = f.capacity[0];
    expect(cap.criterion).toBe('ttft:80');
    expect(cap.value).toBeDefined();
    expect(f.points.find((p) => p.value === cap.value)?.meetsSlo).toBe(true);
    expect(o.stdout).toMatch(/SIMULATED/);
    expect(o.stdout).toMatch(
      /^point\s+status\s+req\/s\s+out tok\/s\s+TTFT p50\s+TTFT p99\s+TPOT p50\s+goodput\s+meets SLO\s+verdict/m,
    );
    expect(o.stdout).toMatch(new RegExp(`knee: c=${f.knee.value} \\(`));
    expect(o.stdout).toMatch(/capacity under ttft:80 \(≥ 90 % of requests meet it\): c=\d+/);

    // The same command again reuses every point; other run flags are refused before any load, sweep.json kept.
    const again = capture();
    expect(await sweepCommand(argv, again.io)).toBe(0);
    expect(readSweep(out).points.every((p) => p.reused)).toBe(true);
    const changed = capture();
    const before = readFileSync(join(out, 'sweep.json'), 'utf8');
    const code = await sweepCommand(
      [...small().map((a) => (a === '12' ? '10' : a)), '--max-concurrency', '1,4,16', '--out', out],
      changed.io,
    );
    expect(code).toBe(2);
    expect(changed.out.stderr).toMatch(/c=1 holds a complete run .*other run flags.*Pass --replace/);
    expect(readFileSync(join(out, 'sweep.json'), 'utf8')).toBe(before);
  });

  it('searches the highest request rate meeting the SLO by bisection', { timeout: 120_000 }, async () => {
    const out = join(tmp, 'slo');
    const { out: o, io } = capture();
    const argv = [
      ...small(),
      '--slo-search',
      '10,200',
      '--slo-steps',
      '4',
      '--goodput',
      'ttft:80',
      '--api-key',
      'sk-sweep-secret',
      '--out',
      out,
    ];
    expect(await sweepCommand(argv, io)).toBe(0);
    const f = readSweep(out);
    expect(f.plan).toMatchObject({ mode: 'slo-search', bounds: [10, 200], steps: 4 });
    expect(f.points.length).toBeGreaterThanOrEqual(1);
    expect(f.points.length).toBeLessThanOrEqual(4);
    expect(f.points[0].name).toBe('rate=200'); // the upper bound first, as vLLM's solve_sla
    expect(f.searchEnd).toBeTruthy();
    const cap = f.capacity[0];
    if (cap.value !== undefined && cap.firstMiss !== undefined) expect(cap.value).toBeLessThan(cap.firstMiss);
    expect(cap.value ?? cap.note).toBeDefined();
    expect(o.stdout).toMatch(/SLO search stopped: /);
    expect(readFileSync(join(out, 'sweep.json'), 'utf8')).not.toMatch(/sk-sweep-secret/); // the key never reaches the disk
    expect(f.runFlags).toContain('***');
  });

  it('refuses wrong flags with exit 2, naming the fix', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--num-prompts', '4', '--out', join(tmp, 'x')], /give the points: --max-concurrency 1,4,16,64/],
      [['--max-concurrency', '1,4', '--request-rate', '1,2', '--num-prompts', '4', '--out', join(tmp, 'x')], /not both/],
      [['--max-concurrency', '1,x', '--num-prompts', '4', '--out', join(tmp, 'x')], /--max-concurrency takes a comma list/],
      [['--slo-search', '1,8', '--num-prompts', '4', '--out', join(tmp, 'x')], /--slo-search needs --goodput/],
      [
        ['--max-concurrency', '1,2', '--slo-steps', '3', '--num-prompts', '4', '--out', join(tmp, 'x')],
        /--slo-steps applies only with --slo-search/,
      ],
      [['--max-concurrency', '1,2', '--num-prompts', '4'], /--out DIR is required/],
      [['--max-concurrency', '1,2', '--out', join(tmp, 'x')], /--num-prompts N is required/],
      [
        ['--max-concurrency', '1,2', '--dataset-name', 'trace', '--out', join(tmp, 'x')],
        /a trace .* no load to sweep; measure it with loadlab run/,
      ],
      [['--max-concurrency', '1,2', '--num-prompts', '4', '--bogus', '--out', join(tmp, 'x')], /bogus/],
    ];
    for (const [args, msg] of cases) {
      const { out: o, io } = capture();
      expect(await sweepCommand(['--base-url', sim.baseUrl, ...args], io)).toBe(2);
      expect(o.stderr).toMatch(msg);
    }
    const foreign = join(tmp, 'foreign');
    mkdirSync(foreign);
    writeFileSync(join(foreign, 'notes.txt'), 'mine');
    const { out: o, io } = capture();
    expect(await sweepCommand([...small(), '--max-concurrency', '1,2', '--out', foreign], io)).toBe(2);
    expect(o.stderr).toMatch(/not empty and holds no sweep \(notes.txt\)/);
    expect(readdirSync(foreign)).toEqual(['notes.txt']);
  });
});

describe('loadlab sweep (child process): Ctrl-C and resume', () => {
  it('SIGINT after the first point saves sweep.json and exits 130; the same command resumes, reusing it', {
    timeout: 180_000,
  }, async () => {
    const out = join(tmp, 'interrupt');
    const argv = ['sweep', ...small(32), '--max-concurrency', '1,2,4', '--out', out];
    const child = spawn(process.execPath, [BIN, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const first = join(out, 'c=1');
    let sent = false;
    while (!sent && child.exitCode === null) {
      if (isRunComplete(first)) {
        child.kill('SIGINT');
        sent = true;
      } else await new Promise((r) => setTimeout(r, 20));
    }
    expect(sent).toBe(true);
    expect(await exited).toBe(130);
    const f = readSweep(out);
    expect(f.status).toBe('interrupted');
    expect(f.points[0]).toMatchObject({ name: 'c=1', status: 'complete', reused: false });
    expect(f.points.filter((p) => p.status === 'complete').length).toBeLessThan(3);
    expect(stderr).toMatch(/stopping/);
    const firstRun = runIdOf(first);

    const { out: o, io } = capture();
    expect(await sweepCommand(argv.slice(1), io)).toBe(0);
    const g = readSweep(out);
    expect(g.status).toBe('complete');
    expect(g.points.map((p) => [p.name, p.status])).toEqual([
      ['c=1', 'complete'],
      ['c=2', 'complete'],
      ['c=4', 'complete'],
    ]);
    expect(g.points[0].reused).toBe(true);
    expect(runIdOf(first)).toBe(firstRun);
    expect(o.stderr).toMatch(/point c=1 \(1\/3\): reusing the complete run/);
    // An interrupted point was measured again; its partial run was moved aside, not deleted.
    if (f.points.some((p) => p.name === 'c=2' && p.status === 'interrupted')) {
      expect(g.points[1].reused).toBe(false);
      expect(readdirSync(out).some((e) => e.startsWith('c=2.incomplete-'))).toBe(true);
    }
    expect(existsSync(join(out, 'c=4', 'summary.json'))).toBe(true);
  });
});
