import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../src/cli/run';
import { parseRunArgs, type RunArgs } from '../src/cli/run-args';
import { startSim, type SimHandle } from '../src/sim/start';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';
import { capture, readJson, lines } from './helpers/cli-io';

let tmp: string;
let server: ScriptedServer;
let sim: SimHandle | undefined;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-cli-flags-'));
  server = await startScriptedServer({ firstTokenDelayMs: 10, gapMs: 2, tokens: 4 });
});
afterAll(async () => {
  await server?.close();
  await sim?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('loadlab run request flags against a scripted server', () => {
  it('--header, --extra-body and the sampling flags reach every request; only header names are saved', async () => {
    const out = join(tmp, 'headers');
    const before = (await server.stats()).requests;
    const { out: o, io } = capture();
    // biome-ignore format: one flag and its value per pair
    const argv = [
      '--base-url', server.url, '--num-prompts', '3', '--max-concurrency', '1', '--max-tokens', '4',
      '--header', 'x-tenant=course', 'x-trace: a=b',
      '--header', 'Authorization=Bearer sekrit-123',
      '--extra-body', '{"top_k": 20, "chat_template_kwargs": {"enable_thinking": false}}',
      '--temperature', '0', '--top-p', '0.9', '--repetition-penalty', '1.05', '--presence-penalty', '-0.5',
      '--out', out, '--quiet',
    ];
    const code = await runCommand(argv, io);
    expect(o.stderr).toBe('');
    expect(code).toBe(0);
    const stats = await server.stats();
    const seen = stats.recent.slice(before - stats.requests); // the requests of this run
    expect(seen).toHaveLength(3);
    for (const r of seen) {
      expect(r.headers['x-tenant']).toBe('course');
      expect(r.headers['x-trace']).toBe('a=b');
      expect(r.authorization).toBe('Bearer sekrit-123');
      expect(r.requestId).toMatch(/^ll-/); // LoadLab's id is still the one sent
      expect(r.body).toMatchObject({
        top_k: 20,
        chat_template_kwargs: { enable_thinking: false },
        temperature: 0,
        top_p: 0.9,
        repetition_penalty: 1.05,
        presence_penalty: -0.5,
        stream: true,
        max_tokens: 4,
      });
    }
    const m = readJson(join(out, 'manifest.json'));
    expect(m.workload.headerNames).toEqual(['authorization', 'x-tenant', 'x-trace']);
    expect(m.workload.extraBody).toEqual({
      temperature: 0,
      top_p: 0.9,
      repetition_penalty: 1.05,
      presence_penalty: -0.5,
      top_k: 20,
      chat_template_kwargs: { enable_thinking: false },
    });
    for (const f of readdirSync(out)) expect(readFileSync(join(out, f), 'utf8')).not.toContain('sekrit');
  });

  it('--duration without --num-prompts: a closed loop stops issuing at the deadline and says so', async () => {
    const out = join(tmp, 'duration');
    const { out: o, io } = capture();
    const code = await runCommand(
      ['--base-url', server.url, '--max-concurrency', '2', '--duration', '0.3', '--out', out, '--quiet'],
      io,
    );
    expect(o.stderr).toBe('');
    expect(code).toBe(0);
    const rule = readJson(join(out, 'manifest.json')).load.options.stopRule;
    expect(rule).toMatchObject({
      rule: 'duration',
      durationMs: 300,
      inFlight: 'finish',
      maxRequests: 10_000,
      stoppedBy: 'duration',
    });
    const records = lines(join(out, 'requests.jsonl'));
    expect(records).toHaveLength(rule.issued);
    for (const r of records) expect(r.intendedStartMs).toBeLessThan(rule.deadlineMs);
    expect(o.stdout).toContain(`stop      --duration 0.3 s: issued ${rule.issued} of at most 10000 requests`);
  });

  it('the table always has queue time and TTFT from the intended send time; --ci adds 95% intervals', async () => {
    const { out: plain, io: io1 } = capture();
    expect(await runCommand(['--base-url', server.url, '--num-prompts', '6', '--out', join(tmp, 'plain'), '--quiet'], io1)).toBe(
      0,
    );
    expect(plain.stdout).toMatch(/^queue \(client\)\s+6\s/m);
    expect(plain.stdout).toMatch(/^TTFT from intended\s+6\s/m);
    expect(plain.stdout).not.toContain('bootstrap');

    const { out: ci, io: io2 } = capture();
    const argv = ['--base-url', server.url, '--num-prompts', '6', '--out', join(tmp, 'ci'), '--quiet', '--ci'];
    expect(await runCommand(argv, io2)).toBe(0);
    expect(ci.stdout).toContain('95% bootstrap intervals');
    expect(ci.stdout).toMatch(/^TTFT\s+6\s+[\d.]+\s+[\d.]+ \([\d.]+–[\d.]+\)/m);
    expect(ci.stdout).toMatch(/^TTFT from intended\s+6\s.*\([\d.]+–[\d.]+\)/m);
    expect(ci.stdout).toMatch(/^ITL\s+\d+\s.*\([\d.]+–[\d.]+\)/m); // requests resampled with all their gaps

    const { out: vllm, io: io3 } = capture();
    const argv3 = ['--base-url', server.url, '--num-prompts', '6', '--out', join(tmp, 'pct'), '--quiet', '--ci'];
    expect(await runCommand([...argv3, '--metric-percentiles', '50,90'], io3)).toBe(0);
    expect(vllm.stdout).toMatch(/^metric \(ms\)\s+n\s+mean\s+median\s+P50\s+P90/m);
    expect(vllm.stdout).toMatch(/^queue \(client\)\s+6\s.*\(/m);
    expect(vllm.stdout).toMatch(/^TTFT from intended\s+6\s.*\(/m);
  });

  it('bad values exit 2 and name the fix, before any request', async () => {
    const before = (await server.stats()).requests;
    const base = ['--base-url', server.url, '--out', join(tmp, 'bad'), '--num-prompts', '2'];
    const cases: Array<[string[], RegExp]> = [
      [['--header', 'x-tenant'], /--header 'x-tenant' is not KEY=VALUE.*--header x-tenant=course/],
      [['--header', 'x-request-id=1'], /--header x-request-id cannot be set/],
      [['--header', 'a=1', 'A=2'], /--header a is given twice/],
      [['--header'], /--header needs KEY=VALUE/],
      [['--header', 'authorization=Bearer x', '--api-key', 'y'], /give it once/],
      [['--extra-body', '[1]'], /--extra-body must be a JSON object/],
      [['--extra-body', '{top_k: 2}'], /--extra-body is not JSON/],
      [['--extra-body', '{"stream": false}'], /--extra-body cannot set "stream"/],
      [['--extra-body', '{"max_tokens": 9}'], /--extra-body cannot set "max_tokens"; use --max-tokens/],
      [['--extra-body', '{"top_p": 0.5}', '--top-p', '0.9'], /top_p is set by --top-p and in --extra-body; give it once/],
      [['--top-p', '0'], /--top-p must be in \(0, 1\]/],
      [['--top-k', '2.5'], /--top-k must be an integer ≥ -1/],
      [['--temperature', '-1'], /--temperature must be ≥ 0/],
      [['--presence-penalty', '3'], /--presence-penalty must be in \[-2, 2\]/],
      [['--frequency-penalty', '-2.5'], /--frequency-penalty must be in \[-2, 2\].*got '-2.5'/],
      [['--duration', '0'], /--duration must be seconds > 0/],
      [['--metrics-interval', '5'], /--metrics-interval must be ms ≥ 50/],
      [['--stamp', 'each'], /--stamp must be turn \(one stamp per event-loop turn, the default\) or callback .*got 'each'/],
    ];
    for (const [extra, re] of cases) {
      const { out: o, io } = capture();
      expect(await runCommand([...base, ...extra], io), extra.join(' ')).toBe(2);
      expect(o.stderr, extra.join(' ')).toMatch(re);
    }
    const { out: o, io } = capture();
    expect(await runCommand(['--base-url', server.url, '--out', join(tmp, 'bad'), '--duration', '5'], io)).toBe(2);
    expect(o.stderr).toMatch(/--duration needs --max-concurrency C \(a closed loop\) or a finite --request-rate R/);
    expect((await server.stats()).requests).toBe(before);
  });
});

describe('loadlab run --metrics-interval against the simulator', () => {
  it('writes metrics.jsonl and prints one line of what the simulated server reported, and one of the stamp lag', {
    timeout: 60_000,
  }, async () => {
    sim = await startSim();
    const out = join(tmp, 'metrics');
    const { out: o, io } = capture();
    const argv = ['--base-url', sim.baseUrl, '--num-prompts', '8', '--max-concurrency', '4', '--max-tokens', '16'];
    const code = await runCommand([...argv, '--metrics-interval', '100', '--stamp', 'callback', '--out', out, '--quiet'], io);
    expect(o.stderr).toBe('');
    expect(code).toBe(0);
    expect(readJson(join(out, 'manifest.json')).clock.chunkStamp).toBe('callback');
    const samples = lines(join(out, 'metrics.jsonl'));
    expect(samples.length).toBeGreaterThan(0);
    expect(o.stdout).toMatch(
      new RegExp(
        `^server    ${samples.length} /metrics samples \\(simulated server, warm-up included\\): peak running \\d+`,
        'm',
      ),
    );
    const peak = Math.max(...samples.map((s: { running?: number }) => s.running ?? 0));
    expect(o.stdout).toContain(`peak running ${peak}`);
    expect(peak).toBeLessThanOrEqual(4); // never more than the client's cap
    // Against the simulator: how late the chunks were stamped, from its send log, and where the load thread ran.
    expect(o.stdout).toMatch(
      /^client {4}chunks stamped p50 [\d.]+ \/ p99 [\d.]+ \/ max [\d.]+ ms after the simulator sent them \(\d+ chunks\); ITL p99 [\d.]+ ms measured, [\d.]+ ms as sent; (load threads on CPUs [\d,-]+, off the simulator's engine CPU \d+; (\d+ other threads of this process on SCHED_IDLE, kept to CPUs [\d,-]+|other threads .+)|not pinned \(.+\))$/m,
    );
  });
});

describe('--duration and --num-prompts (parse only, no server)', () => {
  const parse = (...extra: string[]) =>
    parseRunArgs(['--base-url', 'http://127.0.0.1:9', '--out', join(tmp, 'never'), ...extra]) as RunArgs;

  it('--num-prompts is an upper bound; left out it is rate×S (rounded up) or 10000 for a closed loop', () => {
    expect(parse('--request-rate', '4', '--duration', '2.5').numPrompts).toBe(10);
    expect(parse('--max-concurrency', '8', '--duration', '60').numPrompts).toBe(10_000);
    expect(parse('--max-concurrency', '8', '--duration', '60', '--num-prompts', '50')).toMatchObject({
      numPrompts: 50,
      durationS: 60,
    });
  });

  it('a dataset drawn up front needs --num-prompts with --duration; a trace does not', () => {
    expect(() => parse('--max-concurrency', '2', '--duration', '5', '--dataset-name', 'random')).toThrow(
      /--duration with --dataset-name needs --num-prompts N/,
    );
    expect(parse('--duration', '5', '--dataset-name', 'trace', '--dataset-path', 'x.jsonl').durationS).toBe(5);
  });
});
