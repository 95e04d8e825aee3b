/**
 * A profile to calibrate against when there is no GPU: a shipped profile file whose perf
 * parameters are each scaled by a seeded factor in [1 − spread, 1 + spread] (fractions capped at
 * 0.99, the file format's ceiling being 1). Started with `startSim({ profile: file })`, it is an
 * "unknown GPU" whose numbers the calibration must recover; the file says it is made up.
 */
import { randInt, seededRng } from '../rng';
import { loadProfileFile } from '../sim/engine/profile-file';
import type { Profile } from '../sim/engine/profile';
import { FIT_PARAMS } from './step-model';

/** A hidden profile: the file's JSON and the profile it parses to. */
export interface HiddenProfile {
  /** The profile file's content (format `loadlab-sim-profile/1`), ready for `JSON.stringify`. */
  document: Record<string, unknown>;
  profile: Profile;
}

/**
 * Scale `base`'s (default: the default profile) fitted perf parameters by seeded factors within ±`spread`
 * (default 0.4). Deterministic for a seed.
 * @throws Error when spread is not in [0, 0.9].
 */
export function hiddenProfile(seed: number, spread = 0.4, base?: string): HiddenProfile {
  if (!(spread >= 0 && spread <= 0.9)) throw new Error(`spread must be in [0, 0.9], got ${spread}`);
  const loaded = loadProfileFile(base);
  const doc = JSON.parse(loaded.text) as Record<string, unknown>;
  const perf = doc.perf as Record<string, { value: number; source: string; note: string }>;
  const rng = seededRng(seed);
  const values: Record<string, number> = {};
  for (const p of FIT_PARAMS) {
    const factor = 1 - spread + (2 * spread * randInt(rng, 0, 1_000_000)) / 1_000_000;
    let v = perf[p.name].value * factor;
    if (p.unit === 'fraction') v = Math.min(v, 0.99);
    values[p.name] = v;
    perf[p.name] = {
      ...perf[p.name],
      value: v,
      source: 'estimate',
      note: `hidden: ${factor.toFixed(3)} × the ${loaded.profile.id} value (seed ${seed})`,
    };
  }
  doc.id = `hidden-unknown-gpu-${seed}`;
  doc.status = 'made up, for calibration practice';
  doc.description = `A made-up "unknown GPU": ${loaded.profile.id} with every perf parameter scaled by a seeded factor within ±${100 * spread} %.`;
  doc.notes = [`Made up for calibration practice (seed ${seed}); not any real GPU's numbers.`];
  const profile: Profile = { ...loaded.profile, id: doc.id as string, perf: { ...loaded.profile.perf, ...values } };
  return { document: doc, profile };
}
