/**
 * Seeded pseudo-random numbers, so workloads, arrivals, bootstrap intervals and the
 * simulator's output text repeat exactly for the same seed.
 */

/** A source of uniform numbers in [0, 1). */
export type Rng = () => number;

/** mulberry32: small, fast, good enough for workloads and resampling (not for crypto). */
export function seededRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Integer in [lo, hi] inclusive. */
export function randInt(rng: Rng, lo: number, hi: number): number {
  return lo + Math.floor(rng() * (hi - lo + 1));
}

/** Exponential with the given mean. */
export function randExp(rng: Rng, mean: number): number {
  return -Math.log(1 - rng()) * mean;
}

/** Standard normal (Box–Muller). */
export function randNormal(rng: Rng): number {
  const u = 1 - rng();
  const v = rng();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * Gamma(shape, scale) by Marsaglia–Tsang (shape < 1 boosted by U^(1/shape)).
 * Mean = shape·scale. vLLM's `--burstiness` is the shape.
 */
export function randGamma(rng: Rng, shape: number, scale: number): number {
  if (shape < 1) return randGamma(rng, shape + 1, scale) * (1 - rng()) ** (1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = randNormal(rng);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = 1 - rng();
    if (u < 1 - 0.0331 * x * x * x * x) return d * v * scale;
    if (Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v * scale;
  }
}
