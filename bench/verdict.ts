/**
 * A target judged over rounds, with a margin. One pass of a yardstick moves by ±15–20 % on a shared 2-core VM
 * (bench/README.md §17), so "the median round is under the limit" is a coin flip when the limit sits inside the
 * rounds' spread. The verdict here says so: it takes the distribution-free confidence interval for the median from
 * the rounds' order statistics, and calls a target met only when the whole interval is on the good side of its
 * limit, missed only when the whole interval is on the bad side, and otherwise says the data cannot decide.
 *
 * The interval [x₍ₖ₎, x₍ₙ₊₁₋ₖ₎] of n sorted rounds covers the true median with probability
 * 1 − 2·P(B ≤ k − 1), B ~ Binomial(n, ½), for independent rounds of a continuous distribution (the sign-test
 * interval for the median; Hollander, Wolfe and Chicken, *Nonparametric Statistical Methods*, chapter 3). Five
 * rounds give [min, max] at 93.8 %; eight give [x₍₂₎, x₍₇₎] at 93.0 %, so one stray round on either side no longer
 * widens it (the yardsticks take eight); three give [min, max] at only 75 %, and the text says so. Rounds taken in turn
 * on one machine are not strictly independent (the load drifts); the yardsticks rotate or alternate what they run
 * for that reason.
 */

import { percentile } from '../src/stats/percentile';

/** What a target's rounds say. */
export type Verdict = 'met' | 'missed' | 'undecided';

/** The rounds' median, its interval and the verdict against a limit. */
export interface RoundsJudgement {
  verdict: Verdict;
  /** The median round (numpy's linear rule). */
  median: number;
  /** The interval for the median: the k-th smallest and k-th largest round. */
  lo: number;
  hi: number;
  /** Probability that such an interval covers the true median (0 for one round). */
  coverage: number;
  /** Rounds judged (NaN rounds left out). */
  n: number;
}

/** P(B ≤ j) for B ~ Binomial(n, ½). */
function binomCdfHalf(n: number, j: number): number {
  let term = 0.5 ** n; // C(n, 0) / 2^n
  let sum = 0;
  for (let i = 0; i <= j && i <= n; i++) {
    sum += term;
    term = (term * (n - i)) / (i + 1);
  }
  return sum;
}

/**
 * The sign-test interval for the median of `xs`: the narrowest [x₍ₖ₎, x₍ₙ₊₁₋ₖ₎] whose coverage is at least `level`
 * (default 0.9), or [min, max] with its own (lower) coverage when there are too few rounds for `level`.
 */
export function medianInterval(xs: readonly number[], level = 0.9): { lo: number; hi: number; coverage: number } {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  const n = s.length;
  if (n === 0) return { lo: NaN, hi: NaN, coverage: 0 };
  let k = 1;
  while (k + 1 <= n + 1 - (k + 1) && 1 - 2 * binomCdfHalf(n, k) >= level) k++;
  const coverage = n === 1 ? 0 : 1 - 2 * binomCdfHalf(n, k - 1);
  return { lo: s[k - 1], hi: s[n - k], coverage };
}

/**
 * Judges rounds against `limit`: `better` 'lower' means the target is "≤ limit", 'higher' "≥ limit". Met when the
 * median's interval lies wholly on the good side (the limit itself counts as good), missed when it lies wholly on
 * the bad side, undecided otherwise, and always undecided from one round.
 */
export function judgeRounds(xs: readonly number[], limit: number, better: 'lower' | 'higher', level = 0.9): RoundsJudgement {
  const kept = xs.filter((x) => !Number.isNaN(x));
  const { lo, hi, coverage } = medianInterval(kept, level);
  const n = kept.length;
  const good = (x: number) => (better === 'lower' ? x <= limit : x >= limit);
  let verdict: Verdict = 'undecided';
  if (n >= 2 && good(lo) && good(hi)) verdict = 'met';
  else if (n >= 2 && !good(lo) && !good(hi)) verdict = 'missed';
  return { verdict, median: percentile(kept, 50), lo, hi, coverage, n };
}

/** Significant digits for a printed figure (3, enough for the rounds' ±15 %). */
const fig = (x: number) => (Number.isFinite(x) ? Number(x.toPrecision(3)) : x);

/**
 * The judgement in words, for a target line, e.g. `median 1.36× (5 rounds; 93.8 % interval for the median 1.12× to
 * 1.54×: it straddles 1.2×, so the rounds cannot decide)`. `unit` follows each figure (e.g. `×`, ` ms`); `rounds` is
 * what the samples are called (default `rounds`).
 */
export function judgementText(j: RoundsJudgement, limit: number, unit = '', rounds = 'rounds'): string {
  const u = (x: number) => `${fig(x)}${unit}`;
  if (j.n < 2) return `${u(j.median)} (one ${rounds.replace(/s$/, '')}: no interval, so it cannot decide against ${u(limit)})`;
  const pct = Math.round(j.coverage * 1000) / 10;
  const say =
    j.verdict === 'met'
      ? `all of it within ${u(limit)}`
      : j.verdict === 'missed'
        ? `all of it beyond ${u(limit)}`
        : `it straddles ${u(limit)}, so the rounds cannot decide`;
  return `median ${u(j.median)} (${j.n} ${rounds}; ${pct} % interval for the median ${u(j.lo)} to ${u(j.hi)}: ${say})`;
}

/** The word `npm run bench` prints before a target, padded to one width. */
export const VERDICT_WORD: Readonly<Record<Verdict, string>> = {
  met: 'MET      ',
  missed: 'MISSED   ',
  undecided: 'UNDECIDED',
};

/** The last line of `npm run bench`: how many targets were missed and how many the rounds could not decide. */
export function verdictSummary(missed: number, undecided: number): string {
  if (missed === 0 && undecided === 0) return 'all targets met';
  const parts = [
    ...(missed > 0 ? [`${missed} target(s) missed`] : []),
    ...(undecided > 0
      ? [`${undecided} the rounds cannot decide (one round, or their median's interval straddles the limit)`]
      : []),
  ];
  return `${parts.join('; ')} (see above and bench/README.md)`;
}
