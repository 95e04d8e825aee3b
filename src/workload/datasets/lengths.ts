/**
 * Token-length distributions for synthetic datasets (random, prefix repetition): fixed, uniform,
 * normal and lognormal, all drawn from a seeded RNG and rounded to integers ≥ 1.
 *
 * `uniformAround(len, ratio)` is vLLM's `--random-range-ratio`: an integer uniform on
 * [floor(len·(1−r)), ceil(len·(1+r))] (`RandomDataset.get_sampling_params`,
 * vllm/benchmarks/datasets/random.py). vLLM also subtracts the tokenizer's special tokens from the
 * input length; Qwen2.5's tokenizer adds none, so nothing is subtracted here.
 */

import { randInt, randNormal, type Rng } from '../../rng';

/** A length distribution, in tokens. Every draw is rounded and clamped to ≥ 1. */
export type LengthDist =
  | { kind: 'fixed'; value: number }
  | { kind: 'uniform'; min: number; max: number }
  | { kind: 'normal'; mean: number; std: number }
  /** Lognormal with the given mean and standard deviation OF THE LENGTHS (not of their logarithm). */
  | { kind: 'lognormal'; mean: number; std: number };

/**
 * vLLM's `--random-range-ratio` r around `len`: uniform integers on [floor(len·(1−r)), ceil(len·(1+r))],
 * the lower end at least 1 (as vLLM does for output lengths). r = 0 is a fixed length.
 * @throws RangeError unless 0 ≤ r < 1 and len is an integer ≥ 1.
 */
export function uniformAround(len: number, ratio = 0): LengthDist {
  if (!Number.isInteger(len) || len < 1) throw new RangeError(`length must be an integer ≥ 1 token, got ${len}`);
  if (!(ratio >= 0 && ratio < 1))
    throw new RangeError(`range ratio must be in [0, 1) (vLLM's --random-range-ratio), got ${ratio}`);
  if (ratio === 0) return { kind: 'fixed', value: len };
  return { kind: 'uniform', min: Math.max(1, Math.floor(len * (1 - ratio))), max: Math.ceil(len * (1 + ratio)) };
}

/** Throws a RangeError naming the field unless `d` is a valid distribution. */
export function checkLengthDist(d: LengthDist, name = 'length'): void {
  const pos = (x: number, field: string): void => {
    if (!(typeof x === 'number' && Number.isFinite(x) && x > 0)) {
      throw new RangeError(`${name}.${field} must be a number > 0 tokens, got ${String(x)}`);
    }
  };
  switch (d?.kind) {
    case 'fixed':
      pos(d.value, 'value');
      return;
    case 'uniform':
      pos(d.min, 'min');
      pos(d.max, 'max');
      if (d.min > d.max) throw new RangeError(`${name}.min (${d.min}) must be ≤ ${name}.max (${d.max})`);
      return;
    case 'normal':
    case 'lognormal':
      pos(d.mean, 'mean');
      if (!(Number.isFinite(d.std) && d.std >= 0)) throw new RangeError(`${name}.std must be a number ≥ 0, got ${String(d.std)}`);
      return;
    default:
      throw new RangeError(`${name} must be {kind: 'fixed' | 'uniform' | 'normal' | 'lognormal', ...}, got ${JSON.stringify(d)}`);
  }
}

/** One draw from `d`, rounded to an integer ≥ 1. */
export function drawLength(rng: Rng, d: LengthDist): number {
  let x: number;
  switch (d.kind) {
    case 'fixed':
      x = d.value;
      break;
    case 'uniform':
      x = randInt(rng, Math.round(d.min), Math.round(d.max));
      break;
    case 'normal':
      x = d.mean + d.std * randNormal(rng);
      break;
    case 'lognormal': {
      // Parameters of the underlying normal from the lengths' mean m and std s.
      const sigma2 = Math.log(1 + (d.std * d.std) / (d.mean * d.mean));
      const mu = Math.log(d.mean) - sigma2 / 2;
      x = Math.exp(mu + Math.sqrt(sigma2) * randNormal(rng));
      break;
    }
  }
  return Math.max(1, Math.round(x));
}

/** `n` draws from `d` (see `drawLength`). */
export function drawLengths(rng: Rng, d: LengthDist, n: number): number[] {
  checkLengthDist(d);
  return Array.from({ length: n }, () => drawLength(rng, d));
}
