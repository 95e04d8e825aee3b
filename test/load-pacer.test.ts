import { describe, expect, it } from 'vitest';
import { sleepUntil } from '../src/schedule/pacer';

describe('sleepUntil', () => {
  it('is never early, and late by well under a millisecond typically', async () => {
    const errors: number[] = [];
    const t0 = performance.now();
    let target = t0;
    for (let i = 0; i < 60; i++) {
      target += 2 + ((i * 7) % 9); // 2–10 ms gaps, absolute schedule
      const late = await sleepUntil(target);
      expect(performance.now()).toBeGreaterThanOrEqual(target);
      errors.push(late);
    }
    errors.sort((a, b) => a - b);
    const p50 = errors[Math.floor(errors.length / 2)];
    const p90 = errors[Math.floor(errors.length * 0.9)];
    const max = errors[errors.length - 1];
    console.log(
      `pacer lateness over ${errors.length} waits: p50 ${p50.toFixed(3)} ms, p90 ${p90.toFixed(3)} ms, max ${max.toFixed(3)} ms`,
    );
    // The invariant: never early. The median is loose (2 shared cores, other test files running);
    // a plain setTimeout is typically ~1 ms late, this pacer ~0 ms when the machine is idle.
    // The max is only reported: one descheduling by another process can take tens of ms.
    expect(errors[0]).toBeGreaterThanOrEqual(0);
    expect(p50).toBeLessThan(2);
  });

  it('returns at once for a past target and stops on abort', async () => {
    expect(await sleepUntil(performance.now() - 5)).toBeGreaterThanOrEqual(5);
    const ac = new AbortController();
    const t = performance.now();
    setTimeout(() => ac.abort(), 10);
    const late = await sleepUntil(t + 10_000, { signal: ac.signal });
    expect(late).toBeLessThan(0);
    expect(performance.now() - t).toBeLessThan(1000);
  });

  it('uses the injected clock', async () => {
    let now = 0;
    const p = sleepUntil(3, { now: () => now++, spinMs: 1000 });
    expect(await p).toBe(0);
  });
});
