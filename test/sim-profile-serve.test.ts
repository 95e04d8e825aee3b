/**
 * Profiles end to end, on real processes and real HTTP: `loadlab sim --print-profile` prints JSON that
 * parses back, `loadlab sim --profile l40s-…` serves the profile's model and reports the profile on
 * `/version`, `openTarget({ profile })` starts a simulator on it, and a run's manifest records it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTarget, type LessonTarget } from '../src/lesson/open-target';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { addDecode, emptyBatch, stepTimeMs } from '../src/sim/engine/cost';
import { DEFAULT_PROFILE } from '../src/sim/engine/profile';
import { DEFAULT_PROFILE_NAME, loadProfileFile } from '../src/sim/engine/profile-file';
import { parseProfileDocument } from '../src/sim/engine/profile-schema';
import { makeRequest } from '../src/workload/workload';

const ROOT = join(__dirname, '..');
const BIN = join(ROOT, 'bin', 'loadlab.js');
const L40S = 'l40s-qwen2.5-7b-instruct-awq';
const H100 = 'h100-80gb-qwen2.5-7b-instruct-fp16';
const tmp = mkdtempSync(join(tmpdir(), 'loadlab-profile-serve-'));
let child: ChildProcess | undefined;
let target: LessonTarget | undefined;

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child?.once('exit', r));
  }
  await target?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** Run `loadlab …` to the end; its stdout, stderr and exit code. */
function loadlab(args: string[], env: Record<string, string> = {}): Promise<{ out: string; err: string; code: number | null }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BIN, ...args], {
      cwd: tmp,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('close', (code) => resolve({ out, err, code }));
  });
}

/** Start `loadlab sim …` in the background; resolves with its URL once it prints the ready line. */
function startCliSim(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    child = spawn(process.execPath, [BIN, 'sim', ...args], { cwd: tmp, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /LOADLAB_SIM_LISTENING (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.stderr?.on('data', (d) => (out += d));
    child.on('exit', (code) => reject(new Error(`loadlab sim exited ${code}: ${out}`)));
  });
}

function tpotMs(nameOrFile: string): number {
  const b = emptyBatch();
  addDecode(b, 512);
  return stepTimeMs(b, loadProfileFile(nameOrFile).profile);
}

describe('loadlab sim --print-profile', () => {
  it('prints a profile file that parses back and checks, the default one without a NAME', async () => {
    const named = await loadlab(['sim', '--print-profile', L40S]);
    expect(named.code).toBe(0);
    const doc = parseProfileDocument(JSON.parse(named.out), 'stdout');
    expect(doc.profile).toEqual(loadProfileFile(L40S).profile);
    expect(doc.profile.status).toBe('spec-derived, not calibrated');
    const dflt = await loadlab(['sim', '--print-profile']);
    expect(JSON.parse(dflt.out).id).toBe(DEFAULT_PROFILE_NAME);
    const typo = await loadlab(['sim', '--print-profile', 'l40s-qwen2.5-7b-instruct-awk']);
    expect(typo.code).toBe(1);
    expect(typo.err).toMatch(/unknown profile 'l40s-qwen2\.5-7b-instruct-awk'\. Did you mean l40s-qwen2\.5-7b-instruct-awq/);
  });

  it('LOADLAB_SIM_PROFILE picks the default for the simulator and for DEFAULT_PROFILE alike; a typo there is named', async () => {
    const viaEnv = await loadlab(['sim', '--print-profile'], { LOADLAB_SIM_PROFILE: L40S });
    expect(JSON.parse(viaEnv.out).id).toBe(L40S);
    const code =
      "import('./src/sim/engine/profile.ts').then((m) => console.log(m.DEFAULT_PROFILE.id, m.RTX4090_QWEN25_7B_GPTQ_INT4.id))";
    const node = (env: Record<string, string>) =>
      new Promise<{ out: string; err: string }>((resolve) => {
        const c = spawn(process.execPath, ['--import', 'tsx', '-e', code], { cwd: ROOT, env: { ...process.env, ...env } });
        let out = '';
        let err = '';
        c.stdout.on('data', (d) => (out += d));
        c.stderr.on('data', (d) => (err += d));
        c.on('close', () => resolve({ out, err }));
      });
    expect((await node({ LOADLAB_SIM_PROFILE: H100 })).out.trim()).toBe(`${H100} ${DEFAULT_PROFILE_NAME}`);
    expect((await node({ LOADLAB_SIM_PROFILE: 'h100-fp16' })).err).toMatch(
      /LOADLAB_SIM_PROFILE: unknown profile 'h100-fp16'\. Did you mean/,
    );
  });
});

describe('loadlab sim --profile', () => {
  it('serves the profile model, reports the profile on /version, and its cost model is slower than the 4090', async () => {
    const url = await startCliSim(['--profile', L40S, '--port', '0', '--stats-interval-s', '0']);
    const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(['Qwen/Qwen2.5-7B-Instruct-AWQ']);
    const version = (await (await fetch(`${url}/version`)).json()) as Record<string, unknown>;
    expect(version.loadlab_profile).toEqual({
      id: L40S,
      status: 'spec-derived, not calibrated',
      gpu: 'NVIDIA L40S',
      model: 'Qwen/Qwen2.5-7B-Instruct-AWQ',
    });
    // The L40S streams at 864 GB/s against the 4090's 1008: every decode step takes longer (cost model, no clock).
    expect(tpotMs(L40S)).toBeGreaterThan(tpotMs(DEFAULT_PROFILE_NAME));

    // A profile given for a real (external) server is ignored, and the lesson is told so.
    const ext = await openTarget({ profile: H100, env: { LOADLAB_BASE_URL: url } });
    expect(ext.notes.join(' ')).toMatch(/Profile h100-80gb-qwen2\.5-7b-instruct-fp16 is for the simulator only/);
  });
});

describe('openTarget({ profile }) and the run manifest', () => {
  it('refuses a mistyped profile before starting anything', async () => {
    await expect(openTarget({ profile: 'h100-qwen', env: {} })).rejects.toThrow(/unknown profile 'h100-qwen'\. Did you mean/);
  });

  it('starts the simulator on the profile and every manifest records which profile and its status', async () => {
    target = await openTarget({ profile: H100, env: {} });
    expect(target.model).toBe('Qwen/Qwen2.5-7B-Instruct');
    expect(target.config.simProfile?.id).toBe(H100);
    const dir = join(tmp, 'run');
    const run = await runLoad({
      baseUrl: target.baseUrl,
      workload: [makeRequest('你好', { maxTokens: 4 })],
      requests: 2,
      shape: closedLoop(1),
      out: dir,
    });
    expect(run.summary.completed).toBe(2);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.target.simulated).toBe(true);
    expect(manifest.target.model).toBe('Qwen/Qwen2.5-7B-Instruct');
    expect(manifest.target.simProfile).toEqual({
      id: H100,
      status: 'spec-derived, not calibrated',
      gpu: 'NVIDIA H100 80GB HBM3',
      model: 'Qwen/Qwen2.5-7B-Instruct',
    });
    expect(DEFAULT_PROFILE.id).toBe(DEFAULT_PROFILE_NAME);
  });
});
