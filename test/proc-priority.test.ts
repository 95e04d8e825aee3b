/**
 * src/proc/priority.ts: the nice value LoadLab asks for its time-critical threads (the simulator's
 * engine thread, a run's worker threads), `LOADLAB_NICE`, and what it says when it cannot.
 */
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { DEFAULT_NICE, niceFromEnv, raiseThreadPriority } from '../src/proc/priority';

describe('thread priority', () => {
  it('LOADLAB_NICE: unset is the default, an integer in -20..19 is taken, anything else names the fix', () => {
    expect(niceFromEnv(undefined)).toBe(DEFAULT_NICE);
    expect(niceFromEnv(' ')).toBe(DEFAULT_NICE);
    expect(niceFromEnv('0')).toBe(0);
    expect(niceFromEnv('-10')).toBe(-10);
    for (const bad of ['-21', '20', '1.5', 'high']) expect(() => niceFromEnv(bad)).toThrow(/integer from -20 to 19/);
  });

  it('0 leaves the priority alone', () => {
    const before = getPriority(0);
    expect(raiseThreadPriority(0)).toMatch(/left alone/);
    expect(getPriority(0)).toBe(before);
  });

  it("sets only the calling thread's nice value, or says why it could not", async () => {
    const src = `
      const { parentPort } = require('node:worker_threads');
      const { getPriority, setPriority } = require('node:os');
      let said;
      try { setPriority(0, -5); said = 'raised'; } catch (e) { said = 'not raised: ' + e.code; }
      parentPort.postMessage({ said, nice: getPriority(0) });`;
    const before = getPriority(0);
    const got = await new Promise<{ said: string; nice: number }>((resolve, reject) => {
      const w = new Worker(src, { eval: true });
      w.once('message', (m) => {
        resolve(m);
        void w.terminate();
      });
      w.once('error', reject);
    });
    if (got.said === 'raised') expect(got.nice).toBe(-5);
    else expect(got.said).toMatch(/EACCES|EPERM/);
    expect(getPriority(0)).toBe(before); // the test's own thread is untouched
    expect(raiseThreadPriority(-5)).toMatch(/raised \(nice -5\)|not raised \(E(ACCES|PERM).*CAP_SYS_NICE/);
  });
});
