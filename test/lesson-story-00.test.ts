/**
 * Lesson 00's narrative builder (src/lesson/story-00.ts) on synthetic calibrations: kept up, fell
 * behind because another program took the CPU, and a busy machine.
 */
import { describe, expect, it } from 'vitest';
import type { CalibrationPass, ClientCalibration } from '../src/calibrate/calibrate-result';
import { calibrationSentences } from '../src/lesson/story-00';

const pass = (mode: CalibrationPass['mode'], concurrency: number, extra: Partial<CalibrationPass> = {}): CalibrationPass => ({
  mode,
  concurrency,
  gapMs: 10,
  offeredEventsPerSec: 1000,
  eventsPerSec: 1000,
  events: 5000,
  failed: 0,
  stampErrorP50Ms: 0.2,
  stampErrorP99Ms: 0.8,
  stampErrorMaxMs: 2,
  eventLoopDelayP99Ms: 3,
  clientCpuPercent: 40,
  serverCpuPercent: 30,
  seconds: 5,
  keptUp: true,
  ...extra,
});
const cal = (extra: Partial<ClientCalibration>): Omit<ClientCalibration, 'verdict'> => ({
  passes: [pass('paced', 1), pass('paced', 128, { eventLoopDelayP99Ms: 7.5 }), pass('flat-out', 16, { eventsPerSec: 9000 })],
  ceilingEventsPerSec: 9000,
  ok: true,
  stampLimitMs: 2,
  clockOffsetMs: 0,
  startupSeconds: 1,
  wallSeconds: 6,
  cores: 2,
  loadAverage1m: 1,
  serverPid: 1,
  keptUpTo: { concurrency: 128, eventsPerSec: 12_800, stampErrorP99Ms: 0.8 },
  ...extra,
});

describe('story-00: client calibration sentences', () => {
  it('kept up: the ceiling, the trust sentence and the worst event-loop delay', () => {
    const s = calibrationSentences(cal({}));
    expect(s[0]).toContain('客户端上限');
    expect(s[1]).toContain('可以相信');
    expect(s[s.length - 1]).toContain('7.5 ms');
    expect(s.join('')).not.toContain('机器当时很忙');
  });

  it('fell behind on a busy machine: says so, blames the other programs when the client was idle', () => {
    const s = calibrationSentences(
      cal({
        ok: false,
        keptUpTo: undefined,
        fellBehindAt: { concurrency: 128, eventsPerSec: 12_800, stampErrorP99Ms: 9 },
        loadAverage1m: 5,
      }),
    );
    expect(s.join('')).toContain('跟不上');
    expect(s.join('')).toContain('别的程序抢走了 CPU');
    expect(s.join('')).toContain('机器当时很忙');
  });
});
