/**
 * One point of a sweep: its key numbers and verdict read from its run folder, and whether a saved
 * folder may stand in for measuring it again. Numbers come only from the point's own run (its
 * summary and records), and its provenance (simulated or real) only from its own manifest.
 */

import { isRunComplete } from '../run/folder';
import type { LoadedRun } from '../run/loader';
import type { RunStatus } from '../run/manifest';
import { type CurrentServer, describeServer, savedServerDiffers } from '../runner/saved-point';
import { goodputOf } from '../stats/goodput';
import type { Slo } from '../types';
import { type Attainment, attainmentOf, meets } from './capacity';

/** The verdict on a point's measurement: trustworthy, or disturbed and why (from `summary.health`). */
export type PointVerdict = 'ok' | 'client-bound' | 'sim-behind' | 'client-bound+sim-behind' | 'unknown';

/** A point as `sweep.json` lists it. */
export interface SweepPoint {
  /** Folder name under the sweep folder, e.g. `c=4`, `rate=2.5`. */
  name: string;
  /** Concurrency or request rate (req/s). */
  value: number;
  /** The run's status; `pending` before its first measurement. */
  status: RunStatus | 'pending';
  /** True when a complete saved run was reused instead of measured. */
  reused: boolean;
  /** The run flags the point was measured with (no API key), compared on resume. */
  key: string;
  /** Only for measured points: */
  runId?: string;
  startedAt?: string;
  /** From the point's own manifest. */
  simulated?: boolean;
  server?: string;
  requests?: number;
  completed?: number;
  failed?: number;
  requestsPerSec?: number;
  outputTokensPerSec?: number;
  ttftP50Ms?: number;
  ttftP99Ms?: number;
  tpotP50Ms?: number;
  e2eP50Ms?: number;
  /** Good requests per second (vLLM's `request_goodput`) under the sweep's SLOs. */
  goodputPerSec?: number;
  /** Share of measured requests meeting each SLO criterion (`capacity.ts`). */
  attainment?: Attainment;
  /** Whether the point meets every SLO at the sweep's attainment. */
  meetsSlo?: boolean;
  verdict?: PointVerdict;
  /** The health warnings of the run, in plain words. */
  warnings?: string[];
}

/** The verdict from `summary.health` (`unknown` when the run has none). */
export function verdictOf(health: { clientBound: boolean; simBehind: boolean } | undefined): PointVerdict {
  if (!health) return 'unknown';
  if (health.clientBound && health.simBehind) return 'client-bound+sim-behind';
  if (health.clientBound) return 'client-bound';
  return health.simBehind ? 'sim-behind' : 'ok';
}

/**
 * The point's numbers from its loaded run. Goodput and attainment are recomputed from the records
 * with the sweep's `slo` (so a resumed sweep with other `--goodput` values judges saved points anew).
 */
export function pointFromRun(
  base: { name: string; value: number; key: string; reused: boolean },
  run: LoadedRun,
  slo: Slo | undefined,
  attainment: number,
): SweepPoint {
  const s = run.summary;
  const m = run.damaged ? undefined : run.manifest;
  const p: SweepPoint = { ...base, status: m?.status ?? 'failed' };
  if (m) {
    p.runId = m.runId;
    p.startedAt = m.startedAt;
    p.simulated = m.target.simulated;
    p.server = describeServer(m.target);
  }
  if (!s) return p;
  Object.assign(p, {
    requests: s.requests,
    completed: s.completed,
    failed: s.failed,
    requestsPerSec: s.requestsPerSec,
    outputTokensPerSec: s.outputTokensPerSec,
    ttftP50Ms: s.ttftMs.p50,
    ttftP99Ms: s.ttftMs.p99,
    tpotP50Ms: s.tpotMs.p50,
    e2eP50Ms: s.e2eMs.p50,
    verdict: verdictOf(s.health),
    warnings: s.health?.warnings ?? [],
  });
  if (slo) {
    p.attainment = attainmentOf(run.records, slo);
    p.goodputPerSec = goodputOf(run.records, slo, s.durationS).requestsPerSec;
    p.meetsSlo = meets({ value: p.value, attainment: p.attainment }, Object.keys(p.attainment)[0], attainment);
  }
  return p;
}

/**
 * Why the folder `dir` may not stand in for the point (`''` when it may): it must hold a complete run,
 * listed in the previous `sweep.json` with the same run flags (`key`), measured by the server answering
 * now (`savedServerDiffers`: kind, simulated or not, version, model, `max_model_len`, cache config).
 */
export function reuseBlocker(
  dir: string,
  savedKey: string | undefined,
  key: string,
  run: LoadedRun | undefined,
  now: CurrentServer,
): string {
  if (!isRunComplete(dir) || !run || run.damaged || !run.summary) return 'no complete run saved';
  if (savedKey === undefined) return 'its run is not listed in sweep.json';
  if (savedKey !== key) return `it was measured with other run flags (${savedKey}; now ${key})`;
  const diffs = savedServerDiffers(run.manifest, now);
  return diffs.length > 0 ? `it was measured on ${diffs.join(', ')}` : '';
}
