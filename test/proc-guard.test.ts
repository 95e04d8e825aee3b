/**
 * The orphan guard of the vLLM launcher (src/proc/orphan-guard.ts): a Node process launches the
 * stand-in `vllm-fake` (a server plus a forked worker in its group) with `launchVllm`
 * (test/fixtures/launch-and-wait.ts, grace 2 s), and is then SIGKILLed, as a kernel restart that
 * hangs or the OOM killer would: the whole server group still goes away and frees its port,
 * also when the server ignores SIGTERM (SIGKILL after the grace period).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { waitPortFree } from '../src/proc/port';
import { groupAlive, waitGroupGone } from '../src/proc/process-group';

const fixture = (name: string) => join(__dirname, 'fixtures', name);

async function launchThenSigkill(env: Record<string, string>) {
  const parent = spawn(process.execPath, ['--import', 'tsx', fixture('launch-and-wait.ts'), 'signals', fixture('vllm-fake')], {
    cwd: join(__dirname, '..'),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('launch-and-wait did not print LAUNCHED within 30 s')), 30_000);
    createInterface({ input: parent.stdout! }).on('line', (l) => {
      if (l.startsWith('LAUNCHED ')) {
        clearTimeout(t);
        resolve(l);
      }
    });
  });
  const [, pid, baseUrl] = line.split(' ');
  const exited = new Promise((r) => parent.once('exit', r));
  return { pid: Number(pid), port: Number(new URL(baseUrl).port), parent, exited };
}

describe('launchVllm never outlives Node, even on SIGKILL', () => {
  it.each([
    ['a server that stops on SIGTERM', {}],
    ['a server that ignores SIGTERM (SIGKILL after the grace period)', { FAKE_VLLM_IGNORE_TERM: '1' }],
  ])('%s', async (_what, env) => {
    const { pid, port, parent, exited } = await launchThenSigkill(env);
    try {
      expect(groupAlive(pid)).toBe(true);
      parent.kill('SIGKILL');
      await exited;
      expect(await waitGroupGone(pid, 15_000)).toBe(true);
      // The group is gone; the kernel may take a moment longer to release the listening socket (seen once
      // in CI on a loaded machine), so the port is polled within a bound rather than probed once.
      expect(await waitPortFree(port, '127.0.0.1', 10_000)).toBe(true);
    } finally {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
  });
});
