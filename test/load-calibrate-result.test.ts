// The pure half of calibrateClient: figures of a pass from records and the server's send times.
import { describe, expect, it } from 'vitest';
import { calibrationPass, judgePasses, passFigures, type CalibrationPass } from '../src/calibrate/calibrate-result';
import { rec } from './helpers/view-fixtures';

describe('passFigures', () => {
  const a = rec(0, { start: 100, chunks: [110, 120, 130] });
  const b = { ...rec(1, { start: 105, chunks: [115, 125] }), ok: false };
  const sent = { r0: [109.5, 119, 129], r1: [114] }; // r1's second send time is unknown
  it('pairs chunk k with send time k, adds the clock offset, counts events and failures', () => {
    const f = passFigures([a, b], sent, 0.25, 999);
    expect(f.stampErrorsMs).toEqual([0.75, 1.25, 1.25, 1.25]);
    expect(f.events).toBe(5);
    expect(f.failed).toBe(1);
    expect(f.windowS).toBe(0.03); // first startMs 100 → last chunk 130
    expect(f.eventsPerSec).toBe(5 / 0.03);
  });
  it('falls back to the wall time when no chunk arrived', () => {
    const f = passFigures([rec(0, { start: 0, chunks: [] })], {}, 0, 500);
    expect(f).toMatchObject({ events: 0, windowS: 0.5, eventsPerSec: 0, stampErrorsMs: [] });
  });
});

describe('calibrationPass and judgePasses', () => {
  const ctx = { eventLoopDelayP99Ms: 1, cpuPercentOfOneCore: 40, server: { cpuMs: 50, wallMs: 100 }, wallMs: 1000, limitMs: 2 };
  const pass = (mode: 'paced' | 'flat-out', c: number, errors: number[], eps: number): CalibrationPass =>
    calibrationPass(
      { events: 10, failed: 0, stampErrorsMs: errors, eventsPerSec: eps, windowS: 1 },
      { ...ctx, mode, concurrency: c, gapMs: mode === 'paced' ? 10 : 0 },
    );
  it('judges a paced pass on its stamp error p99 against the limit', () => {
    const ok = pass('paced', 1, [0.5, 1, 1.5], 100);
    const late = pass('paced', 64, [1, 3, 5], 6400);
    expect(ok).toMatchObject({ keptUp: true, offeredEventsPerSec: 100, serverCpuPercent: 50, stampErrorP50Ms: 1 });
    expect(late.keptUp).toBe(false);
    const flat = pass('flat-out', 16, [40, 50], 20000);
    expect(flat.keptUp).toBe(true);
    expect(judgePasses([ok, late, flat])).toEqual({
      ceilingEventsPerSec: 20000,
      keptUpTo: { concurrency: 1, eventsPerSec: 100, stampErrorP99Ms: 1.49 },
      fellBehindAt: { concurrency: 64, eventsPerSec: 6400, stampErrorP99Ms: 4.96 },
      ok: false,
    });
  });
});
