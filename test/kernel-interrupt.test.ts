/**
 * The notebook kernel's life cycle, driven for real as JupyterLab drives it: a Python driver
 * (`test/kernel/drive.py`, jupyter_client's KernelManager) starts the tslab kernel in
 * `notebooks/`, opens the simulator with `openTarget()`, interrupts a `measure()` cell
 * (`interrupt_kernel`: SIGINT to the kernel's whole process group), runs the cell again, then
 * restarts, shuts down and SIGKILLs kernels. The driver reports what it saw; this file asserts it.
 *
 * Skipped, with the reason, when /usr/bin/python3 lacks jupyter_client or the tslab kernelspec
 * is missing, unless `CI` is set: then it fails instead.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromRoot } from '../src/paths';

const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

/** Why the kernel tests cannot run here ('' when they can). */
function missing(): string {
  const jc = spawnSync(PYTHON, ['-c', 'import jupyter_client'], { encoding: 'utf8' });
  if (jc.status !== 0) return `${PYTHON} has no jupyter_client (apt-get install python3-jupyter-client)`;
  const ks = spawnSync(
    PYTHON,
    ['-c', "from jupyter_client.kernelspec import KernelSpecManager as K; K().get_kernel_spec('tslab')"],
    { encoding: 'utf8' },
  );
  if (ks.status !== 0) return 'the tslab kernelspec is not installed (npx tslab install --python=/usr/bin/python3)';
  return '';
}

const why = missing();
if (why && process.env.CI) throw new Error(`kernel tests cannot run in CI: ${why}`);

interface Setup {
  kernelPid: number;
  kernelPgid: number;
  simPid: number | null;
  simPgid: number;
  simPids: number[];
  port: number;
  baseUrl: string;
  mode: string;
}
interface Gone {
  simAlive: boolean;
  portRefuses: boolean;
  seconds: number;
}
interface Facts {
  setup1: Setup;
  setup2: Setup;
  setup3: Setup;
  interruptedCell: { status: string; measured: boolean; stderr: string };
  cellAfterInterrupt: { status: string; value: number };
  simAfterInterrupt: { samePidAlive: boolean; health: number | string; simPids: number[] };
  interruptedPoint: { status: string; codes: string[]; badLines: number; summary: boolean };
  rerun: { status: string; resumed: boolean; records: number };
  thirdRun: { status: string; resumed: boolean; records: number };
  simAfterReruns: { samePidAlive: boolean };
  afterRestart: Gone;
  afterShutdown: Gone;
  afterSigkill: Gone;
}

/** Run the driver; resolves with its facts, rejects with its stderr tail. */
function drive(dataRoot: string, timeoutMs: number): Promise<Facts> {
  return new Promise((resolve, reject) => {
    const p = spawn(PYTHON, [fromRoot('test', 'kernel', 'drive.py'), fromRoot(), dataRoot], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => p.kill('SIGTERM'), timeoutMs);
    p.on('close', (code, signal) => {
      clearTimeout(timer);
      const last = out.trim().split('\n').pop() ?? '';
      if (code === 0 && last.startsWith('{')) return resolve(JSON.parse(last) as Facts);
      reject(new Error(`drive.py ended with ${signal ?? `code ${code}`}:\n${out.slice(-2000)}\n${err.slice(-4000)}`));
    });
  });
}

describe.skipIf(!!why)(`tslab kernel: interrupt, restart, shutdown, SIGKILL${why ? ` (skipped: ${why})` : ''}`, () => {
  const dataRoot = mkdtempSync(join(tmpdir(), 'loadlab-kernel-'));
  let facts: Facts;
  beforeAll(async () => {
    facts = await drive(dataRoot, 280_000);
  }, 300_000);
  afterAll(() => rmSync(dataRoot, { recursive: true, force: true }));

  it("starts the simulator in its own process group, outside the kernel's", () => {
    for (const s of [facts.setup1, facts.setup2, facts.setup3]) {
      expect(s.mode).toBe('sim');
      expect(s.simPids, 'one simulator child of the kernel').toHaveLength(1);
      expect(s.simPgid).toBe(s.simPid);
      expect(s.simPgid).not.toBe(s.kernelPgid);
    }
  });

  it('interrupt kernel ends the measure() cell and the next cell runs', () => {
    expect(facts.interruptedCell.status).toBe('error');
    expect(facts.interruptedCell.measured).toBe(false);
    expect(facts.cellAfterInterrupt).toEqual({ status: 'ok', value: 2 });
  });

  it('the simulator survives the interrupt: same pid, /health answers', () => {
    expect(facts.simAfterInterrupt.samePidAlive).toBe(true);
    expect(facts.simAfterInterrupt.health).toBe(200);
    expect(facts.simAfterInterrupt.simPids).toEqual([facts.setup1.simPid]);
    expect(facts.simAfterReruns.samePidAlive).toBe(true);
  });

  it('writes a whole interrupted point: status interrupted, every record readable, a summary', () => {
    const p = facts.interruptedPoint;
    expect(p.status).toBe('interrupted');
    expect(p.badLines).toBe(0);
    expect(p.summary).toBe(true);
    expect(p.codes.length).toBeLessThan(8); // it stopped sending
    expect(p.codes).toContain('aborted'); // what was in flight is recorded, not lost
  });

  it('the same cell measures the incomplete point afresh, then reuses the complete one', () => {
    expect(facts.rerun).toMatchObject({ status: 'complete', resumed: false, records: 8 });
    expect(facts.thirdRun).toMatchObject({ status: 'complete', resumed: true, records: 8 });
  });

  it('restart, shutdown and SIGKILL of the kernel each leave no simulator and no bound port', () => {
    for (const g of [facts.afterRestart, facts.afterShutdown, facts.afterSigkill]) {
      expect(g.simAlive).toBe(false);
      expect(g.portRefuses).toBe(true);
    }
  });
});
