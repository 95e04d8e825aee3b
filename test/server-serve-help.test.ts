/**
 * The learner's vLLM version: `launchVllm` checks every flag against the installed
 * `vllm serve --help=all` (the stand-in `test/fixtures/vllm-fake` answers `--version` and help
 * shaped like vLLM's), and every run manifest records the server's version and engine.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeTarget } from '../src/observe/probe';
import { detectEngine } from '../src/observe/engine';
import { parsePrometheus } from '../src/observe/prometheus';
import { runLoad } from '../src/runner/runner';
import { burst } from '../src/schedule/shapes';
import { startSim, type SimHandle } from '../src/sim/start';
import { LaunchError, launchVllm, type LaunchVllmOptions } from '../src/vllm/launcher';
import { clearServeHelpMemory, readServeHelp } from '../src/vllm/serve-help';
import { normalizeFlag, parseServeHelp, unknownFlags } from '../src/vllm/serve-help-check';
import { makeRequest } from '../src/workload/workload';

const fixture = (name: string) => join(__dirname, 'fixtures', name);
const FAKE = fixture('vllm-fake');
const dir = mkdtempSync(join(tmpdir(), 'loadlab-serve-help-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A fresh cache folder and call log for one test. */
function fresh() {
  n++;
  const calls = join(dir, `calls-${n}.txt`);
  writeFileSync(calls, '');
  return { cacheDir: join(dir, `cache-${n}`), calls, read: () => readFileSync(calls, 'utf8').split('\n').filter(Boolean) };
}

async function launchFails(opts: LaunchVllmOptions): Promise<LaunchError> {
  try {
    const server = await launchVllm(opts);
    await server.stop();
  } catch (err) {
    if (err instanceof LaunchError) return err;
    throw err;
  }
  throw new Error('expected the launch to fail');
}

describe('parsing vllm serve --help=all', () => {
  const text = readFileSync(fixture('fake-vllm-help.txt'), 'utf8');
  const flags = parseServeHelp(text);

  it('takes every option string of every group, and nothing from the usage, positionals or the JSON tip', () => {
    for (const f of [
      '--port',
      '--host',
      '--max-num-seqs',
      '--enable-prefix-caching',
      '--no-enable-prefix-caching',
      '-asc',
      '-q',
      '-h',
    ])
      expect(flags).toContain(f);
    expect(flags).toContain('--compilation-config');
    for (const f of ['--json-arg', '--json-arg.key1', 'model_tag', '--help=all', '--swap-space']) expect(flags).not.toContain(f);
  });

  it('lists no flags for help that only names the config groups', () => {
    expect(parseServeHelp('Config Groups:\n  positional arguments\n  ModelConfig    Configuration for the model.\n').size).toBe(
      0,
    );
  });

  it('accepts what vLLM accepts (_ for -, --x=v, --x.key, unique prefixes) and names the alternative of a retired flag', () => {
    expect(normalizeFlag('--max_num_seqs=8')).toBe('--max-num-seqs');
    const ok = ['--max_num_seqs=8', '--max-num-seq', '--compilation-config.level', '3', '--no-enable-prefix-caching', '-tp', '1'];
    expect(unknownFlags(ok, flags)).toEqual([]);
    const bad = unknownFlags(['--swap-space', '4', '--max-num', '--bogus'], flags);
    expect(bad.map((u) => u.flag)).toEqual(['--swap-space', '--max-num', '--bogus']); // --max-num is ambiguous
    expect(bad[0].retired?.advice).toMatch(/recompute/);
    expect(bad[0].retired?.source).toMatch(/vllm\/v1\/core\/sched\/scheduler\.py/);
    expect(bad[2].retired).toBeUndefined();
  });
});

describe('launchVllm checks flags against the installed vllm before spawning', () => {
  it('refuses a flag the help does not list, naming the alternative; the server is never started', async () => {
    const t = fresh();
    const err = await launchFails({
      model: 'fake',
      port: 0,
      bin: FAKE,
      extraArgs: ['--swap-space', '4', '--num-scheduler-steps', '8'],
      helpCacheDir: t.cacheDir,
      env: { FAKE_VLLM_CALLS: t.calls, FAKE_VLLM_VERSION: '0.11.0' },
    });
    expect(err.kind).toBe('bad_flag');
    expect(err.pid).toBeUndefined();
    expect(err.message).toMatch(/vLLM 0\.11\.0 does not have these flags/);
    expect(err.message).toMatch(/--swap-space: V1 preempts by recompute only.*remove it/);
    expect(err.message).toMatch(/--num-scheduler-steps: multi-step scheduling/);
    expect(t.read()).toEqual(['--version', 'serve --help=all']); // no `serve fake …`
  });

  it('accepts listed flags and caches the parsed help per version (memory, then file)', async () => {
    const t = fresh();
    const opts: LaunchVllmOptions = {
      model: 'fake',
      port: 0,
      bin: FAKE,
      flags: { maxNumSeqs: 8, enablePrefixCaching: false, maxModelLen: 4096 },
      helpCacheDir: t.cacheDir,
      healthPollMs: 50,
      env: { FAKE_VLLM_CALLS: t.calls, FAKE_VLLM_VERSION: '0.11.0', FAKE_VLLM_HEALTHY: '1' },
    };
    const first = await launchVllm(opts);
    await first.stop();
    expect(first.version).toBe('0.11.0');
    expect(first.notes).toEqual([]);
    const second = await launchVllm(opts);
    await second.stop();
    const calls = t.read();
    expect(calls.filter((c) => c.startsWith('serve --help'))).toHaveLength(1); // read once
    expect(calls.filter((c) => c === '--version')).toHaveLength(2);
    expect(calls.filter((c) => c.startsWith('serve fake'))).toHaveLength(2);
    expect(readdirSync(t.cacheDir).filter((f) => f.startsWith('vllm-0.11.0-'))).toHaveLength(1);

    clearServeHelpMemory();
    const env = { FAKE_VLLM_CALLS: t.calls, FAKE_VLLM_VERSION: '0.11.0' };
    expect((await readServeHelp(FAKE, { cacheDir: t.cacheDir, env })).source).toBe('file');
    const other = await readServeHelp(FAKE, { cacheDir: t.cacheDir, env: { ...env, FAKE_VLLM_VERSION: '0.10.1.1' } });
    expect(other).toMatchObject({ version: '0.10.1.1', source: 'help' }); // another version: read again
    expect(t.read().filter((c) => c.startsWith('serve --help'))).toHaveLength(2);
  });

  it('falls back to plain --help on a vLLM that does not know --help=all', async () => {
    const t = fresh();
    const h = await readServeHelp(FAKE, { cacheDir: t.cacheDir, env: { FAKE_VLLM_CALLS: t.calls, FAKE_VLLM_HELP: 'old' } });
    expect(h.flags).toContain('--max-num-seqs');
    expect(t.read()).toEqual(['--version', 'serve --help=all', 'serve --help']);
  });

  it('continues with a note when the help cannot be run, or does not answer in time', async () => {
    const t = fresh();
    const server = await launchVllm({
      model: 'fake',
      port: 0,
      bin: FAKE,
      extraArgs: ['--not-checked'],
      helpCacheDir: t.cacheDir,
      healthPollMs: 50,
      env: { FAKE_VLLM_CALLS: t.calls, FAKE_VLLM_HELP: 'fail', FAKE_VLLM_VERSION: 'none', FAKE_VLLM_HEALTHY: '1' },
    });
    await server.stop();
    expect(server.version).toBeUndefined();
    expect(server.notes).toHaveLength(1);
    expect(server.notes[0]).toMatch(/could not read `.*vllm-fake serve --help=all` \(exit code 1: ImportError.*not checked/);
    expect(t.read().some((c) => c.startsWith('serve fake'))).toBe(true);

    const slow = await readServeHelp(FAKE, { cacheDir: t.cacheDir, timeoutMs: 1500, env: { FAKE_VLLM_HELP: 'hang' } });
    expect(slow.flags).toBeUndefined();
    expect(slow.note).toMatch(/no answer within 2 s/);
  });
});

describe('version and engine of the target', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim();
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('every run manifest records serverVersion and engine (the simulator: 0.19.0, V1)', async () => {
    const probe = await probeTarget(sim.baseUrl);
    expect(probe).toMatchObject({ serverVersion: '0.19.0', engine: 'V1', engineEvidence: 'simulated' });
    const r = await runLoad({
      baseUrl: sim.baseUrl,
      workload: [makeRequest('你好', { maxTokens: 2 })],
      shape: burst(1),
      out: false,
    });
    expect(r.manifest.target).toMatchObject({ simulated: true, serverVersion: '0.19.0', engine: 'V1' });
  });

  it('tells V0 from V1 by metric names, labels and version', () => {
    const v0 = parsePrometheus('# TYPE vllm:num_requests_swapped gauge\nvllm:num_requests_swapped{model_name="m"} 0\n');
    const v1 = parsePrometheus(
      '# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine="0",model_name="m"} 0\n',
    );
    expect(detectEngine(v0, '0.9.2', false).engine).toBe('V0');
    expect(detectEngine(v1, '0.9.2', false).engine).toBe('V1');
    expect(detectEngine([], '0.11.0', false)).toEqual({ engine: 'V1', evidence: 'vLLM ≥ 0.11 has no V0' });
    expect(detectEngine([], '0.7.3', false).engine).toBe('V0');
    expect(detectEngine([], '0.10.1.1', false).engine).toBe('unknown');
  });
});
