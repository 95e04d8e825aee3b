/**
 * Intended send times (pure). Offsets are ms from the moment the schedule starts.
 *
 * Open-loop arrivals follow `vllm bench serve` (`get_request`): gaps are drawn as
 * `gamma(shape = burstiness, scale = 1/(rate·burstiness))` (burstiness 1 = Poisson,
 * Infinity = constant 1/rate), summed, and the sums rescaled so the LAST arrival is
 * exactly N/rate. Like vLLM, the first request also waits one gap (it is not at 0).
 * Seeded with mulberry32, so a seed repeats exactly here (not numpy's numbers).
 *
 * A closed loop has no schedule: a request is intended to go "when a slot frees".
 * `closedLoopStarts` models that for a known service time, for teaching and tests.
 */

import { randGamma, seededRng } from '../rng';
import type { LoadShape } from './shapes';

function checkCount(n: number): void {
  if (!Number.isInteger(n) || n < 0) throw new TypeError(`request count must be an integer ≥ 0, got ${n}`);
}

/** N zeros: every request at t = 0. */
export function burstOffsets(n: number): number[] {
  checkCount(n);
  return new Array<number>(n).fill(0);
}

/**
 * Open-loop offsets in ms for `n` requests at `rate` requests/s.
 * @param burstiness gamma shape; default 1 (Poisson); Infinity = constant gaps.
 * @param seed default 0.
 * @returns ascending offsets; the last equals `n / rate · 1000` exactly (to float rounding).
 */
export function openLoopOffsets(n: number, rate: number, burstiness = 1, seed = 0): number[] {
  checkCount(n);
  if (!(rate > 0)) throw new TypeError(`rate must be > 0 requests/s, got ${rate}`);
  if (!(burstiness > 0)) throw new TypeError(`burstiness must be > 0, got ${burstiness}`);
  if (n === 0) return [];
  if (rate === Infinity) return burstOffsets(n);
  const gapsS: number[] = new Array<number>(n);
  if (burstiness === Infinity) {
    gapsS.fill(1 / rate);
  } else {
    const rng = seededRng(seed);
    const scale = 1 / (rate * burstiness);
    for (let i = 0; i < n; i++) gapsS[i] = randGamma(rng, burstiness, scale);
  }
  const cum: number[] = new Array<number>(n);
  let acc = 0;
  for (let i = 0; i < n; i++) {
    acc += gapsS[i];
    cum[i] = acc;
  }
  // vLLM rescales so the schedule's length does not depend on the seed: last = N/rate.
  const factor = cum[n - 1] > 0 ? n / rate / cum[n - 1] : 1;
  return cum.map((s) => s * factor * 1000);
}

/** Gaps between consecutive offsets (the first gap is from 0 to the first offset). */
export function gapsOf(offsetsMs: number[]): number[] {
  return offsetsMs.map((t, i) => t - (i === 0 ? 0 : offsetsMs[i - 1]));
}

/**
 * Intended offsets (ms) for `n` requests under `shape`, or `null` for a closed loop
 * (whose send times are "when a slot frees", known only while running) and for sessions.
 * Timeline offsets are returned as given (request i at `atMs[i]`); extra requests beyond
 * the timeline are an error.
 */
export function arrivalOffsets(shape: LoadShape, n: number): number[] | null {
  checkCount(n);
  switch (shape.kind) {
    case 'closed':
      return null;
    case 'burst':
      return burstOffsets(n);
    case 'open':
      return openLoopOffsets(n, shape.rate, shape.burstiness ?? 1, shape.seed ?? 0);
    case 'timeline':
      if (n > shape.atMs.length) {
        throw new TypeError(
          `timeline has ${shape.atMs.length} entries but ${n} requests were asked for; add entries or lower requests`,
        );
      }
      return shape.atMs.slice(0, n);
    case 'sessions':
      return null; // turn k+1 waits for turn k's answer: known only while running (session-driver.ts)
  }
}

/**
 * Model of a closed loop: when each of `n` requests is sent with `concurrency` slots if
 * request i takes `serviceMs(i)` ms. The first `concurrency` go at 0; each later one goes
 * when the earliest busy slot frees. Pure; the runner does the same with real answers.
 */
export function closedLoopStarts(n: number, concurrency: number, serviceMs: number[] | ((i: number) => number)): number[] {
  checkCount(n);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new TypeError(`concurrency must be an integer ≥ 1, got ${concurrency}`);
  }
  const service = typeof serviceMs === 'function' ? serviceMs : (i: number) => serviceMs[i];
  const freeAt: number[] = new Array<number>(Math.min(concurrency, n)).fill(0);
  const starts: number[] = [];
  for (let i = 0; i < n; i++) {
    let slot = 0;
    for (let k = 1; k < freeAt.length; k++) if (freeAt[k] < freeAt[slot]) slot = k;
    const t = freeAt[slot];
    starts.push(t);
    freeAt[slot] = t + service(i);
  }
  return starts;
}
