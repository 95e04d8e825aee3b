import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { calibrationOthers, type Check, type DoctorReport } from '../src/cli/doctor';
import {
  checkKernelMonitors,
  checkModelPath,
  checkServeFlags,
  checkTslab,
  nodeVersionOk,
  runningVllmServes,
} from '../src/cli/doctor-env';
import { engineOf, LESSON04_MIX_MAX_TOKENS, recommendedMaxModelLen } from '../src/cli/doctor-target';
import { launchVllm } from '../src/vllm/launcher';
import { canBind, freePort } from '../src/proc/port';
import { parsePrometheus } from '../src/observe/prometheus';
import { serveArgWarnings } from '../src/vllm/flags';
import { packageRoot } from '../src/paths';

const root = packageRoot();
const fixtures = join(__dirname, 'fixtures');
/** The environment `npm run`/`npx` give a command: this clone's node_modules/.bin first, no LoadLab variables. */
function cleanEnv(extra: Record<string, string> = {}, pathPrefix: string[] = []): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('LOADLAB_')) delete env[k];
  env.PATH = [...pathPrefix, join(root, 'node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter);
  return { ...env, ...extra };
}
/** Runs `loadlab doctor …` as a user would (a real process); resolves with its exit code and output. */
function runDoctor(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'bin', 'loadlab.js'), 'doctor', ...args], { cwd: root, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
const byName = (r: DoctorReport, name: string): Check | undefined => r.checks.find((c) => c.name === name);

describe('loadlab doctor (real processes)', () => {
  it('passes on this clean clone against the simulator, and prints the longest lesson request', async () => {
    const { code, stdout, stderr } = await runDoctor(['--json'], cleanEnv());
    const report = JSON.parse(stdout) as DoctorReport;
    const failed = report.checks.filter((c) => !c.ok && c.level === 'required');
    expect(failed, stderr).toEqual([]);
    expect(code).toBe(0);
    expect(report.ok).toBe(true);
    expect(byName(report, 'target')?.detail).toMatch(/simulator started: sim \(simulated\), vLLM \S+, engine V1/);
    const len = byName(report, 'max_model_len')!;
    const m = /(\d[\d,]*) prompt tokens .* \+ max_tokens (\d+) = (\d[\d,]*) ≤ max_model_len/.exec(len.detail);
    expect(m, len.detail).not.toBeNull();
    const [prompt, max, sum] = [m![1], m![2], m![3]].map((s) => Number(s.replace(/,/g, '')));
    expect(prompt + max).toBe(sum);
    expect(sum).toBeLessThanOrEqual(8192); // the README's --max-model-len 8192 covers it
    for (const c of report.checks) if (!c.ok) expect(c.fix, c.name).toBeTruthy();
    for (const name of [
      'node',
      'tslab kernel',
      'plotly',
      'data/ writable',
      'GPU',
      'port 8000',
      'kernel monitors',
      'client calibration',
    ])
      expect(byName(report, name), name).toBeDefined();
  }, 120_000);

  it('fails, naming the fix, when LOADLAB_BASE_URL points at a closed port', async () => {
    const port = await freePort();
    const { code, stdout } = await runDoctor(
      ['--skip', 'calibration'],
      cleanEnv({ LOADLAB_BASE_URL: `http://127.0.0.1:${port}` }),
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(new RegExp(`✗ target\\s+LOADLAB_BASE_URL=http://127.0.0.1:${port} does not answer`));
    expect(stdout).toMatch(/\n {4}fix: vllm serve .*--max-model-len 8192/);
    expect(stdout).toMatch(/Not ready/);
  }, 60_000);

  it('reports the GPU and its free memory through nvidia-smi (the test fake), and a busy port 8000', async () => {
    let held: Server | undefined;
    if (await canBind(8000, '127.0.0.1')) {
      held = createServer();
      await new Promise<void>((r) => held!.listen({ port: 8000, host: '127.0.0.1' }, () => r()));
    }
    try {
      const { stdout } = await runDoctor(['--json', '--skip', 'calibration,target,tslab'], cleanEnv({}, [fixtures]));
      const report = JSON.parse(stdout) as DoctorReport;
      const gpu = byName(report, 'GPU')!;
      // The fake says 20345 of 24564 MiB used: 4219 MiB free, too little for vLLM's default 0.92.
      expect(gpu.detail).toContain('GPU 0: 4,219 MiB free of 24,564 MiB');
      expect(gpu.detail).toMatch(/another process holds the GPU/);
      expect(gpu).toMatchObject({ ok: false, level: 'optional' });
      expect(gpu.fix).toMatch(/pkill -f "vllm serve"/);
      const port = byName(report, 'port 8000')!;
      expect(port.ok).toBe(false);
      expect(port.detail).toMatch(/already in use/);
      expect(port.fix).toMatch(/ss -ltnp \| grep :8000/);
      expect(report.ok).toBe(true); // warnings only, against the simulator
    } finally {
      await new Promise<void>((r) => (held ? held.close(() => r()) : r()));
    }
  }, 60_000);

  it('rejects a wrong option at once, naming the right ones', async () => {
    const { code, stderr } = await runDoctor(['--skip', 'gpus'], cleanEnv());
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown check 'gpus' to skip; use one of .*gpu/);
  });
});

describe('doctor checks (pure parts)', () => {
  it('Node ≥ 20.19', () => {
    expect(['20.19.0', 'v20.20.2', '22.1.0'].map(nodeVersionOk)).toEqual([true, true, true]);
    expect(['18.19.1', '20.18.3', 'v12.22.9'].map(nodeVersionOk)).toEqual([false, false, false]);
  });

  it('a Hugging Face id with no local folder: warns and gives the modelscope command and the path', () => {
    const c = checkModelPath({ LOADLAB_VLLM_MODEL: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4' })!;
    expect(c).toMatchObject({ ok: false, level: 'optional' });
    expect(c.fix).toBe(
      'modelscope download --model Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4 --local_dir /root/autodl-tmp/Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4 && export LOADLAB_VLLM_MODEL=/root/autodl-tmp/Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
    );
    expect(checkModelPath({ LOADLAB_VLLM_MODEL: root })!.ok).toBe(true);
    expect(checkModelPath({})).toBeUndefined();
  });

  it('--quantization gptq is warned about in every spelling, and nothing else is', () => {
    for (const argv of [['--quantization', 'gptq'], ['--quantization=gptq'], ['-q', 'gptq']])
      expect(serveArgWarnings(['vllm', 'serve', 'm', ...argv])).toHaveLength(1);
    expect(serveArgWarnings(['vllm', 'serve', 'm', '--quantization', 'gptq_marlin', '--max-model-len', '8192'])).toEqual([]);
    const c = checkServeFlags([
      ['/usr/bin/python3', '/root/miniconda3/bin/vllm', 'serve', '/m', '--quantization', 'gptq', '--port', '8000'],
    ]);
    expect(c.ok).toBe(false);
    expect(c.detail).toMatch(/gptq_marlin\.py/);
    expect(c.fix).toBe('pkill -f "vllm serve"; /root/miniconda3/bin/vllm serve /m --port 8000');
  });

  it('finds a running `vllm serve … --quantization gptq` by its command line', async () => {
    let child: ChildProcess | undefined;
    try {
      child = spawn(
        process.execPath,
        ['-e', 'setInterval(() => {}, 1000)', 'vllm', 'serve', 'doctor-test-model', '--quantization', 'gptq'],
        { stdio: 'ignore' },
      );
      await new Promise((r) => setTimeout(r, 300));
      const mine = runningVllmServes().filter((a) => a.includes('doctor-test-model'));
      expect(mine).toHaveLength(1);
      expect(checkServeFlags(mine).ok).toBe(false);
    } finally {
      child?.kill('SIGKILL');
    }
  });

  it('the launcher warns when its arguments include --quantization gptq (real fake-vllm process)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const server = await launchVllm({
        model: 'fake',
        port: await freePort(),
        bin: join(fixtures, 'vllm-fake'),
        env: { FAKE_VLLM_HEALTHY: '1' },
        healthPollMs: 50,
        stopGraceMs: 2000,
        extraArgs: ['--quantization', 'gptq'],
      });
      await server.stop();
      expect(warn.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(
        /LoadLab: `--quantization gptq` forces .*gptq_marlin\.py/,
      );
    } finally {
      warn.mockRestore();
    }
  });

  it('tslab kernel: asks each jupyter (a scripted one here) and names the register command for its Python', () => {
    const dir = mkdtempSync(join(tmpdir(), 'loadlab-jupyter-'));
    try {
      const bin = join(dir, 'conda', 'bin');
      mkdirSync(bin, { recursive: true });
      const spec = {
        kernelspecs: { tslab: { spec: { argv: ['/no/such/tslab', 'kernel', '--config-path', '{connection_file}'] } } },
      };
      writeFileSync(join(bin, 'jupyter'), `#!/bin/sh\necho '${JSON.stringify(spec)}'\n`);
      chmodSync(join(bin, 'jupyter'), 0o755);
      // Not on PATH: found as a conda one ($CONDA_PREFIX/bin).
      const env = { PATH: '/nonexistent', HOME: dir, CONDA_PREFIX: join(dir, 'conda') };
      const c = checkTslab(env, false);
      expect(c).toMatchObject({ ok: false, level: 'required' });
      expect(c.detail).toMatch(/kernel command '\/no\/such\/tslab' is not on PATH/);
      expect(c.fix).toBe(
        `npx tslab install --python=${join(bin, 'python3')} --binary=${join(root, 'node_modules', '.bin', 'tslab')}`,
      );
      expect(checkTslab(env, true).level).toBe('optional'); // inside a running kernel it is only a warning
      const none = checkTslab({ PATH: '/nonexistent', HOME: dir }, false);
      expect(none.detail).toMatch(/no `jupyter` is on PATH/);
      expect(none.fix).toMatch(/apt-get install -y jupyter-client/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('tells V1 from V0 by the metrics vLLM exposes', () => {
    const v1 = parsePrometheus(readFileSync(join(fixtures, 'vllm-metrics-v1.prom'), 'utf8'));
    expect(engineOf(v1, '0.11.0', false)).toMatch(/^V1/);
    const v0 = parsePrometheus('# TYPE vllm:num_requests_swapped gauge\nvllm:num_requests_swapped{model_name="m"} 0\n');
    expect(engineOf(v0, '0.6.3', false)).toMatch(/^V0/);
    expect(engineOf([], '0.6.3', false)).toMatch(/^V0/);
    expect(engineOf([], '0.10.0', false)).toMatch(/^unknown/);
    expect(engineOf([], undefined, true)).toBe('V1 (simulated)');
  });

  it('a failed calibration names who else used the CPU, leaving out this process and its null server', () => {
    const users = {
      wallMs: 5100,
      totalMs: 9000,
      top: [
        { pid: 5, name: 'python3 train.py', cpuMs: 4900 },
        { pid: 10, name: 'node loadlab.js', cpuMs: 2600, role: 'self' as const },
        { pid: 11, name: 'node calibrate/null-server.js', cpuMs: 1400 },
        { pid: 84, name: 'kdamond.0', cpuMs: 40, kernelThread: true as const },
      ],
    };
    expect(calibrationOthers(users, 11)).toBe(
      ' Besides this process and its null server, the most CPU went to python3 train.py (pid 5) 4.90 s, kdamond.0 (a kernel thread) 0.04 s.',
    );
    expect(calibrationOthers({ ...users, top: users.top.slice(1, 3) }, 11)).toBe('');
    expect(calibrationOthers(undefined, 11)).toBe('');
  });
  it("warns of the kernel's DAMON monitor with its CPU since it started, and the command that stops it", () => {
    const reading = new Map([
      [1, { comm: 'process_api', cpuMs: 90_000, kernelThread: false }],
      [84, { comm: 'kdamond.0', cpuMs: 387_000, kernelThread: true, startedS: 2 }],
      [85, { comm: 'kdamond', cpuMs: 5_000, kernelThread: false }], // a program of that name is not the kernel's
    ]);
    const c = checkKernelMonitors(() => reading, 52_002);
    expect(c).toMatchObject({ name: 'kernel monitors', level: 'optional', ok: false });
    expect(c.detail).toMatch(
      /^kdamond\.0, the kernel's DAMON memory monitor, is running: 387\.0 s of CPU since it started 14\.4 h ago \(0\.74 % of one core/,
    );
    expect(c.fix).toMatch(/^echo off \| tee \/sys\/kernel\/mm\/damon\/admin\/kdamonds\/\*\/state +# as root/);
    reading.delete(84);
    expect(checkKernelMonitors(() => reading, 52_002)).toMatchObject({
      ok: true,
      detail: 'no DAMON memory monitor (kdamond) running',
    });
    expect(checkKernelMonitors(() => undefined)).toMatchObject({
      ok: true,
      detail: 'no /proc to read (not Linux): nothing checked',
    });
    // This machine's own reading: whatever it finds, a warning at most.
    expect(checkKernelMonitors().level).toBe('optional');
  });

  it('recommends --max-model-len 8192 unless the longest request needs more', () => {
    expect([5193, 8192, 8193].map(recommendedMaxModelLen)).toEqual([8192, 8192, 16384]);
  });

  it("uses lesson 04's own max_tokens for the mix (guard against drift)", () => {
    const nb = JSON.parse(readFileSync(join(root, 'notebooks', '04-chunked-prefill.ipynb'), 'utf8')) as {
      cells: { source: string[] }[];
    };
    const src = nb.cells.map((c) => c.source.join('')).join('\n');
    expect(src).toContain(`ll.shortLongMix(MIX_N, { maxTokens: ${LESSON04_MIX_MAX_TOKENS}, fixedOutput: true`);
    expect(src).toMatch(/ll\.longPlusShort\(\)/);
  });
});

describe('00-setup calls the doctor in a real tslab kernel', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'loadlab-doctor-nb-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('stores no outputs, and its first code cell shows the doctor table', () => {
    const nb = JSON.parse(readFileSync(join(root, 'notebooks', '00-setup.ipynb'), 'utf8')) as {
      cells: { cell_type: string; source: string[]; outputs?: unknown[] }[];
    };
    const code = nb.cells.filter((c) => c.cell_type === 'code');
    expect(code.every((c) => (c.outputs ?? []).length === 0)).toBe(true);
    const first = code[0].source.join('');
    expect(first).toMatch(/doctor\(/);
    const cells = join(tmp, 'cells.json');
    writeFileSync(cells, JSON.stringify([first]));
    const r = spawnSync('/usr/bin/python3', [join(fixtures, 'run-cells.py'), cells, join(root, 'notebooks'), '180'], {
      encoding: 'utf8',
      env: cleanEnv(),
      timeout: 240_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const [out] = JSON.parse(r.stdout.trim().split('\n').pop()!) as { html: string[]; error: string | null }[];
    expect(out.error).toBeNull();
    const html = out.html.join('\n');
    expect(html).toContain('环境检查 loadlab doctor');
    expect(html).toMatch(/<td[^>]*>✓<\/td><td[^>]*>target<\/td>/);
  }, 240_000);
});
