/**
 * Long fault timers and the fault settings' ranges (issue #17 items 1 and 10a): a delay Node
 * cannot hold in one timer (> 2³¹−1 ms) is chained instead of firing after 1 ms, the seconds
 * settings have a stated range, and only the settings' own names are accepted.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFaults, MAX_FAULT_SECONDS, resolveFaultSettings, type FaultSettings } from '../src/sim/http/faults';
import { MAX_TIMER_MS, setLongTimeout } from '../src/sim/http/long-timer';
import type { RequestInfo } from '../src/sim/http/reply';
import { recordingReply } from './faults-harness';

const chat: RequestInfo = { method: 'POST', path: '/v1/chat/completions', headers: {} };
const DAY_MS = 24 * 3600 * 1000;

afterEach(() => {
  vi.useRealTimers();
});

describe('setLongTimeout', () => {
  it('fires a 30-day timer after 30 days, not after 1 ms, and never warns about an overflow', () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const fn = vi.fn();
      setLongTimeout(fn, 30 * DAY_MS);
      vi.advanceTimersByTime(1);
      expect(fn).not.toHaveBeenCalled();
      vi.advanceTimersByTime(MAX_TIMER_MS); // the first link of the chain ends: not yet due
      expect(fn).not.toHaveBeenCalled();
      vi.advanceTimersByTime(30 * DAY_MS - MAX_TIMER_MS - 2);
      expect(fn).not.toHaveBeenCalled();
      vi.advanceTimersByTime(2);
      expect(fn).toHaveBeenCalledTimes(1);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('TimeoutOverflowWarning');
  });

  it('can be cleared at any link of the chain, and refuses a delay that is not a finite number ≥ 0', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const fn = vi.fn();
    const t = setLongTimeout(fn, 3 * MAX_TIMER_MS);
    vi.advanceTimersByTime(MAX_TIMER_MS + 5);
    t.clear();
    t.clear();
    vi.advanceTimersByTime(3 * MAX_TIMER_MS);
    expect(fn).not.toHaveBeenCalled();
    expect(() => setLongTimeout(fn, Infinity)).toThrow('timer delay must be a finite number of ms ≥ 0, got Infinity');
    expect(() => setLongTimeout(fn, -1)).toThrow(RangeError);
  });
});

describe('fault timers', () => {
  it('exitAfterS of 3,000,000 s (34.7 days) does not kill the server at once; it does after 34.7 days', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const exit = vi.fn();
    const log = vi.fn();
    const f = createFaults({ settings: { exitAfterS: 3_000_000 }, exit, log });
    f.start();
    vi.advanceTimersByTime(MAX_TIMER_MS + 1000);
    expect(exit).not.toHaveBeenCalled();
    vi.advanceTimersByTime(3_000_000_000 - MAX_TIMER_MS);
    expect(exit).toHaveBeenCalledWith(1);
    f.close();
  });

  it('a stall of 3,000,000 s holds the stream (it used to become a 1 ms stall)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const f = createFaults({ settings: { stall: 1, stallS: 3_000_000, afterChunks: 1 } });
    const sink = recordingReply();
    const r = f.hooks.wrap!(sink, chat);
    expect(await f.hooks.intercept!(r, chat)).toBe(false);
    r.startStream();
    for (let i = 1; i <= 3; i++) r.event(`{"n":${i}}`);
    r.done();
    vi.advanceTimersByTime(10 * DAY_MS);
    const events = () => sink.calls.filter((c) => c.startsWith('event')).length;
    expect(events()).toBe(1);
    vi.advanceTimersByTime(3_000_000_000);
    expect(events()).toBe(3);
    expect(sink.calls[sink.calls.length - 1]).toBe('done');
  });
});

describe('fault setting ranges and names', () => {
  it('states the allowed range of each kind of setting', () => {
    expect(resolveFaultSettings({ exitAfterS: MAX_FAULT_SECONDS, stallS: 2_592_000 })).toMatchObject({
      exitAfterS: 31_536_000,
      stallS: 2_592_000,
    });
    expect(() => resolveFaultSettings({ exitAfterS: 31_536_001 })).toThrow(
      'fault setting exitAfterS must be seconds in [0, 31536000] (0 to 365 days), got 31536001',
    );
    expect(() => resolveFaultSettings({ slowHeadersS: 1e300 })).toThrow(/slowHeadersS must be seconds in \[0, 31536000\]/);
    expect(() => resolveFaultSettings({ afterChunks: 1e12 })).toThrow(
      'fault setting afterChunks must be an integer in [0, 10000000], got 1000000000000',
    );
    expect(() => resolveFaultSettings({ stallS: [[[1]]] } as unknown as FaultSettings)).toThrow(
      'fault setting stallS must be seconds in [0, 31536000] (0 to 365 days), got a list',
    );
  });

  it('accepts only its own setting names: not constructor, toString, hasOwnProperty or __proto__', () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf']) {
      const body = JSON.parse(`{"${name}": 1}`) as FaultSettings;
      expect(() => resolveFaultSettings(body), name).toThrow(`unknown fault setting '${name}'; known: http500, http503, reset`);
    }
  });
});
