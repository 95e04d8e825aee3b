/**
 * Which processes used this machine's CPU over a run (src/proc/cpu-users.ts): the stat parser, the
 * difference of two readings, the words, the run's warning, and a real run beside a busy process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CpuReading,
  cpuUsersBetween,
  cpuUsersSentence,
  parseProcStat,
  readCpuUsers,
  TOP_USERS,
} from '../src/proc/cpu-users';
import { cpuUsersWarning, type RunObservations, watchRunCpuUsers } from '../src/runner/runner-outcome';
import { bootId } from '../src/proc/cpu-split';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import type { CpuUsers } from '../src/proc/cpu-users';
import { spawnScriptedServer, type ScriptedServer } from './helpers/sse-server';

const linux = process.platform === 'linux';

/** A stat line: pid, (comm), state, then fields 4–15 with `flags` (9), `utime` (14) and `stime` (15). */
const stat = (pid: number, comm: string, flags: number, utime: number, stime: number) =>
  `${pid} (${comm}) S 1 1 1 0 -1 ${flags} 0 0 0 0 ${utime} ${stime} 0 0 20 0 1 0 100 0 0\n`;

describe('parseProcStat', () => {
  it('reads the name between the first ( and the last ), the kernel-thread flag, the CPU in ms and the start', () => {
    expect(parseProcStat(stat(84, 'kdamond.0', 0x00208040, 0, 30522))).toEqual({
      comm: 'kdamond.0',
      cpuMs: 305220,
      kernelThread: true,
      startedS: 1,
    });
    expect(parseProcStat(stat(7, 'a b) (c', 0x00400100, 12, 3))).toEqual({
      comm: 'a b) (c',
      cpuMs: 150,
      kernelThread: false,
      startedS: 1,
    });
  });
  it('gives undefined for what is not a stat line', () => {
    expect(parseProcStat('')).toBeUndefined();
    expect(parseProcStat('12 (x) S 1')).toBeUndefined();
  });
});

const reading = (rows: Array<[number, string, number, boolean?]>): CpuReading =>
  new Map(rows.map(([pid, comm, cpuMs, k]) => [pid, { comm, cpuMs, kernelThread: k === true }]));

describe('cpuUsersBetween', () => {
  const before = reading([
    [1, 'init', 1000],
    [84, 'kdamond.0', 5000, true],
    [200, 'node', 100],
    [300, 'node', 50],
    [400, 'python3', 10],
  ]);
  const after = reading([
    [1, 'init', 1000],
    [84, 'kdamond.0', 5210, true],
    [200, 'node', 900],
    [300, 'node', 350],
    [400, 'python3', 60],
    [500, 'sh', 20], // started during the interval: all of its CPU counts
  ]);
  const names: Record<number, string> = { 200: 'node loadlab.js', 300: 'node main.ts', 400: 'python3 jupyter-lab', 500: 'sh' };
  const u = cpuUsersBetween(before, after, 2345.6, { selfPid: 200, simulatorPid: 300, name: (pid) => names[pid] });

  it('ranks each process by the CPU it used in between, names it, and marks this process, the simulator and kernel threads', () => {
    expect(u).toEqual({
      simulatorPid: 300,
      wallMs: 2346,
      totalMs: 800 + 300 + 210 + 50 + 20,
      top: [
        { pid: 200, name: 'node loadlab.js', cpuMs: 800, role: 'self' },
        { pid: 300, name: 'node main.ts', cpuMs: 300, role: 'simulator' },
        { pid: 84, name: 'kdamond.0', cpuMs: 210, kernelThread: true },
        { pid: 400, name: 'python3 jupyter-lab', cpuMs: 50 },
        { pid: 500, name: 'sh', cpuMs: 20 },
      ],
    });
  });
  it(`keeps at most ${TOP_USERS}, and none that used nothing`, () => {
    const many = reading(Array.from({ length: 20 }, (_, i) => [i + 1, `p${i}`, 10 * (i + 1)] as [number, string, number]));
    const none = reading(
      Array.from({ length: 20 }, (_, i) => [i + 1, `p${i}`, i < 10 ? 10 * (i + 1) : 0] as [number, string, number]),
    );
    const top = cpuUsersBetween(none, many, 1000, { name: () => undefined }).top;
    expect(top.map((x) => x.pid)).toEqual([20, 19, 18, 17, 16, 15]);
    expect(cpuUsersBetween(many, many, 1000).top).toEqual([]);
  });
  it('says who else used the CPU, leaving out the roles asked', () => {
    expect(cpuUsersSentence(u, ['self'], 'this process')).toBe(
      " Over the run's 2.35 s, the processes on this machine besides this process used 0.58 s of CPU (25 % of one core); " +
        'the most went to the simulator (pid 300) 0.30 s, ' +
        'kdamond.0 (a kernel thread) 0.21 s, python3 jupyter-lab (pid 400) 0.05 s.',
    );
    expect(cpuUsersSentence(u, ['simulator'], 'the simulator')).toContain(
      'used 1.08 s of CPU (46 % of one core); the most went to this process (pid 200) 0.80 s, kdamond.0',
    );
    expect(cpuUsersSentence(undefined, [], '')).toBe('');
    expect(cpuUsersSentence({ wallMs: 1, totalMs: 0, top: [] }, [], '')).toBe('');
  });
});

describe('cpuUsersWarning', () => {
  const users: CpuUsers = {
    simulatorPid: 11,
    wallMs: 2900,
    totalMs: 900,
    top: [
      { pid: 10, name: 'node loadlab.js', cpuMs: 500, role: 'self' },
      { pid: 11, name: 'node main.ts', cpuMs: 300, role: 'simulator' },
      { pid: 84, name: 'kdamond.0', cpuMs: 40, kernelThread: true },
    ],
  };
  const health = { clientBound: false, reasons: [] } as unknown as RunObservations['clientHealth'];
  const sim = (waitingForCpu: number) =>
    ({
      p99Ms: 3.7,
      simBehind: true,
      reasons: ['x'],
      cpu: { wallMs: 2900, lateMs: { waitingForCpu, other: 1 } },
    }) as RunObservations['simLateness'];

  it("names the others when the simulator's late steps waited for a core, this process among them", () => {
    const w = cpuUsersWarning({ clientHealth: health, simLateness: sim(11), latenessMs: [], cpuUsers: users });
    expect(w).toBe(
      "Who else used the CPU: Over the run's 2.90 s, the processes on this machine besides the simulator used 0.60 s of CPU " +
        '(21 % of one core); the most went to ' +
        'this process (pid 10) 0.50 s, kdamond.0 (a kernel thread) 0.04 s.',
    );
  });
  it("leaves this process out when the client's loop was late for other processes", () => {
    const bound = { ...health, clientBound: true, stall: { cause: 'other-processes' } } as RunObservations['clientHealth'];
    const w = cpuUsersWarning({ clientHealth: bound, latenessMs: [], cpuUsers: users });
    expect(w).toContain(
      'besides this process used 0.40 s of CPU (14 % of one core); the most went to the simulator (pid 11) 0.30 s',
    );
    const both = cpuUsersWarning({ clientHealth: bound, simLateness: sim(1), latenessMs: [], cpuUsers: users });
    expect(both).toContain(
      'besides this process and the simulator used 0.10 s of CPU (3 % of one core); the most went to kdamond.0',
    );
  });
  it('says nothing when no verdict waited for a core, or without a reading', () => {
    expect(cpuUsersWarning({ clientHealth: health, simLateness: sim(0), latenessMs: [], cpuUsers: users })).toBeUndefined();
    expect(cpuUsersWarning({ clientHealth: health, simLateness: sim(11), latenessMs: [] })).toBeUndefined();
    // A simulator on another machine shares no CPU with the processes read here.
    const { simulatorPid: _, ...elsewhere } = users;
    const remote = { ...elsewhere, top: users.top.filter((x) => x.role !== 'simulator') };
    expect(cpuUsersWarning({ clientHealth: health, simLateness: sim(11), latenessMs: [], cpuUsers: remote })).toBeUndefined();
    const own = { ...health, clientBound: true, stall: { cause: 'own-cpu' } } as RunObservations['clientHealth'];
    expect(cpuUsersWarning({ clientHealth: own, latenessMs: [], cpuUsers: users })).toBeUndefined();
  });
});

describe.runIf(linux)('on this machine', () => {
  let server: ScriptedServer;
  let busy: ChildProcess | undefined;
  beforeAll(async () => {
    server = await spawnScriptedServer({ gapMs: 20, tokens: 30 });
  });
  afterAll(async () => {
    busy?.kill('SIGKILL');
    await server?.close();
  });

  it('reads every process, this one and pid 1 among them', () => {
    const r = readCpuUsers();
    expect(r?.get(process.pid)?.kernelThread).toBe(false);
    expect(r?.has(1)).toBe(true);
  });
  it('marks a simulator on this machine by the pid and boot id it gives, and nothing elsewhere', async () => {
    const sim = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    try {
      const here = { simPid: sim.pid, simBootId: bootId() };
      const watches = [
        watchRunCpuUsers({ rootUrl: 'http://127.0.0.1:1', probe: here }),
        watchRunCpuUsers({ rootUrl: 'http://127.0.0.1:1', probe: { ...here, simBootId: 'another machine' } }),
        watchRunCpuUsers({ rootUrl: 'http://10.0.0.9:8000', probe: here }),
      ];
      await new Promise((r) => setTimeout(r, 500));
      const [local, other, remote] = watches.map((w) => w?.finish()?.top.find((x) => x.pid === sim.pid));
      expect(local).toMatchObject({ role: 'simulator', name: expect.stringMatching(/^node/) });
      expect([other?.role, remote?.role]).toEqual([undefined, undefined]);
      expect(other?.cpuMs).toBeGreaterThan(0);
    } finally {
      sim.kill('SIGKILL');
    }
  });
  it("records a busy process that ran beside a run in the manifest's client block, by pid and program", async () => {
    busy = spawn(process.execPath, ['-e', 'for (;;) {}', 'loadlab-busy-test'], { stdio: 'ignore' });
    const r = await runLoad({
      baseUrl: server.url,
      workload: [makeRequest('hi', { maxTokens: 30 })],
      requests: 8,
      shape: closedLoop(4),
      out: false,
      progress: false,
    });
    busy.kill('SIGKILL');
    const users = r.manifest.client?.cpuUsers as CpuUsers;
    expect(users.wallMs).toBeGreaterThan(0);
    const it = users.top.find((x) => x.pid === busy?.pid);
    expect(it).toMatchObject({ name: expect.stringMatching(/^node/) });
    expect(it?.cpuMs).toBeGreaterThan(0);
    expect(users.totalMs).toBeGreaterThanOrEqual(it?.cpuMs ?? 0);
  });
});
