/**
 * The profile file a calibration writes (format `loadlab-sim-profile/1`, status `calibrated`): the
 * prior's GPU and model sections unchanged, the fitted perf values, and a `calibration` block with
 * what it ran against, one residual per observation, a 95 % interval per identified parameter and
 * the list of parameters it could not identify.
 */
import { basename } from 'node:path';
import type { LoadedProfile } from '../sim/engine/profile-file';
import { parseProfileDocument } from '../sim/engine/profile-schema';
import type { CalibrationResult } from './calibration';
import type { FittedParam } from './least-squares';
import { predictObservation } from './step-model';

/** A file stem usable as a profile id: lower case, `[a-z0-9._-]`. */
export function profileIdFor(file: string): string {
  const stem = basename(file)
    .replace(/\.json$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '');
  return stem || 'calibrated';
}

const fmt = (v: number) => Number(v.toPrecision(6));

function perfEntry(p: FittedParam, unit: string, prior: { source: string; note: string }, r: CalibrationResult) {
  const where = r.target.simulated
    ? 'a LoadLab simulator'
    : r.target.serverVersion
      ? `vLLM ${r.target.serverVersion}`
      : 'the server';
  if (p.identified) {
    let value = p.value;
    let capped = '';
    if (unit === 'fraction' && value > 1) {
      capped = ` The fit gave ${fmt(value)} > 1, capped at 1 (the format's limit): the model's bytes or the GPU's bandwidth are likely overstated.`;
      value = 1;
    }
    return {
      value: fmt(value),
      unit,
      source: 'fit',
      note: `loadlab calibrate against ${where} (${r.startedAt}): 95 % interval [${fmt(p.low!)}, ${fmt(p.high!)}] ${unit}.${capped}`,
    };
  }
  const moved = Math.abs(p.value / p.prior - 1) > 1e-6;
  const value = unit === 'fraction' ? Math.min(1, p.value) : p.value;
  return {
    value: fmt(value),
    unit,
    source: prior.source,
    note:
      `NOT IDENTIFIED by loadlab calibrate (${p.reason}); prior ${fmt(p.prior)} (${prior.source}: ${prior.note})` +
      (moved
        ? `, moved only along the parameter combination the probes did fix, so the sum of its terms is fitted but this value alone is not a measurement`
        : ''),
  };
}

/**
 * The calibrated profile document for `r`, started from the prior's file, checked with the profile checker.
 * @param id the new profile's id (e.g. `profileIdFor(outFile)`).
 * @throws Error when the result does not make a valid profile file (a bug: the message names the field).
 */
export function calibratedDocument(r: CalibrationResult, priorFile: LoadedProfile, id: string): Record<string, unknown> {
  const doc = JSON.parse(priorFile.text) as Record<string, unknown>;
  const perf = doc.perf as Record<string, { value: number; unit: string; source: string; note: string }>;
  const intervals: Record<string, { low: number; high: number; level: number }> = {};
  for (const p of r.params) {
    perf[p.name] = perfEntry(p, perf[p.name].unit, perf[p.name], r);
    if (p.identified && p.low !== undefined && p.high !== undefined)
      intervals[p.name] = { low: fmt(p.low), high: fmt(p.high), level: 0.95 };
  }
  const fitted = r.fit.profile;
  const residuals = r.observations.map((o, i) => ({
    probe: o.probe,
    quantity: o.quantity,
    source: o.source,
    samples: o.samples,
    measuredMs: fmt(o.ms),
    modelMs: fmt(predictObservation(o, fitted)),
    relative: fmt(r.fit.residuals[i]),
  }));
  const label = r.target.simulated
    ? 'a LoadLab SIMULATOR (a fit to a simulator, not to a GPU)'
    : `${r.target.model} at ${r.target.baseUrl}`;
  const out = {
    ...doc,
    id,
    status: 'calibrated',
    description: `Calibrated by loadlab calibrate against ${label}, starting from ${priorFile.profile.id}.`,
    notes: [
      `Fitted ${r.startedAt} in ${r.wallSeconds.toFixed(0)} s from ${r.observations.length} observations (${r.target.measuredFrom}); rms relative residual ${(100 * r.fit.rmsRelative).toFixed(2)} %.`,
      r.fit.method,
      `Not identified (kept at the prior or moved only along a fitted combination): ${r.notIdentified.join(', ') || 'none'}.`,
      `GPU and model sections are the prior's (${priorFile.profile.id}); the fit moves only perf numbers.`,
    ],
    calibration: {
      against: {
        ...r.target,
        prior: priorFile.profile.id,
        probes: r.plan.map((p) => p.name),
        wallSeconds: fmt(r.wallSeconds),
        startedAt: r.startedAt,
      },
      residuals,
      intervals,
      notIdentified: r.notIdentified,
    },
  };
  parseProfileDocument(out, `calibrated profile ${id}`);
  return out;
}
