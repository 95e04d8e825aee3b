import { describe, expect, it } from 'vitest';
import { dispatchLoad } from '../src/schedule/dispatch';
import { burst, closedLoop, openLoop, timeline } from '../src/schedule/shapes';

const now = () => performance.now();
const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('dispatchLoad', () => {
  it('closed loop: in flight equals C while requests remain; each intended when a slot frees', async () => {
    let inFlight = 0;
    const samples: number[] = [];
    const calls: Array<[number, number]> = [];
    const r = await dispatchLoad(
      closedLoop(3),
      10,
      async (i, t) => {
        calls.push([i, t]);
        inFlight++;
        samples.push(inFlight);
        await wait(5 + (i % 3) * 3);
        inFlight--;
      },
      { now, signal: new AbortController().signal },
    );
    expect(r.dispatched).toBe(10);
    expect(r.latenessMs).toEqual([]);
    expect(Math.max(...samples)).toBe(3);
    // every send after the first C happened when one finished: in flight was back to C at once
    expect(samples.slice(2, 8).every((x) => x === 3)).toBe(true);
    expect(calls.map(([i]) => i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('open loop: fires at start + offset on the absolute clock, never early', async () => {
    const fired: Array<{ i: number; due: number; at: number }> = [];
    const t0 = now();
    const r = await dispatchLoad(
      openLoop(400, { burstiness: Infinity }),
      8,
      async (i, due) => {
        fired.push({ i, due, at: now() });
      },
      { now, signal: new AbortController().signal },
    );
    expect(r.latenessMs).toHaveLength(8);
    for (let k = 0; k < fired.length; k++) {
      expect(fired[k].i).toBe(k);
      expect(fired[k].at).toBeGreaterThanOrEqual(fired[k].due);
      if (k > 0) expect(fired[k].due - fired[k - 1].due).toBeCloseTo(2.5, 6);
    }
    expect(fired[0].due - t0).toBeGreaterThanOrEqual(2.5);
  });

  it('timeline: sends in time order whatever the entry order', async () => {
    const order: number[] = [];
    await dispatchLoad(timeline([20, 0, 10]), 3, async (i) => void order.push(i), {
      now,
      signal: new AbortController().signal,
    });
    expect(order).toEqual([1, 2, 0]);
  });

  it('abort: stops sending and drops requests waiting for a slot', async () => {
    const ac = new AbortController();
    let sent = 0;
    const r = await dispatchLoad(
      closedLoop(2),
      50,
      async () => {
        sent++;
        if (sent === 3) ac.abort();
        await wait(2);
      },
      { now, signal: ac.signal },
    );
    expect(sent).toBe(3);
    expect(r.dispatched).toBe(3);
    const r2 = await dispatchLoad(burst(), 5, async () => {}, { now, signal: ac.signal });
    expect(r2.dispatched).toBe(0);
  });

  it('a rejecting fire is a bug and surfaces', async () => {
    await expect(
      dispatchLoad(closedLoop(1), 2, () => Promise.reject(new Error('bug')), { now, signal: new AbortController().signal }),
    ).rejects.toThrow('bug');
  });
});
