/**
 * Holding V8's memory reducer off (src/proc/memory-reducer.ts): holds nest, a release counts once, and the flag
 * goes back on with the last. What the reducer's collections cost a measuring thread is measured in
 * bench/README.md §32, not here: V8 starts them only after seconds of a quiet heap.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { holdMemoryReducerOff, memoryReducerHeldOff } from '../src/proc/memory-reducer';

describe('holdMemoryReducerOff', () => {
  it('nests: off from the first hold until the last release, and a second release of one hold counts nothing', () => {
    expect(memoryReducerHeldOff()).toBe(false);
    const a = holdMemoryReducerOff();
    const b = holdMemoryReducerOff();
    expect(memoryReducerHeldOff()).toBe(true);
    a();
    a();
    expect(memoryReducerHeldOff()).toBe(true);
    b();
    expect(memoryReducerHeldOff()).toBe(false);
  });

  it('lets a worker thread start and run under the hold, and after it', async () => {
    const run = async () => {
      const w = new Worker("require('node:worker_threads').parentPort.postMessage([1, 2, 3].length)", { eval: true });
      const got = await new Promise((res, rej) => {
        w.once('message', res);
        w.once('error', rej);
      });
      await w.terminate();
      return got;
    };
    const release = holdMemoryReducerOff();
    try {
      expect(await run()).toBe(3);
    } finally {
      release();
    }
    expect(await run()).toBe(3);
  });
});
