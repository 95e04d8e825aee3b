/**
 * How well the lessons' points were measured: after `loadlab lessons`, one line per flagged point and a
 * count over all of them, read from each point's saved run (`data/<lesson>/<point>/summary.json` and
 * `manifest.json`). A point is flagged client-bound when the load generator was the bottleneck (its token
 * stamps checked against the simulator's send log, src/runner/stamp-lag.ts), and simulator-behind when the
 * simulator's engine steps ran late (src/runner/sim-lateness.ts). A teacher preparing the course on a new
 * machine reads here whether its tail figures can be trusted. Reads files only; never throws for a
 * missing or unreadable run (that point is left out).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientStall } from '../client-stall';
import { type CpuUsers, userName, usersWords } from '../proc/cpu-users';

/** One saved point's health. */
export interface PointHealth {
  /** `<lesson>/<point>`, e.g. `03-burst/burst-128`. */
  point: string;
  clientBound: boolean;
  simBehind: boolean;
  /** The client's stamp lag p99, ms (against the simulator), when known. */
  stampLagP99Ms?: number;
  /** The client's late loop ticks by cause, ms (`summary.health.clientStall.lateMs`), when recorded. */
  clientLateMs?: ClientStall['lateMs'];
  /** The simulator's step lateness p99, ms, and over how many steps, when known. */
  stepLatenessP99Ms?: number;
  steps?: number;
  /** Lateness of the simulator's steps over 1 ms late, ms in all, by cause, when known. */
  lateMs?: { waitingForCpu: number; wokenLate?: number; gc?: number; other: number };
  /** When the run started (ISO time). */
  startedAt?: string;
  /** Which processes used the machine's CPU over the run (`manifest.client.cpuUsers`), when recorded. */
  cpuUsers?: CpuUsers;
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** One point's health from its run folder; undefined without a readable summary. */
function pointHealth(dir: string, point: string): PointHealth | undefined {
  const summary = readJson(join(dir, 'summary.json'));
  if (!summary) return undefined;
  const h = (summary.health ?? {}) as {
    clientBound?: boolean;
    simBehind?: boolean;
    clientStampLag?: { p99Ms?: number };
    clientStall?: { lateMs?: ClientStall['lateMs'] };
  };
  const manifest = readJson(join(dir, 'manifest.json')) ?? {};
  const sl = ((manifest.client ?? {}) as { simLateness?: Record<string, unknown> }).simLateness ?? {};
  const late = ((sl.cpu ?? {}) as { lateMs?: PointHealth['lateMs'] }).lateMs;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  const out: PointHealth = { point, clientBound: h.clientBound === true, simBehind: h.simBehind === true };
  const lag = num(h.clientStampLag?.p99Ms);
  if (lag !== undefined) out.stampLagP99Ms = lag;
  const loop = h.clientStall?.lateMs;
  if (loop && [loop.ownCpu, loop.gc, loop.otherProcesses].every((x) => num(x) !== undefined)) out.clientLateMs = loop;
  const p99 = num(sl.p99Ms);
  if (p99 !== undefined) out.stepLatenessP99Ms = p99;
  const steps = num(sl.steps);
  if (steps !== undefined) out.steps = steps;
  if (late) out.lateMs = late;
  if (typeof manifest.startedAt === 'string') out.startedAt = manifest.startedAt;
  const users = (manifest.client as { cpuUsers?: CpuUsers } | undefined)?.cpuUsers;
  if (users && Array.isArray(users.top) && users.top.every((u) => typeof u?.name === 'string' && typeof u.cpuMs === 'number')) {
    out.cpuUsers = users;
  }
  return out;
}

/**
 * The saved points of `lessons` (folder names under `dataDir`, e.g. `03-burst`), in name order. A point is a
 * sub-folder with a `summary.json`; a lesson without a folder has none.
 */
export function lessonPointsHealth(dataDir: string, lessons: readonly string[]): PointHealth[] {
  const out: PointHealth[] = [];
  for (const lesson of lessons) {
    const dir = join(dataDir, lesson);
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isDirectory()) continue;
      const h = pointHealth(join(dir, entry.name), `${lesson}/${entry.name}`);
      if (h) out.push(h);
    }
  }
  return out;
}

const ms = (x: number) => `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms`;

/**
 * The client's late loop ticks by cause (src/runner/stall-blame.ts), e.g. "its loop's late ticks: own work
 * 1.20 ms, GC 0.00 ms, waiting in the run queue 3.40 ms, woken late 8.10 ms, other 2.00 ms"; '' when not recorded.
 */
function loopWords(l: ClientStall['lateMs'] | undefined): string {
  if (!l) return '';
  const queued = l.inRunQueue ?? 0;
  const woken = l.wokenLate ?? 0;
  const parts = [`own work ${ms(l.ownCpu)}`, `GC ${ms(l.gc)}`];
  if (l.inRunQueue !== undefined) parts.push(`waiting in the run queue ${ms(queued)}`);
  if (l.wokenLate !== undefined) parts.push(`woken late ${ms(woken)}`);
  parts.push(
    `${l.inRunQueue !== undefined || l.wokenLate !== undefined ? 'other' : 'off the CPU'} ${ms(l.otherProcesses - queued - woken)}`,
  );
  return `its loop's late ticks: ${parts.join(', ')}`;
}

/** Why a flagged point was flagged, in a few words with its figures. */
function flagWords(p: PointHealth): string {
  const parts: string[] = [];
  if (p.clientBound) {
    const why = [p.stampLagP99Ms !== undefined ? `stamp lag p99 ${ms(p.stampLagP99Ms)}` : '', loopWords(p.clientLateMs)];
    const words = why.filter(Boolean).join('; ');
    parts.push(`client-bound${words ? ` (${words})` : ''}`);
  }
  if (p.simBehind) {
    const steps = p.steps !== undefined ? ` over ${p.steps} steps` : '';
    const l = p.lateMs;
    const causes = l
      ? `; its late steps: waiting for a core ${ms(l.waitingForCpu)}${l.wokenLate !== undefined ? `, woken late ${ms(l.wokenLate)}` : ''}` +
        `${l.gc !== undefined ? `, its GC ${ms(l.gc)}` : ''}, other ${ms(l.other)}`
      : '';
    const p99 = p.stepLatenessP99Ms !== undefined ? ` (step lateness p99 ${ms(p.stepLatenessP99Ms)}${steps}${causes})` : '';
    parts.push(`simulator behind${p99}`);
  }
  // Who else held the CPU over the point: neither the notebook kernel (this process) nor its simulator.
  const others = p.cpuUsers ? usersWords(p.cpuUsers, ['self', 'simulator'], 2) : '';
  if (others !== '') parts.push(`other processes' CPU: ${others}`);
  return parts.join('; ');
}

/**
 * The lines `loadlab lessons` prints: the count over `points` (how many were measured since `sinceIso`,
 * when given, and how many were reused from earlier runs), then one line per flagged point. Pure.
 */
export function healthLines(points: readonly PointHealth[], sinceIso?: string): string[] {
  if (points.length === 0) return [];
  const clientBound = points.filter((p) => p.clientBound).length;
  const simBehind = points.filter((p) => p.simBehind).length;
  const flagged = points.filter((p) => p.clientBound || p.simBehind);
  const fresh = sinceIso === undefined ? undefined : points.filter((p) => (p.startedAt ?? '') >= sinceIso).length;
  const when = fresh === undefined ? '' : ` (${fresh} measured now, ${points.length - fresh} reused from earlier runs)`;
  const head =
    flagged.length === 0
      ? `Measurement health: ${points.length} point${points.length === 1 ? '' : 's'}${when}, none flagged.`
      : `Measurement health: ${flagged.length} of the ${points.length} points${when} flagged ` +
        `(client-bound ${clientBound}, simulator behind ${simBehind}); their tail figures (p99 ITL, TPOT) are less sure:`;
  const across = recurringOthers(flagged, points);
  return [head, ...flagged.map((p) => `  ${p.point}: ${flagWords(p)}`), ...(across ? [across] : [])];
}

/** Other processes (neither a notebook kernel nor its simulator) by name: in how many points, their CPU there in all. */
function othersByName(points: readonly PointHealth[]): Map<string, { points: number; cpuMs: number; kernelThread: boolean }> {
  const byName = new Map<string, { points: number; cpuMs: number; kernelThread: boolean }>();
  for (const p of points) {
    for (const u of p.cpuUsers?.top ?? []) {
      if (u.role !== undefined) continue;
      const seen = byName.get(u.name) ?? { points: 0, cpuMs: 0, kernelThread: u.kernelThread === true };
      byName.set(u.name, { ...seen, points: seen.points + 1, cpuMs: seen.cpuMs + u.cpuMs });
    }
  }
  return byName;
}

/**
 * Which other processes ran in two or more of the `flagged` points, most often first: in how many, their CPU there
 * in all, and in how many of `all` the points they ran (a process in every point, flagged or not, is the machine's,
 * and no more the cause of one point than of another); undefined when none did. Pure.
 */
export function recurringOthers(flagged: readonly PointHealth[], all: readonly PointHealth[]): string | undefined {
  const everywhere = othersByName(all);
  const ranked = [...othersByName(flagged)]
    .filter(([, x]) => x.points >= 2)
    .sort((a, b) => b[1].points - a[1].points || b[1].cpuMs - a[1].cpuMs);
  if (ranked.length === 0) return undefined;
  const known = all.filter((p) => p.cpuUsers).length;
  const words = ranked.slice(0, 3).map(([name, x]) => {
    const cpu = (x.cpuMs / 1000).toFixed(2);
    return `${userName({ name, kernelThread: x.kernelThread })} in ${x.points} (${cpu} s in all; in ${everywhere.get(name)?.points ?? x.points} of the ${known} points recorded)`;
  });
  return `  Other processes that ran in the flagged points (of ${flagged.length}): ${words.join(', ')}.`;
}
