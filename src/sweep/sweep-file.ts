/**
 * `sweep.json` in the sweep folder: the plan, every point (its folder, status and key numbers), the
 * knee, the saturation point and the capacity under each SLO. Written atomically after every point,
 * so an interrupted sweep leaves a readable file and the next run of the same command resumes.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeJsonAtomic } from '../run/atomic';
import { formatGoodput } from '../stats/goodput';
import type { Slo } from '../types';
import { type Capacity, capacities } from './capacity';
import { findKnee, findSweepSaturation, type KneePoint, type Located } from './knee';
import type { SweepPlan } from './plan';
import type { SweepPoint } from './point';

/** File name of a sweep's summary in its folder. */
export const SWEEP_FILE = 'sweep.json';

/** How a sweep ended: `running` on disk after the fact means its process was killed. */
export type SweepStatus = 'running' | 'complete' | 'interrupted' | 'failed';

/** Contents of `sweep.json`, schema 1. */
export interface SweepFile {
  schema: 1;
  kind: 'loadlab-sweep';
  status: SweepStatus;
  /** ISO time of this write. */
  updatedAt: string;
  plan: SweepPlan;
  /** The run flags every point shares (API key removed), as given. */
  runFlags: string[];
  /** What the points ran against, from their own manifests: `simulated`, `real`, `mixed` or `none` yet. */
  provenance: 'simulated' | 'real' | 'mixed' | 'none';
  points: SweepPoint[];
  /**
   * The run-flags key of every point folder this sweep folder has measured, kept across runs of the
   * command (a point dropped from the list keeps its key, so adding it back reuses it).
   */
  keys: Record<string, string>;
  knee: Located & { near?: number[] };
  saturation: Located;
  /** Capacity under each SLO criterion; empty without `--goodput`. */
  capacity: Capacity[];
  /** Why the SLO search stopped (SLO search only). */
  searchEnd?: string;
  notes: string[];
}

/** The measured points with the numbers knee, saturation and capacity need. */
function usable(points: readonly SweepPoint[]): SweepPoint[] {
  return points.filter((p) => p.status === 'complete' && p.requestsPerSec !== undefined);
}

/** Provenance of the points, from their manifests only. */
export function provenanceOf(points: readonly SweepPoint[]): SweepFile['provenance'] {
  const kinds = new Set(points.filter((p) => p.simulated !== undefined).map((p) => (p.simulated ? 'simulated' : 'real')));
  if (kinds.size === 0) return 'none';
  return kinds.size > 1 ? 'mixed' : ([...kinds][0] as 'simulated' | 'real');
}

/** Knee, saturation and capacities of the complete points (`gainBelow` default 0.1). */
export function analyseSweep(
  points: readonly SweepPoint[],
  slo: Slo | undefined,
  attainment: number,
  gainBelow = 0.1,
): Pick<SweepFile, 'knee' | 'saturation' | 'capacity'> {
  const ps = usable(points);
  const kp: KneePoint[] = ps.map((p) => ({
    value: p.value,
    requestsPerSec: p.requestsPerSec!,
    outputTokensPerSec: p.outputTokensPerSec ?? NaN,
    e2eP50Ms: p.e2eP50Ms ?? NaN,
  }));
  const cap = slo
    ? capacities(
        ps.map((p) => ({ value: p.value, attainment: p.attainment ?? {} })),
        slo,
        attainment,
      )
    : [];
  return { knee: findKnee(kp), saturation: findSweepSaturation(kp, gainBelow), capacity: cap };
}

/** A complete `sweep.json` from the plan and the points so far. */
export function sweepFile(
  plan: SweepPlan,
  runFlags: string[],
  points: SweepPoint[],
  status: SweepStatus,
  extra: { searchEnd?: string; notes?: string[]; keys?: Record<string, string> } = {},
): SweepFile {
  const slo = plan.slo;
  const notes = [...(extra.notes ?? [])];
  if (slo) notes.push(`a point meets the SLOs when ≥ ${plan.attainment * 100} % of its requests meet ${formatGoodput(slo)}`);
  return {
    schema: 1,
    kind: 'loadlab-sweep',
    status,
    updatedAt: new Date().toISOString(),
    plan,
    runFlags,
    provenance: provenanceOf(points),
    points,
    keys: { ...extra.keys, ...Object.fromEntries(points.map((p) => [p.name, p.key])) },
    ...analyseSweep(points, slo, plan.attainment),
    ...(extra.searchEnd ? { searchEnd: extra.searchEnd } : {}),
    notes,
  };
}

/** Write `sweep.json` into `dir` atomically. */
export function writeSweepFile(dir: string, file: SweepFile): void {
  writeJsonAtomic(path.join(dir, SWEEP_FILE), file);
}

/** The `sweep.json` of `dir`, undefined when there is none; a broken one is reported in `problem`. */
export function readSweepFile(dir: string): { file?: SweepFile; problem?: string } {
  const f = path.join(dir, SWEEP_FILE);
  if (!fs.existsSync(f)) return {};
  try {
    const v = JSON.parse(fs.readFileSync(f, 'utf8')) as SweepFile;
    if (v?.kind !== 'loadlab-sweep' || !Array.isArray(v.points) || typeof v.keys !== 'object')
      return { problem: `${f} is not a LoadLab sweep file` };
    return { file: v };
  } catch (err) {
    return { problem: `${f} could not be read (${(err as Error).message})` };
  }
}

/** A sweep folder or point folder the sweep must not touch; the message names the fix (the CLI exits 2). */
export class SweepFolderError extends Error {}

/**
 * Check that `dir` can hold a sweep: missing, empty, or holding a sweep (`sweep.json`, point folders).
 * Throws naming the fix for a file, a run folder, or a folder of other files (nothing is touched).
 */
export function checkSweepDir(dir: string): void {
  if (!fs.existsSync(dir)) return;
  if (!fs.statSync(dir).isDirectory())
    throw new SweepFolderError(`${dir} is a file; give the sweep a folder path, e.g. ${dir}-sweep`);
  const entries = fs.readdirSync(dir);
  if (entries.includes('manifest.json')) {
    throw new SweepFolderError(`${dir} holds a single run (manifest.json), not a sweep; choose a new folder for the sweep`);
  }
  if (entries.length > 0 && !entries.includes(SWEEP_FILE)) {
    const points = entries.filter((e) => /^(c|rate)=/.test(e));
    if (points.length !== entries.length) {
      throw new SweepFolderError(
        `${dir} is not empty and holds no sweep (${entries.slice(0, 5).join(', ')}); choose a new or empty folder`,
      );
    }
  }
}
