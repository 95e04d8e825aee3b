/**
 * The simulator and the client on separate cores (src/proc/cpu-split.ts, src/runner/load-cpus.ts):
 * the list format, the switch, a real thread pinned and released through `taskset`, and a real
 * simulator process (its engine thread pinned, `GET /version` saying where) with `runLoad` keeping
 * its load threads off that CPU, in the calling thread and in a worker thread. Linux with ≥ 2 CPUs.
 */
import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bootId,
  cpuSplitEnabled,
  formatCpuList,
  isLoopbackUrl,
  loadThreadCpus,
  parseCpuList,
  pinThisThread,
  thisThreadCpus,
} from '../src/proc/cpu-split';
import { runLoad } from '../src/runner/runner';
import { startSim, type SimHandle } from '../src/sim/start';
import { closedLoop } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';

const here = thisThreadCpus();
const canPin = here !== undefined && here.cpus.length >= 2;
const lastCpu = here ? here.cpus[here.cpus.length - 1] : -1;
const others = here ? here.cpus.filter((c) => c !== lastCpu) : [];

/** A process's main thread's allowed CPUs (its tid is its pid). */
function cpusOfPid(pid: number): number[] | undefined {
  const line = /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return line === undefined ? undefined : parseCpuList(line);
}

describe('CPU lists and the switch', () => {
  it('reads and writes Linux cpu lists', () => {
    expect(parseCpuList('0-2,5')).toEqual([0, 1, 2, 5]);
    expect(parseCpuList('3\n')).toEqual([3]);
    expect(parseCpuList('2-1')).toBeUndefined();
    expect(parseCpuList('a')).toBeUndefined();
    expect(formatCpuList([5, 0, 1, 2])).toBe('0-2,5');
    expect(formatCpuList([1])).toBe('1');
  });
  it('is on unless LOADLAB_CPU_SPLIT=0, and names the fix for anything else', () => {
    expect(cpuSplitEnabled({})).toBe(true);
    expect(cpuSplitEnabled({ LOADLAB_CPU_SPLIT: '1' })).toBe(true);
    expect(cpuSplitEnabled({ LOADLAB_CPU_SPLIT: '0' })).toBe(false);
    expect(() => cpuSplitEnabled({ LOADLAB_CPU_SPLIT: 'yes' })).toThrow(/LOADLAB_CPU_SPLIT=yes: use 1 .* or 0/);
  });
  it('pins load threads only against a simulator on this machine that said its CPU', () => {
    expect(isLoopbackUrl('http://127.0.0.1:8000')).toBe(true);
    expect(isLoopbackUrl('http://localhost:8000')).toBe(true);
    expect(isLoopbackUrl('http://[::1]:8000')).toBe(true);
    expect(isLoopbackUrl('http://10.0.0.2:8000')).toBe(false);
    const boot = bootId();
    expect(loadThreadCpus('http://10.0.0.2:8000', 1, boot).cpus).toBeUndefined();
    expect(loadThreadCpus('http://127.0.0.1:8000', 1, 'another-machine').note).toMatch(/not on this machine/); // a forwarded port
    expect(loadThreadCpus('http://127.0.0.1:8000', undefined, boot).note).toMatch(/engine thread is not pinned/);
    expect(loadThreadCpus('http://127.0.0.1:8000', 1, boot, { LOADLAB_CPU_SPLIT: '0' }).note).toMatch(/LOADLAB_CPU_SPLIT=0/);
    expect(() => loadThreadCpus('http://127.0.0.1:8000', 1, boot, { LOADLAB_CPU_SPLIT: 'no' })).toThrow(/use 1 .* or 0/);
  });
});

describe.runIf(canPin)('a real thread pinned through taskset', () => {
  it('pinThisThread keeps this thread to the CPUs asked for, and release gives its own back', () => {
    const pin = pinThisThread([lastCpu]);
    if ('reason' in pin) throw new Error(pin.reason);
    expect(pin.cpus).toEqual([lastCpu]);
    expect(thisThreadCpus()?.cpus).toEqual([lastCpu]);
    pin.release();
    expect(thisThreadCpus()?.cpus).toEqual(here?.cpus);
    expect(pinThisThread([999])).toEqual({ reason: 'none of CPUs 999 is allowed here' });
  });
  it('pinThisThread leaves a thread already on exactly those CPUs alone', () => {
    const all = here?.cpus ?? [];
    const pin = pinThisThread(all);
    if ('reason' in pin) throw new Error(pin.reason);
    expect(pin.cpus).toEqual(all);
    pin.release();
    expect(thisThreadCpus()?.cpus).toEqual(all);
  });
  it('pins one thread, not its neighbours', async () => {
    const src = `
      const { parentPort, workerData } = require('node:worker_threads');
      const { readFileSync } = require('node:fs');
      const cpus = () => /^Cpus_allowed_list:\\s*(.+)$/m.exec(readFileSync('/proc/thread-self/status', 'utf8'))[1].trim();
      const before = cpus();
      const tid = /task\\/(\\d+)$/.exec(require('node:fs').readlinkSync('/proc/thread-self'))[1];
      require('node:child_process').execFileSync('taskset', ['-p', '-c', workerData, tid], { stdio: 'ignore' });
      parentPort.postMessage({ before, pinned: cpus() });
    `;
    const w = new Worker(src, { eval: true, workerData: String(lastCpu) });
    const got = await new Promise<{ before: string; pinned: string }>((res) => w.once('message', res));
    await w.terminate();
    expect(parseCpuList(got.before)).toEqual(here?.cpus);
    expect(got.pinned).toBe(String(lastCpu));
    expect(thisThreadCpus()?.cpus).toEqual(here?.cpus); // another thread's pin is not this one's
  });
});

describe.runIf(canPin)('a simulator on this machine and a run against it', () => {
  let sim: SimHandle;
  let unpinned: SimHandle;
  beforeAll(async () => {
    [sim, unpinned] = await Promise.all([startSim(), startSim({ env: { LOADLAB_CPU_SPLIT: '0' } })]);
  });
  afterAll(async () => {
    await Promise.all([sim?.stop(), unpinned?.stop()]);
  });
  const run = (baseUrl: string, thread: boolean, onRecord?: () => void) =>
    runLoad({
      baseUrl,
      workload: [makeRequest('hi', { maxTokens: 4 })],
      requests: 4,
      shape: closedLoop(2),
      out: false,
      thread,
      ...(onRecord ? { onRecord } : {}),
    });

  it('pins its engine thread to the last CPU and says so in GET /version, with its machine', async () => {
    const v = (await (await fetch(`${sim.baseUrl}/version`)).json()) as Record<string, unknown>;
    expect(v.loadlab_engine_cpu).toBe(lastCpu);
    expect(v.loadlab_boot_id).toBe(bootId());
    expect(cpusOfPid(sim.pid)).toEqual([lastCpu]);
    const u = (await (await fetch(`${unpinned.baseUrl}/version`)).json()) as Record<string, unknown>;
    expect(u.loadlab_engine_cpu).toBeUndefined();
    expect(cpusOfPid(unpinned.pid)).toEqual(here?.cpus);
  });
  it('keeps the calling thread off that CPU for the run, then gives its CPUs back', async () => {
    const during: Array<number[] | undefined> = [];
    const r = await run(sim.baseUrl, false, () => during.push(thisThreadCpus()?.cpus));
    expect(during).toEqual(Array(4).fill(others));
    expect(r.manifest.client?.cpuSplit).toEqual({
      simEngineCpu: lastCpu,
      loadCpus: formatCpuList(others),
      note: expect.stringMatching(
        new RegExp(
          `^load threads on CPUs ${formatCpuList(others)}, off the simulator's engine CPU ${lastCpu}; (\\d+ other threads of this process on SCHED_IDLE, kept to CPUs ${formatCpuList(others)}|other threads .+)$`,
        ),
      ),
    });
    expect(thisThreadCpus()?.cpus).toEqual(here?.cpus);
  });
  it('leaves the thread its CPUs after two overlapping runs', async () => {
    await Promise.all([run(sim.baseUrl, false), run(sim.baseUrl, false)]);
    expect(thisThreadCpus()?.cpus).toEqual(here?.cpus);
  });
  it('refuses a bad LOADLAB_CPU_SPLIT, naming the fix', async () => {
    process.env.LOADLAB_CPU_SPLIT = 'yes';
    try {
      await expect(run(sim.baseUrl, false)).rejects.toThrow(/LOADLAB_CPU_SPLIT=yes: use 1/);
    } finally {
      delete process.env.LOADLAB_CPU_SPLIT;
    }
  });
  it('keeps a worker thread off it too, and records where it ran', async () => {
    const r = await run(sim.baseUrl, true);
    const workers = (r.manifest.client as { workers?: Array<{ cpus?: string }> }).workers;
    expect(workers?.[0]?.cpus).toBe(formatCpuList(others));
    expect(thisThreadCpus()?.cpus).toEqual(here?.cpus);
  });
  it('leaves every thread alone against a simulator that is not pinned', async () => {
    const r = await run(unpinned.baseUrl, true);
    expect((r.manifest.client?.cpuSplit as { note?: string } | undefined)?.note).toMatch(/engine thread is not pinned/);
    expect((r.manifest.client as { workers?: Array<{ cpus?: string }> }).workers?.[0]?.cpus).toBe(
      formatCpuList(here?.cpus ?? []),
    );
  });
});
