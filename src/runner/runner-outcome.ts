/**
 * The end of a run: the summary of what was recorded (with the client-bound and sim-behind
 * verdicts), the manifest's `client` block, and saving both. An interrupted run is saved too:
 * its summary is written and its manifest says `'interrupted'`, so nothing measured is lost.
 */

import { writeJsonAtomic } from '../run/atomic';
import type { RunManifest } from '../run/manifest';
import type { RunWriter } from '../run/store';
import { summarizeRun } from '../stats/summary';
import type { RequestRecord, RunSummary, Slo } from '../types';
import type { TargetAuth } from '../client/url';
import type { ClientHealth, ClientHealthWatch, SimLatenessVerdict, SimLatenessWatch } from './health';
import { withStampLag } from './stamp-lag';
import { onThisMachine } from '../proc/cpu-split';
import { type CpuUser, type CpuUsers, cpuUsersSentence, watchCpuUsers } from '../proc/cpu-users';
import { workerVerdicts, type WorkersHealth } from './worker-health';

/** What the load phase of a run observed, beside its records. */
export interface RunObservations {
  clientHealth: ClientHealth;
  simLateness?: SimLatenessVerdict;
  /** How late the pacer sent each scheduled request, ms. */
  latenessMs: number[];
  /** Which processes on this machine used the CPU over the run (src/proc/cpu-users.ts); absent where unreadable. */
  cpuUsers?: CpuUsers;
}

/**
 * Start reading which processes use this machine's CPU over a run (call before the load). A simulator is
 * marked as such when it runs on this machine (a loopback URL and this boot's id in `GET /version`).
 */
export function watchRunCpuUsers(target: {
  rootUrl: string;
  probe: { simBootId?: string; simPid?: number };
}): ReturnType<typeof watchCpuUsers> {
  const { simBootId, simPid } = target.probe;
  return watchCpuUsers(simPid !== undefined && onThisMachine(target.rootUrl, simBootId) ? { simulatorPid: simPid } : {});
}

/**
 * The warning that names who else used the CPU, when a verdict was flagged with a wait for a core in it: the
 * client's stall blamed other processes, or the late steps of a simulator on this machine waited for a core (a
 * simulator elsewhere shares no CPU with the processes read here). The flagged side is left out of the list (its
 * own verdict describes it). Pure.
 */
export function cpuUsersWarning(seen: RunObservations): string | undefined {
  const client = seen.clientHealth.clientBound && seen.clientHealth.stall?.cause === 'other-processes';
  const waited = (seen.simLateness?.cpu?.lateMs?.waitingForCpu ?? 0) > 0;
  const sim = seen.simLateness?.simBehind === true && waited && seen.cpuUsers?.simulatorPid !== undefined;
  if (!seen.cpuUsers || (!client && !sim)) return undefined;
  const exclude: Array<CpuUser['role']> = [...(client ? ['self' as const] : []), ...(sim ? ['simulator' as const] : [])];
  const besides = [client ? 'this process' : '', sim ? 'the simulator' : ''].filter(Boolean).join(' and ');
  const words = cpuUsersSentence(seen.cpuUsers, exclude, besides).trim();
  return words === '' ? undefined : `Who else used the CPU: ${words}`;
}

/**
 * What the load phase saw: the client's health (against the simulator, unless interrupted, judged on the
 * chunks' stamps against its send log, ./stamp-lag; with worker threads, each worker on its own chunks),
 * the simulator's lateness, the pacer's lateness.
 */
export async function observed(
  load: { health: ClientHealthWatch; latenessMs: number[]; workerOf?: (index: number) => number | undefined },
  records: readonly RequestRecord[],
  target: { rootUrl: string; probe: { simulated?: boolean } },
  origin: number,
  auth: TargetAuth,
  watches: { simWatch?: SimLatenessWatch; users?: ReturnType<typeof watchCpuUsers> },
  interrupted: boolean,
): Promise<RunObservations> {
  const health = load.health.stop();
  const cpuUsers = watches.users?.finish();
  // An interrupted run saves at once: no round trips for the send log (its verdict stays the loop's).
  const checkStamps = target.probe.simulated === true && !interrupted;
  return {
    clientHealth: checkStamps ? await withStampLag(health, records, target.rootUrl, origin, auth, load.workerOf) : health,
    simLateness: await watches.simWatch?.finish(),
    latenessMs: load.latenessMs,
    ...(cpuUsers ? { cpuUsers } : {}),
  };
}

const warningOf = (w: string | undefined) => (w === undefined ? [] : [w]);

/** Summary of the measured records plus the health verdicts. */
export function runSummary(records: readonly RequestRecord[], slo: Slo | undefined, seen: RunObservations): RunSummary {
  return {
    ...summarizeRun(records, slo ? { slo } : {}),
    health: {
      clientBound: seen.clientHealth.clientBound,
      simBehind: seen.simLateness?.simBehind ?? false,
      warnings: [...seen.clientHealth.reasons, ...(seen.simLateness?.reasons ?? []), ...warningOf(cpuUsersWarning(seen))],
      ...(seen.clientHealth.stall ? { clientStall: seen.clientHealth.stall } : {}),
      ...(seen.clientHealth.stampLag ? { clientStampLag: seen.clientHealth.stampLag } : {}),
      ...('workers' in seen.clientHealth ? { workers: workerVerdicts(seen.clientHealth as WorkersHealth) } : {}),
    },
  };
}

/** The run's counts for the manifest's `client` block. */
export interface RunCounts {
  peakInFlight: number;
  connections: number;
  plannedRequests: number;
  warmup: number;
  sent: number;
  recorded: number;
  /** What the prompt-length preflight found (or why it was skipped). */
  preflight: unknown;
  /** Where the load threads ran, against a simulator on this machine (./load-cpus). */
  cpuSplit?: Record<string, unknown>;
  /** Sessions runs: conversations finished or stopped by a failed turn, turns never sent. */
  sessions?: Record<string, unknown>;
}

/**
 * The manifest patch of a finished run: the `client` block (counts, schedule lateness p50/max,
 * client health, sim lateness) and, when interrupted, a note of how far it got.
 */
export function runPatch(
  manifest: RunManifest,
  counts: RunCounts,
  seen: RunObservations,
  interrupted: boolean,
): Partial<RunManifest> {
  const sortedLate = [...seen.latenessMs].sort((a, b) => a - b);
  const patch: Partial<RunManifest> = {
    client: {
      ...(manifest.client ?? {}),
      ...counts,
      ...(sortedLate.length > 0
        ? { scheduleLatenessMs: { p50: sortedLate[sortedLate.length >> 1], max: sortedLate[sortedLate.length - 1] } }
        : {}),
      ...seen.clientHealth,
      ...(seen.simLateness ? { simLateness: seen.simLateness } : {}),
      ...(seen.cpuUsers ? { cpuUsers: seen.cpuUsers } : {}),
    },
  };
  if (interrupted) {
    patch.notes = [
      ...(manifest.notes ?? []),
      `interrupted after ${counts.sent} of ${counts.warmup + counts.plannedRequests} requests were sent`,
    ];
  }
  return patch;
}

/**
 * Save the end of a run and return its final manifest: on disk through `writer` (status
 * `'complete'`, or `'interrupted'` with its summary still written), else in memory.
 */
export function saveOutcome(
  writer: RunWriter | undefined,
  manifest: RunManifest,
  summary: RunSummary,
  patch: Partial<RunManifest>,
  status: 'complete' | 'interrupted',
): RunManifest {
  if (!writer) return { ...manifest, ...patch, status, endedAt: new Date().toISOString() };
  if (status === 'complete') writer.finish(summary, patch);
  else {
    // The store's finish() always marks 'complete'; an interrupted run still gets its summary.
    writeJsonAtomic(writer.path('summary.json'), summary);
    writer.abort('interrupted', patch);
  }
  return writer.manifest;
}
