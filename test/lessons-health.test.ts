/**
 * `lessonPointsHealth` and `healthLines` (src/cli/lessons-health.ts): the count of flagged points that
 * `loadlab lessons` prints at its end, read from saved run folders (written here as a run writes them).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { healthLines, lessonPointsHealth } from '../src/cli/lessons-health';

const root = mkdtempSync(join(tmpdir(), 'loadlab-lessons-health-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function savePoint(lesson: string, point: string, summary: unknown, manifest?: unknown): void {
  const dir = join(root, lesson, point);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'summary.json'), JSON.stringify(summary));
  if (manifest !== undefined) writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
}

savePoint(
  '03-burst',
  'burst-128',
  {
    health: {
      clientBound: true,
      simBehind: false,
      clientStampLag: { p99Ms: 5.352 },
      clientStall: { cause: 'woken-late', lateMs: { ownCpu: 1.2, gc: 0, otherProcesses: 12.5, inRunQueue: 3.4, wokenLate: 8.1 } },
    },
  },
  {
    startedAt: '2026-12-05T07:20:00.000Z',
    client: {
      simLateness: { p99Ms: 0.5, steps: 388, cpu: { lateMs: { waitingForCpu: 7.1, gc: 0, other: 0 } } },
      cpuUsers: { wallMs: 3000, totalMs: 1020, top: [{ pid: 84, name: 'kdamond.0', cpuMs: 20, kernelThread: true }] },
    },
  },
);
savePoint(
  '03-burst',
  'happy-c64',
  { health: { clientBound: false, simBehind: false } },
  { startedAt: '2026-12-04T01:00:00.000Z' },
);
savePoint(
  '04-chunked-prefill',
  'chunk512',
  { health: { clientBound: false, simBehind: true } },
  {
    startedAt: '2026-12-05T07:21:00.000Z',
    client: {
      simLateness: { p99Ms: 2.8, steps: 20, cpu: { lateMs: { waitingForCpu: 2.9, wokenLate: 1.2, gc: 0.4, other: 0 } } },
      // Who used the CPU over the point (src/proc/cpu-users.ts): the line names the largest users but the two of LoadLab.
      cpuUsers: {
        wallMs: 2900,
        totalMs: 1160,
        top: [
          { pid: 10, name: 'node tslab', cpuMs: 600, role: 'self' },
          { pid: 11, name: 'node sim/main.js', cpuMs: 480, role: 'simulator' },
          { pid: 84, name: 'kdamond.0', cpuMs: 30, kernelThread: true },
          { pid: 12, name: 'python3 nbconvert', cpuMs: 20 },
          { pid: 1, name: 'init', cpuMs: 10 },
        ],
      },
    },
  },
);
mkdirSync(join(root, '03-burst', 'charts'), { recursive: true }); // no summary: not a point
mkdirSync(join(root, '04-chunked-prefill', 'broken'), { recursive: true });
writeFileSync(join(root, '04-chunked-prefill', 'broken', 'summary.json'), '{ not json'); // unreadable: left out

describe('the lessons’ measurement health', () => {
  it('reads every saved point of the named lessons, in name order, and skips what is not a readable run', () => {
    const points = lessonPointsHealth(root, ['03-burst', '04-chunked-prefill', '05-kv-pressure']);
    expect(points.map((p) => p.point)).toEqual(['03-burst/burst-128', '03-burst/happy-c64', '04-chunked-prefill/chunk512']);
    expect(points[0]).toMatchObject({ clientBound: true, simBehind: false, stampLagP99Ms: 5.352, steps: 388 });
    expect(points[2]).toMatchObject({
      simBehind: true,
      stepLatenessP99Ms: 2.8,
      lateMs: { waitingForCpu: 2.9, wokenLate: 1.2, gc: 0.4, other: 0 },
    });
    expect(lessonPointsHealth(root, ['03-burst'])).toHaveLength(2);
  });

  it('a count, how many were measured now, and one line per flagged point with its figures', () => {
    const lines = healthLines(lessonPointsHealth(root, ['03-burst', '04-chunked-prefill']), '2026-12-05T00:00:00.000Z');
    expect(lines[0]).toBe(
      'Measurement health: 2 of the 3 points (2 measured now, 1 reused from earlier runs) flagged (client-bound 1, simulator behind 1); their tail figures (p99 ITL, TPOT) are less sure:',
    );
    expect(lines[1]).toBe(
      '  03-burst/burst-128: client-bound (stamp lag p99 5.35 ms; ' +
        "its loop's late ticks: own work 1.20 ms, GC 0.00 ms, waiting in the run queue 3.40 ms, woken late 8.10 ms, other 1.00 ms); " +
        "other processes' CPU: kdamond.0 (a kernel thread) 0.02 s",
    );
    expect(lines[2]).toBe(
      '  04-chunked-prefill/chunk512: simulator behind (step lateness p99 2.80 ms over 20 steps; its late steps: waiting for a core 2.90 ms, woken late 1.20 ms, its GC 0.40 ms, other 0.00 ms); ' +
        "other processes' CPU: kdamond.0 (a kernel thread) 0.03 s, python3 nbconvert (pid 12) 0.02 s",
    );
    // A process in more than one flagged point is the machine's, and a last line says so.
    expect(lines[3]).toBe(
      '  Other processes that ran in the flagged points (of 2): kdamond.0 (a kernel thread) in 2 (0.05 s in all; in 2 of the 2 points recorded).',
    );
    expect(lines).toHaveLength(4);
  });

  it('nothing flagged says so; no points print nothing', () => {
    expect(healthLines(lessonPointsHealth(root, ['03-burst']).filter((p) => !p.clientBound))).toEqual([
      'Measurement health: 1 point, none flagged.',
    ]);
    expect(healthLines([])).toEqual([]);
  });
});
