/**
 * src/proc/child.ts: the ready line, start-up failures, stop() (group SIGTERM, SIGKILL after the
 * grace period, idempotent, port released), and the kill policy against a parent that is
 * interrupted (SIGINT to its whole process group, as jupyter_client interrupts a kernel) and
 * then SIGKILLed. Real processes, real ports; no wall-clock asserts.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { spawnChild, watchParent, type SpawnChildOptions } from '../src/proc/child';
import { canBind, isListening } from '../src/proc/port';
import { groupAlive, waitGroupGone } from '../src/proc/process-group';

const ENTRY = join(__dirname, 'proc-child-entry.ts');
const start = (mode: string, extra: Partial<SpawnChildOptions> = {}) =>
  spawnChild({
    entry: ENTRY,
    args: [mode],
    marker: 'PROC_READY',
    name: 'the test child',
    portOf: (p) => ({ port: Number(p) }),
    ...extra,
  });
/** Process group of `pid` (from /proc). */
const pgrp = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[2]);

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('spawnChild', () => {
  it('resolves with the ready payload; the child leads its own group; stop() is idempotent and frees the port', async () => {
    const c = await start('serve');
    const port = Number(c.payload);
    expect(port).toBeGreaterThan(0);
    expect(pgrp(c.pid)).toBe(c.pid);
    expect(pgrp(c.pid)).not.toBe(pgrp(process.pid));
    expect(c.logTail()).toContain('proc-child-entry: listening');
    expect(await isListening(port, '127.0.0.1')).toBe(true);
    const a = c.stop();
    expect(c.stop()).toBe(a);
    await a;
    expect(c.exited).toBe(true);
    expect(groupAlive(c.pid)).toBe(false);
    expect(await canBind(port, '127.0.0.1')).toBe(true);
    await c.stop(); // after the fact: still fine
  });

  it("passes nodeArgs to node before the entry (the child's own process.execArgv)", async () => {
    const c = await start('serve', { nodeArgs: ['--no-memory-reducer'] });
    try {
      const argv = readFileSync(`/proc/${c.pid}/cmdline`, 'utf8').split('\0');
      expect(argv.indexOf('--no-memory-reducer')).toBe(1);
      expect(argv.indexOf(ENTRY)).toBeGreaterThan(1);
    } finally {
      await c.stop();
    }
  });

  it('stop() escalates to SIGKILL when the child ignores SIGTERM', async () => {
    const c = await start('ignore-term', { graceMs: 300 });
    await c.stop();
    expect(c.proc.signalCode).toBe('SIGKILL');
    expect(c.logTail()).toContain('ignoring SIGTERM');
    expect(groupAlive(c.pid)).toBe(false);
  });

  it('rejects with the output when the child exits before its ready line', async () => {
    await expect(start('fail')).rejects.toThrow(/the test child exited \(code 3\) before listening[\s\S]*failing on purpose/);
  });

  it('rejects, and stops the child, when the ready line does not come in time', async () => {
    await expect(start('silent', { startupTimeoutMs: 1500 })).rejects.toThrow(
      /the test child did not start within 1500 ms[\s\S]*listening/,
    );
  });

  it('rejects a missing entry with the output of node', async () => {
    await expect(spawnChild({ entry: join(__dirname, 'no-such-entry.ts'), marker: 'X' })).rejects.toThrow(
      /exited \(code 1\) before listening[\s\S]*no-such-entry/,
    );
  });

  it('watchParent watches nothing in a process spawnChild did not start', () => {
    expect(watchParent(() => undefined)).toBe(false);
  });
});

describe('the kill policy, with a parent that stands in for the kernel', () => {
  it("a SIGINT to the parent's group leaves the child serving; a SIGKILL of the parent takes it down", async () => {
    // The parent leads its own group, as jupyter_client starts kernels (start_new_session).
    const parent = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'proc-parent.ts')], {
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines: string[] = [];
    createInterface({ input: parent.stdout! }).on('line', (l) => lines.push(l));
    try {
      expect(await until(() => lines.some((l) => l.startsWith('PARENT ')), 30_000)).toBe(true);
      const [, pidText, portText] = lines.find((l) => l.startsWith('PARENT '))!.split(' ');
      const childPid = Number(pidText);
      const port = Number(portText);
      process.kill(-parent.pid!, 'SIGINT'); // what interrupt_kernel does
      expect(await until(() => lines.includes('INTERRUPTED'), 10_000)).toBe(true);
      expect(groupAlive(childPid)).toBe(true);
      expect(await isListening(port, '127.0.0.1')).toBe(true);
      process.kill(parent.pid!, 'SIGKILL');
      expect(await waitGroupGone(childPid, 10_000)).toBe(true);
      expect(await until(async () => !(await isListening(port, '127.0.0.1')), 5000)).toBe(true);
    } finally {
      try {
        process.kill(-parent.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
});
