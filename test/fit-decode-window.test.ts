/**
 * The calibration's clean decode window leaves out exactly the intervals a simulator resync touched
 * (src/fit/decode-window.ts): the interval where `loadlab:sim_resyncs_total` rose, and the intervals
 * until the step after it has ended. CI once failed the hidden-profile recovery (only marlinFlops
 * identified); reproduced under the test suite's load, a resync gap had entered a window (decode B=16
 * n=64 read 10.47 ms for a 9.86 ms step): the old rule judged lateness by histogram buckets against
 * the interval's mean ITL, and missed it. A probe whose window was not
 * caught says so in its progress line.
 */
import { describe, expect, it } from 'vitest';
import { probeLine } from '../src/fit/calibration';
import { cleanWindow, type WaveSnap } from '../src/fit/decode-window';
import type { RequestRecord } from '../src/types';

const B = 4;
const STEP_S = 0.01;

/** Cumulative snapshots: each entry is [steps ended in the interval, extra gap s in one step's samples, resyncs]. */
function wave(intervals: [number, number, number][], counters = true): { first: WaveSnap; snaps: WaveSnap[] } {
  let steps = 10;
  let resyncs = 0;
  let count = 0;
  let sum = 0;
  const snap = (): WaveSnap => ({
    h: { itl: { le: [Infinity], counts: [count], count, sum }, ttft: { le: [Infinity], counts: [B], count: B, sum: 0 } },
    ...(counters ? { steps, resyncs } : {}),
  });
  const first = snap();
  const snaps = [snap()];
  for (const [n, gap, r] of intervals) {
    steps += n;
    resyncs += r;
    count += n * B;
    sum += n * B * STEP_S + gap * B;
    snaps.push(snap());
  }
  return { first, snaps };
}

describe('the clean decode window', () => {
  it('keeps every interval of a run without resyncs, and its mean is the step time', () => {
    const { first, snaps } = wave([
      [3, 0, 0],
      [3, 0, 0],
      [3, 0, 0],
    ]);
    const w = cleanWindow(first, snaps, B);
    expect(w?.count).toBe(9 * B);
    expect(w?.meanMs).toBeCloseTo(1e3 * STEP_S, 9);
  });

  it('leaves out the interval with the resync and the next, where the step after it ended with the gap', () => {
    const { first, snaps } = wave([
      [3, 0, 0],
      [3, 0, 1], // a step ended late and the loop resynced
      [3, 0.03, 0], // the step after it: its samples hold the 30 ms gap
      [3, 0, 0],
    ]);
    const w = cleanWindow(first, snaps, B);
    expect(w?.count).toBe(6 * B);
    expect(w?.meanMs).toBeCloseTo(1e3 * STEP_S, 9);
  });

  it('keeps leaving intervals out until the step counter has passed its value at the resync', () => {
    const { first, snaps } = wave([
      [3, 0, 1],
      [0, 0, 0], // a scrape before the next step ended
      [1, 0.03, 0],
      [3, 0, 0],
    ]);
    const w = cleanWindow(first, snaps, B);
    expect(w?.count).toBe(3 * B);
    expect(w?.meanMs).toBeCloseTo(1e3 * STEP_S, 9);
  });

  it('leaves out the first interval when the resync came before the window opened', () => {
    const { first, snaps } = wave([
      [3, 0.03, 0],
      [3, 0, 0],
    ]);
    snaps[0].resyncs = 1;
    for (const s of snaps.slice(1)) s.resyncs = 1;
    const w = cleanWindow(first, snaps, B);
    expect(w?.count).toBe(3 * B);
  });

  it('leaves nothing out on a real vLLM, which has neither counter', () => {
    const { first, snaps } = wave(
      [
        [3, 0, 1],
        [3, 0.03, 0],
      ],
      false,
    );
    expect(cleanWindow(first, snaps, B)?.count).toBe(6 * B);
  });
});

describe("a calibration probe's progress line", () => {
  const probe = {
    name: 'decode B=16 n=64',
    kind: 'decode' as const,
    concurrency: 16,
    promptTokens: 32,
    outputTokens: 64,
    repeats: 1,
  };
  const record = {} as RequestRecord;
  const window = { source: 'metrics' as const, count: 800, meanMs: 9.86, meanGeneratedTokens: 30 };

  it('says when no clean decode window was caught, so its ITL is left out of the fit', () => {
    const m = { probe, records: [record, record], failures: { http_500: 1 }, wallSeconds: 0.71 };
    expect(probeLine(8, 10, m)).toBe(
      '[9/10] decode B=16 n=64: 2 ok, 1 failed, no clean decode window caught (its ITL is left out of the fit), 0.7 s',
    );
    expect(probeLine(8, 10, { ...m, window, failures: {} })).toBe('[9/10] decode B=16 n=64: 2 ok, 0.7 s');
    expect(probeLine(0, 10, { ...m, records: [], failures: { http_500: 16 } })).toBe(
      '[1/10] decode B=16 n=64: 0 ok, 16 failed, 0.7 s',
    );
  });
});
