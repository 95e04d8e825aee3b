import { describe, expect, it } from 'vitest';
import { burst, closedLoop, describeShape, openLoop, timeline, validateShape, type LoadShape } from '../src/schedule/shapes';

describe('load shapes', () => {
  it('build valid shapes', () => {
    expect(closedLoop(8)).toEqual({ kind: 'closed', concurrency: 8 });
    expect(burst()).toEqual({ kind: 'burst' });
    expect(burst(128)).toEqual({ kind: 'burst', size: 128 });
    expect(openLoop(4, { burstiness: 0.5, seed: 1, maxConcurrency: 16 })).toEqual({
      kind: 'open',
      rate: 4,
      burstiness: 0.5,
      seed: 1,
      maxConcurrency: 16,
    });
    const req = { messages: [{ role: 'user' as const, content: 'hi' }] };
    expect(
      timeline([
        { atMs: 0, request: req },
        { atMs: 50, request: req },
      ]),
    ).toEqual({
      kind: 'timeline',
      atMs: [0, 50],
      requests: [req, req],
    });
  });

  it('throw messages that name the fix', () => {
    expect(() => closedLoop(0)).toThrow('concurrency must be an integer ≥ 1, got 0');
    expect(() => closedLoop(2.5)).toThrow('concurrency must be an integer ≥ 1, got 2.5');
    expect(() => burst(0)).toThrow('burst size must be an integer ≥ 1, got 0');
    expect(() => openLoop(0)).toThrow('rate must be a number of requests/s > 0');
    expect(() => openLoop(-1)).toThrow('got -1');
    expect(() => openLoop(1, { burstiness: 0 })).toThrow('burstiness must be > 0 (1 = Poisson');
    expect(() => openLoop(1, { maxConcurrency: 0 })).toThrow('maxConcurrency must be an integer ≥ 1');
    expect(() => openLoop(1, { seed: 0.5 })).toThrow('seed must be an integer');
    expect(() => timeline([])).toThrow('timeline needs at least one entry');
    expect(() => timeline([0, -5])).toThrow('timeline atMs must be finite ms ≥ 0, got -5 at entry 1');
    expect(() => validateShape({ kind: 'poisson' } as unknown as LoadShape)).toThrow(
      "unknown load shape kind \"poisson\"; use 'closed', 'burst', 'open', 'timeline' or 'sessions'",
    );
    expect(() => validateShape(undefined as unknown as LoadShape)).toThrow('shape must be a load shape');
  });

  it('describe shapes', () => {
    expect(describeShape(closedLoop(8))).toBe('closed c=8');
    expect(describeShape(openLoop(4))).toBe('open 4/s burstiness 1 seed 0');
    expect(describeShape(timeline([0, 1]))).toBe('timeline 2');
  });
});
