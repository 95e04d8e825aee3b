// The yardsticks' verdict over rounds (bench/verdict.ts): the sign-test interval for the median, pinned by hand.
import { describe, expect, it } from 'vitest';
import { judgeRounds, judgementText, medianInterval } from '../bench/verdict';

describe('medianInterval', () => {
  it('takes [min, max] of five rounds, which covers the median with 1 - 2/32', () => {
    const i = medianInterval([1.3, 1.1, 1.5, 1.2, 1.4]);
    expect(i).toEqual({ lo: 1.1, hi: 1.5, coverage: 1 - 2 / 32 });
  });

  it('narrows to the 2nd smallest and 2nd largest of nine rounds (1 - 2*(1+9)/512 >= 0.9)', () => {
    const i = medianInterval([9, 1, 8, 2, 7, 3, 6, 4, 5]);
    expect(i.lo).toBe(2);
    expect(i.hi).toBe(8);
    expect(i.coverage).toBeCloseTo(1 - 20 / 512, 12);
  });

  it('takes the 2nd smallest and 2nd largest of eight rounds, the yardsticks own (1 - 2*(1+8)/256)', () => {
    const i = medianInterval([1.33, 1.02, 0.56, 0.95, 0.87, 1.1, 1.05, 0.9]);
    expect([i.lo, i.hi]).toEqual([0.87, 1.1]);
    expect(i.coverage).toBeCloseTo(1 - 18 / 256, 12);
    expect(judgeRounds([1.33, 1.02, 0.56, 0.95, 0.87, 1.1, 1.05, 0.9], 1.2, 'lower').verdict).toBe('met');
  });

  it('keeps [min, max] of seven rounds, as [2nd, 6th] covers only 87.5 %', () => {
    const i = medianInterval([7, 6, 5, 4, 3, 2, 1]);
    expect([i.lo, i.hi]).toEqual([1, 7]);
    expect(i.coverage).toBeCloseTo(1 - 2 / 128, 12);
  });

  it('states the lower coverage of three rounds, and none for one', () => {
    expect(medianInterval([3, 1, 2]).coverage).toBe(0.75);
    expect(medianInterval([2])).toEqual({ lo: 2, hi: 2, coverage: 0 });
  });

  it('leaves out NaN rounds', () => {
    expect(medianInterval([NaN, 2, 1, 3, NaN, 5, 4])).toEqual({ lo: 1, hi: 5, coverage: 1 - 2 / 32 });
  });
});

describe('judgeRounds', () => {
  it('meets a "<= limit" target only when the whole interval is within it (the limit counts as within)', () => {
    expect(judgeRounds([1.0, 1.1, 1.2, 1.05, 1.15], 1.2, 'lower').verdict).toBe('met');
    expect(judgeRounds([1.0, 1.1, 1.21, 1.05, 1.15], 1.2, 'lower').verdict).toBe('undecided');
    expect(judgeRounds([1.3, 1.4, 1.21, 1.5, 1.35], 1.2, 'lower').verdict).toBe('missed');
  });

  it('judges a ">= limit" target the other way round', () => {
    expect(judgeRounds([2.6, 2.5, 2.9], 2.5, 'higher').verdict).toBe('met');
    expect(judgeRounds([1.6, 1.7, 1.65], 2.5, 'higher').verdict).toBe('missed');
    expect(judgeRounds([2.4, 2.6, 2.7], 2.5, 'higher').verdict).toBe('undecided');
  });

  it("never decides from one round, and gives the median by numpy's rule", () => {
    const j = judgeRounds([0.5], 1, 'lower');
    expect(j.verdict).toBe('undecided');
    expect(judgeRounds([4, 1, 3, 2], 10, 'lower').median).toBe(2.5);
  });
});

describe('judgementText', () => {
  it('names the rounds, the coverage, the interval and what it says against the limit', () => {
    const j = judgeRounds([1.54, 1.21, 1.36, 1.12, 1.43], 1.2, 'lower');
    expect(judgementText(j, 1.2, '×')).toBe(
      'median 1.36× (5 rounds; 93.8 % interval for the median 1.12× to 1.54×: it straddles 1.2×, so the rounds cannot decide)',
    );
    expect(judgementText(judgeRounds([0.7], 1, 'lower'), 1, ' ms')).toBe(
      '0.7 ms (one round: no interval, so it cannot decide against 1 ms)',
    );
  });
});
