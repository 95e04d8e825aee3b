import { describe, expect, it } from 'vitest';
import { formatStopLine } from '../src/cli/run-report';
import { formatServerLine } from '../src/cli/server-line';
import type { MetricsSample } from '../src/types';

describe('the report line of what the server reported', () => {
  it('peaks and the preemption increase, resets counted; missing fields left out, never filled in', () => {
    const samples: MetricsSample[] = [
      { tMs: 0, running: 1, waiting: 0, kvUsage: 0.1, preemptionsTotal: 5 },
      { tMs: 250, running: 8, waiting: 3, kvUsage: 0.41, preemptionsTotal: 7 },
      { tMs: 500, running: 6, kvUsage: 0.3, preemptionsTotal: 1 }, // the server restarted: counted from 0
    ];
    expect(formatServerLine(samples, false)).toBe(
      '3 /metrics samples (server, warm-up included): peak running 8, peak waiting 3, peak KV cache usage 41.0%, preemptions 3',
    );
    expect(formatServerLine([{ tMs: 0, running: 2, swapped: 1 }], true)).toBe(
      '1 /metrics samples (simulated server, warm-up included): peak running 2, peak swapped 1',
    );
    expect(formatServerLine([{ tMs: 0 }], false)).toMatch(/none of running, waiting, KV usage or preemptions reported/);
    expect(formatServerLine([], false)).toBeUndefined();
  });

  it('the stop line says what ended the issuing', () => {
    const rule = { rule: 'duration', durationMs: 60_000, deadlineMs: 60_010, inFlight: 'finish', maxRequests: 10_000 } as const;
    expect(formatStopLine({ ...rule, issued: 532, stoppedBy: 'duration' })).toBe(
      '--duration 60 s: issued 532 of at most 10000 requests (the deadline came first; requests in flight then finished and are counted)',
    );
    expect(formatStopLine({ ...rule, issued: 10_000, stoppedBy: 'count' })).toMatch(/all were issued before the deadline/);
    expect(formatStopLine(undefined)).toBeUndefined();
  });
});
