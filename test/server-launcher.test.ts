import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { recordEffectiveConfig } from '../src/observe/effective-config';
import { diagnoseLaunchFailure } from '../src/vllm/launch-diagnosis';
import { LaunchError, launchVllm, type LaunchVllmOptions } from '../src/vllm/launcher';
import { canBind, freePort } from '../src/proc/port';
import { groupAlive, registeredGroups, waitGroupGone } from '../src/proc/process-group';

const root = join(__dirname, '..');
const fixture = (name: string) => join(__dirname, 'fixtures', name);
const SIM_MAIN = join(root, 'src', 'sim', 'main.ts');
const dir = mkdtempSync(join(tmpdir(), 'loadlab-launch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The LaunchError a launch that must fail rejects with. */
async function launchFails(opts: LaunchVllmOptions): Promise<LaunchError> {
  let server;
  try {
    server = await launchVllm(opts);
  } catch (err) {
    if (err instanceof LaunchError) return err;
    throw err;
  }
  await server.stop();
  throw new Error('expected the launch to fail');
}

/** Pid of the fake engine-core worker, from the fake server's first log line. */
const workerPid = (log: string) => Number(/worker pid (\d+)/.exec(log)?.[1]);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].startsWith('Z');
  } catch {
    return false;
  }
};

describe('launchVllm against stand-in vllm executables', () => {
  it.skipIf(!existsSync(SIM_MAIN))(
    '(a) starts the simulator with the same flags, records its config, stop() frees process and port',
    async () => {
      const logFile = join(dir, 'logs', 'vllm.log');
      const server = await launchVllm({
        model: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
        port: 0,
        bin: fixture('vllm-sim'),
        logFile,
        healthPollMs: 100,
        startupTimeoutMs: 60_000,
        flags: {
          servedModelName: 'qwen',
          maxModelLen: 4096,
          maxNumSeqs: 8,
          numGpuBlocksOverride: 500,
          enablePrefixCaching: false,
          seed: 7,
        },
      });
      const port = Number(new URL(server.baseUrl).port);
      expect(server.model).toBe('qwen');
      expect(server.argv.slice(1)).toEqual([
        'serve',
        'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '--served-model-name',
        'qwen',
        '--max-model-len',
        '4096',
        '--max-num-seqs',
        '8',
        '--no-enable-prefix-caching',
        '--num-gpu-blocks-override',
        '500',
      ]); // --seed is simulator-only: a real vLLM would not get it
      expect(registeredGroups()).toContain(server.pid);

      const cfg = await recordEffectiveConfig(`${server.baseUrl}/v1`);
      expect(cfg).toMatchObject({ reachable: true, simulated: true, kind: 'sim', problems: [] });
      expect(cfg.models[0]).toMatchObject({ id: 'qwen', maxModelLen: 4096 });
      expect(cfg.cacheConfig).toMatchObject({ num_gpu_blocks: '500', block_size: '16', enable_prefix_caching: 'False' });
      expect(cfg.cache.kvCapacityTokens).toBe(8000);
      expect(typeof cfg.version).toBe('string');

      // A second server on the same port is refused before anything is spawned.
      const second = launchVllm({ model: 'x', port, bin: fixture('vllm-sim') });
      await expect(second).rejects.toThrow(/port \d+ on 127\.0\.0\.1 is already in use.*pkill -f "vllm serve".*another port/s);
      await expect(second).rejects.toMatchObject({ kind: 'port_in_use' });

      await server.stop();
      expect(groupAlive(server.pid)).toBe(false);
      expect(await canBind(port, '127.0.0.1')).toBe(true);
      expect(registeredGroups()).not.toContain(server.pid);
      const log = readFileSync(logFile, 'utf8');
      expect(log).toContain(`serve Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4 --host 127.0.0.1 --port ${port}`);
      expect(log).toContain('LOADLAB_SIM_LISTENING');
      expect(server.logTail(5).split('\n').length).toBeLessThanOrEqual(5);
    },
  );

  it('(b) rejects at once when vLLM dies of CUDA OOM, quoting the log and saying what to do', async () => {
    const t0 = performance.now();
    const e = await launchFails({
      model: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
      port: 0,
      bin: fixture('vllm-oom'),
      healthPollMs: 100,
    });
    expect(e.kind).toBe('oom');
    expect(e.message).toMatch(/CUDA out of memory while loading.*Lower --gpu-memory-utilization/);
    expect(e.message).toContain('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB.');
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(registeredGroups()).not.toContain(e.pid);
  });

  it('(c) gives up on a server that never becomes healthy, and kills its whole group even if it ignores SIGTERM', async () => {
    const t0 = performance.now();
    const err = await launchFails({
      model: 'fake',
      port: 0,
      bin: fixture('vllm-fake'),
      startupTimeoutMs: 1000,
      healthPollMs: 100,
      stopGraceMs: 300,
      env: { FAKE_VLLM_IGNORE_TERM: '1' },
    });
    expect(err.kind).toBe('timeout');
    expect(err.message).toMatch(/did not answer GET \/health with 200 within 1 s, so it was stopped/);
    expect(err.message).toContain('never finishes');
    expect(performance.now() - t0).toBeLessThan(8000);
    expect(groupAlive(err.pid!)).toBe(false);
    expect(alive(workerPid(err.logTail))).toBe(false); // the forked "engine core" went too
  });

  it('detects a port in use before spawning (naming what to do)', async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as AddressInfo).port;
    try {
      const err = await launchFails({ model: 'fake', port, bin: fixture('vllm-fake') });
      expect(err.kind).toBe('port_in_use');
      expect(err.message).toMatch(/already in use.*await server\.stop\(\).*pkill -f "vllm serve".*ss -ltnp.*port: \d+/s);
      expect(err.pid).toBeUndefined(); // nothing was spawned
    } finally {
      holder.close();
    }
  });

  it('refuses a missing binary or model path before spawning', async () => {
    await expect(launchVllm({ model: 'x', port: 0, bin: 'vllm-not-installed-here' })).rejects.toThrow(
      /was not found.*LOADLAB_VLLM_BIN.*simulator/s,
    );
    await expect(launchVllm({ model: '/no/such/model/dir', port: 0, bin: fixture('vllm-fake') })).rejects.toThrow(
      /model path \/no\/such\/model\/dir does not exist/,
    );
  });

  it('stop() of a healthy server kills the group, frees the port and is idempotent', async () => {
    const server = await launchVllm({
      model: 'fake',
      port: await freePort(),
      bin: fixture('vllm-fake'),
      env: { FAKE_VLLM_HEALTHY: '1' },
      healthPollMs: 50,
    });
    const worker = workerPid(server.logTail());
    expect(alive(worker)).toBe(true);
    const a = server.stop();
    expect(server.stop()).toBe(a);
    await a;
    expect(groupAlive(server.pid)).toBe(false);
    expect(alive(worker)).toBe(false);
    expect(await canBind(Number(new URL(server.baseUrl).port), '127.0.0.1')).toBe(true);
  });
});

describe('the launched server dies with the Node process', () => {
  /** Runs launch-and-wait.ts; resolves the child and the launched pid. */
  async function launchInChild(mode: 'exit' | 'signals') {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture('launch-and-wait.ts'), mode, fixture('vllm-fake')], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout! });
    const seen: string[] = [];
    const waitFor = (re: RegExp) =>
      new Promise<string>((resolve, reject) => {
        const hit = seen.find((l) => re.test(l));
        if (hit) return resolve(hit);
        const t = setTimeout(() => reject(new Error(`no ${re} from the child; saw ${seen.join(' | ')}`)), 20_000);
        lines.on('line', (l) => {
          if (re.test(l)) {
            clearTimeout(t);
            resolve(l);
          }
        });
      });
    lines.on('line', (l) => seen.push(l));
    const exited = new Promise<string | null>((r) => child.once('exit', (_c, sig) => r(sig)));
    const pid = Number((await waitFor(/^LAUNCHED /)).split(' ')[1]);
    return { child, pid, waitFor, exited };
  }

  it('on process.exit: the exit handler SIGTERMs the group', async () => {
    const { pid, exited } = await launchInChild('exit');
    await exited;
    expect(await waitGroupGone(pid, 5000)).toBe(true);
  });

  it('SIGINT with another listener (tslab: interrupt the cell) leaves it running; SIGTERM kills both', async () => {
    const { child, pid, waitFor, exited } = await launchInChild('signals');
    child.kill('SIGINT');
    await waitFor(/^INTERRUPTED$/);
    expect(groupAlive(pid)).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe('SIGTERM'); // re-raised: Node still dies of the signal
    expect(await waitGroupGone(pid, 5000)).toBe(true);
  });
});

describe('diagnoseLaunchFailure', () => {
  const ctx = { model: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4', port: 8000, exitCode: 1 };
  const cases: Array<[string, string, RegExp]> = [
    ['vllm serve: error: unrecognized arguments: --swap-space 4', 'bad_flag', /this vLLM version rejects flag --swap-space 4/],
    ["vllm serve: error: argument --max-num-seqs: invalid int value: 'many'", 'bad_value', /--max-num-seqs: invalid int value/],
    [
      'ValueError: Free memory on device (3.1/23.64 GiB) on startup is less than desired GPU memory utilization (0.9, 21.28 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.',
      'gpu_busy',
      /something else holds GPU memory.*pkill/,
    ],
    [
      "ValueError: To serve at least one request with the models's max seq len (32768), (1.75 GiB KV cache is needed, which is larger than the available KV cache memory (0.5 GiB).",
      'kv_too_small',
      /Lower --max-model-len/,
    ],
    ['torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.', 'oom', /CUDA out of memory/],
    ['OSError: [Errno 98] Address already in use', 'port_in_use', /port 8000 was taken/],
    ['RuntimeError: Failed to infer device type', 'no_gpu', /no usable NVIDIA GPU/],
    [
      "OSError: We couldn't connect to 'https://huggingface.co' to load this file",
      'download_failed',
      /HF_ENDPOINT=https:\/\/hf-mirror\.com/,
    ],
    [
      "huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': '/root/autodl-tmp/qwen'.",
      'model_not_found',
      /could not find model/,
    ],
    ['ERROR [loadlab-sim] unknown flag --bogus. Known flags: …', 'bad_flag', /rejects flag --bogus/],
  ];
  it.each(cases)('%s → %s', (line, kind, advice) => {
    const d = diagnoseLaunchFailure(['INFO starting', line, 'INFO bye'], ctx);
    expect(d.kind).toBe(kind);
    expect(d.advice).toMatch(advice);
    expect(d.evidence).toBe(line);
  });

  it('falls back to the exit code', () => {
    expect(diagnoseLaunchFailure(['something odd'], { ...ctx, exitCode: 127 }).kind).toBe('not_found');
    expect(diagnoseLaunchFailure(['something odd'], ctx).advice).toMatch(/exited with code 1/);
  });
});
