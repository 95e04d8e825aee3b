import { describe, expect, it } from 'vitest';
import { createPool } from '../src/schedule/pool';

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('createPool', () => {
  it('rejects a bad concurrency with the rule', () => {
    expect(() => createPool(0)).toThrow('concurrency must be an integer ≥ 1, got 0');
    expect(() => createPool(1.5)).toThrow(TypeError);
    expect(() => createPool(Number.NaN)).toThrow('got NaN');
  });

  it('keeps in-flight exactly C while requests are pending, never above', async () => {
    const C = 4;
    const N = 23;
    const pool = createPool(C);
    const release: Array<() => void> = [];
    let running = 0;
    let peak = 0;
    const samples: Array<[number, number]> = [];
    const results = Array.from({ length: N }, (_, i) =>
      pool.run(
        () =>
          new Promise<number>((resolve) => {
            running++;
            peak = Math.max(peak, running);
            release.push(() => {
              running--;
              resolve(i);
            });
          }),
      ),
    );
    // Finish tasks one at a time, in a scrambled order, sampling the counters each step.
    let done = 0;
    while (done < N) {
      await tick();
      samples.push([pool.activeCount, pool.pendingCount]);
      const k = (done * 7) % release.length;
      const [r] = release.splice(k, 1);
      r();
      done++;
    }
    expect(await Promise.all(results)).toEqual(Array.from({ length: N }, (_, i) => i));
    expect(peak).toBe(C);
    expect(pool.peakActive).toBe(C);
    for (const [active, pending] of samples) {
      expect(active).toBeLessThanOrEqual(C);
      if (pending > 0) expect(active).toBe(C);
    }
    await pool.onIdle();
    expect(pool.activeCount).toBe(0);
    expect(pool.pendingCount).toBe(0);
  });

  it('starts the next task in the same tick a slot frees (no idle gap)', async () => {
    const pool = createPool(1);
    const order: string[] = [];
    const a = pool.run(async () => {
      order.push('a');
      return 'a';
    });
    const b = pool.run(() => {
      order.push('b');
      return 'b';
    });
    await a;
    // b has already started by the time a's caller resumes
    expect(order).toEqual(['a', 'b']);
    expect(await b).toBe('b');
  });

  it('passes rejections through and frees the slot', async () => {
    const pool = createPool(1);
    await expect(pool.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      pool.run(() => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
    expect(await pool.run(() => 42)).toBe(42);
  });

  it('clearQueue rejects waiting tasks and leaves running ones', async () => {
    const pool = createPool(1);
    let release!: () => void;
    const first = pool.run(() => new Promise<string>((r) => (release = () => r('first'))));
    const second = pool.run(() => 'second');
    expect(pool.pendingCount).toBe(1);
    pool.clearQueue(new Error('stopped'));
    await expect(second).rejects.toThrow('stopped');
    release();
    expect(await first).toBe('first');
    await pool.onIdle();
  });
});
