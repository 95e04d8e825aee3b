import { describe, expect, it } from 'vitest';
import { dispatchLoad } from '../src/schedule/dispatch';
import { closedLoop, timeline } from '../src/schedule/shapes';

// An injected clock, so the counts are exact: nothing here depends on how busy the machine is.
describe('dispatchLoad deadlineMs', () => {
  it('scheduled shape: arrivals due before the deadline are sent, the rest never', async () => {
    let t = 0;
    const now = () => {
      t += 25; // every reading moves the clock on, so the pacer's waits end
      return t - 25;
    };
    const fired: number[] = [];
    const shape = timeline([0, 100, 200, 300, 400]);
    const r = await dispatchLoad(shape, 5, async (_i, due) => void fired.push(due), {
      now,
      signal: new AbortController().signal,
      deadlineMs: 250,
    });
    expect(fired).toEqual([0, 100, 200]);
    expect(r.dispatched).toBe(3);
  });

  it('closed loop: a slot freeing at or after the deadline sends nothing', async () => {
    let t = 0;
    const fired: number[] = [];
    const r = await dispatchLoad(
      closedLoop(1),
      10,
      async (_i, due) => {
        fired.push(due);
        t += 100; // each request takes 100 ms of the injected clock
      },
      { now: () => t, signal: new AbortController().signal, deadlineMs: 250 },
    );
    expect(fired).toEqual([0, 100, 200]);
    expect(r.dispatched).toBe(3);
  });

  it('without a deadline everything is sent', async () => {
    let t = 0;
    const r = await dispatchLoad(closedLoop(2), 7, async () => void (t += 100), {
      now: () => t,
      signal: new AbortController().signal,
    });
    expect(r.dispatched).toBe(7);
  });
});
