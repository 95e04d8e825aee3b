/**
 * The spinning clock's timer slack (src/proc/timer-slack.ts): a real simulator process runs its main thread with
 * 1 ns of slack, and a worker thread that asks leaves the main thread's slack alone. Linux only (/proc).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { tsxImportExpr } from '../src/proc/dist';
import { mainThreadSlackNs, TIGHT_SLACK_NS } from '../src/proc/timer-slack';
import { packageRoot } from '../src/paths';
import { startSim } from '../src/sim/start';

const linux = existsSync('/proc/self/timerslack_ns');

describe.runIf(linux)('timer slack', () => {
  it('a simulator process runs its main thread (the engine and its clock) with 1 ns of timer slack', async () => {
    const sim = await startSim({ extraArgs: ['--stats-interval-s', '0'] });
    try {
      expect(Number(readFileSync(`/proc/${sim.pid}/timerslack_ns`, 'utf8'))).toBe(TIGHT_SLACK_NS);
    } finally {
      await sim.stop();
    }
  });

  it("a worker thread that asks leaves the main thread's slack alone", async () => {
    const before = mainThreadSlackNs();
    const boot = `const { parentPort } = require('node:worker_threads');
      ${tsxImportExpr(join(packageRoot(), 'src', 'proc', 'timer-slack.ts'))}.then((m) => parentPort.postMessage(m.tightenTimerSlack()));`;
    const w = new Worker(boot, { eval: true });
    const done = await new Promise<boolean>((res, rej) => {
      w.once('message', res);
      w.once('error', rej);
    });
    await w.terminate();
    expect(done).toBe(false);
    expect(mainThreadSlackNs()).toBe(before);
  });
});
