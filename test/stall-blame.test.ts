import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { calibrationVerdict } from '../src/calibrate/calibrate-result';
import { assessClientHealth, type ClientHealthNumbers } from '../src/runner/health';
import { addTick, classifyTick, LATE_TICK_MS, stallCause, startStallWatch, type ClientStall } from '../src/runner/stall-blame';
import { stallSentence } from '../src/runner/stall-sentence';

const quiet: ClientStall = {
  cause: 'none',
  lateMs: { ownCpu: 0, gc: 0, otherProcesses: 0 },
  gcCount: 12,
  gcPauseTotalMs: 8,
  gcPauseMaxMs: 1.5,
  othersLoad1m: 0.4,
  stealPercent: 0.5,
};

const late: ClientHealthNumbers = {
  eventLoopDelayP50Ms: 0.3,
  eventLoopDelayP99Ms: 9.8,
  eventLoopDelayMaxMs: 30,
  cpuUserMs: 500,
  cpuSystemMs: 40,
  wallMs: 2000,
  cpuPercentOfOneCore: 27,
  loadAverage1m: 0.9,
  cores: 2,
};

describe('classifyTick (pure)', () => {
  it('GC covering half the lateness is GC, even though GC time is CPU time', () => {
    expect(classifyTick({ lateMs: 10, cpuMs: 12, gcMs: 5 })).toBe('gc');
    expect(classifyTick({ lateMs: 10, cpuMs: 12, gcMs: 4 })).toBe('own-cpu');
  });

  it("asleep past the tick's time for half the lateness or more is not our own work, whatever the CPU read", () => {
    expect(classifyTick({ lateMs: 2, cpuMs: 1.96, gcMs: 0, sleptMs: 1.94 })).toBe('other-processes'); // lesson 06
    expect(classifyTick({ lateMs: 4, cpuMs: 3, gcMs: 0, sleptMs: 1.9 })).toBe('own-cpu'); // less than half asleep
    expect(classifyTick({ lateMs: 4, cpuMs: 3, gcMs: 2, sleptMs: 2 })).toBe('gc');
  });

  it('on the CPU for most of the lateness is our own work; waiting without working is other processes', () => {
    expect(classifyTick({ lateMs: 10, cpuMs: 6, gcMs: 0 })).toBe('own-cpu');
    expect(classifyTick({ lateMs: 10, cpuMs: 2.7, gcMs: 0 })).toBe('other-processes');
    expect(classifyTick({ lateMs: 50, cpuMs: 0, gcMs: 0 })).toBe('other-processes');
  });
});

describe('addTick and stallCause (pure)', () => {
  it('sums only the lateness beyond the threshold, by cause; the biggest sum is the cause', () => {
    const sums = { ownCpu: 0, gc: 0, otherProcesses: 0 };
    addTick(sums, { lateMs: LATE_TICK_MS, cpuMs: 0, gcMs: 0 }); // not late enough
    addTick(sums, { lateMs: 0.2, cpuMs: 9, gcMs: 0 });
    expect(stallCause(sums)).toBe('none');
    addTick(sums, { lateMs: 11, cpuMs: 11, gcMs: 0 }); // 10 ms own
    addTick(sums, { lateMs: 5, cpuMs: 5, gcMs: 5 }); // 4 ms GC
    addTick(sums, { lateMs: 8, cpuMs: 1, gcMs: 0 }); // 7 ms others
    addTick(sums, { lateMs: 7, cpuMs: 0.5, gcMs: 0 }); // 6 ms others
    expect(sums).toEqual({ ownCpu: 10, gc: 4, otherProcesses: 13 });
    expect(stallCause(sums)).toBe('other-processes');
  });

  it("with the thread's run-queue time, waiting is split into queued and neither running nor queued", () => {
    const sums: ClientStall['lateMs'] = { ownCpu: 0, gc: 0, otherProcesses: 0, inRunQueue: 0 };
    addTick(sums, { lateMs: 8, cpuMs: 1, gcMs: 0, waitMs: 5 }); // 7 ms others, 5 of them queued
    addTick(sums, { lateMs: 5, cpuMs: 0, gcMs: 0, waitMs: 9 }); // 4 ms others, all queued (capped)
    addTick(sums, { lateMs: 11, cpuMs: 11, gcMs: 0, waitMs: 3 }); // own work: no queue share
    expect(sums).toEqual({ ownCpu: 10, gc: 0, otherProcesses: 11, inRunQueue: 9 });
    const sentence = stallSentence({ ...quiet, cause: 'other-processes', lateMs: sums }, 27, 2);
    expect(sentence).toContain(
      "11.0 off the CPU (9.0 in the run queue, 2.0 neither running nor queued: a blocking call, a late timer or the host's steal)",
    );
  });
});

describe("woken late: asleep in the loop past the tick's time (pure)", () => {
  it("is the sleep beyond the run-queue wait and the timer's first 1 ms, within the waiting part of the lateness", () => {
    const sums: ClientStall['lateMs'] = { ownCpu: 0, gc: 0, otherProcesses: 0, inRunQueue: 0, wokenLate: 0 };
    addTick(sums, { lateMs: 9, cpuMs: 0.5, gcMs: 0, waitMs: 2, sleptMs: 8 }); // 8 waiting: 2 queued, 8 − 1 − 2 = 5 asleep
    addTick(sums, { lateMs: 4, cpuMs: 0, gcMs: 0, waitMs: 0, sleptMs: 4 }); // 3 waiting: 3 asleep (capped at 4 − 1)
    addTick(sums, { lateMs: 6, cpuMs: 0.2, gcMs: 0, waitMs: 1 }); // not read: 5 waiting, 1 queued, none asleep
    addTick(sums, { lateMs: 6, cpuMs: 6, gcMs: 0, waitMs: 0, sleptMs: 0 }); // own work: no sleep share
    expect(sums).toEqual({ ownCpu: 5, gc: 0, otherProcesses: 16, inRunQueue: 3, wokenLate: 8 });
    // 8 asleep against 16 − 8 = 8 otherwise waiting: the first of equals, other processes
    expect(stallCause(sums)).toBe('other-processes');
    addTick(sums, { lateMs: 3, cpuMs: 0, gcMs: 0, waitMs: 0, sleptMs: 3 });
    expect(stallCause(sums)).toBe('woken-late'); // 10 asleep, 8 otherwise waiting, 5 own work
    // a run saved before the reading: the waiting is all "other processes", as it was
    expect(stallCause({ ownCpu: 1, gc: 0, otherProcesses: 5 })).toBe('other-processes');
  });

  it('the sentence says the thread was woken late, and that no program took the CPU', () => {
    const lateMs = { ownCpu: 1, gc: 0, otherProcesses: 20, inRunQueue: 3, wokenLate: 15 };
    const text = stallSentence({ ...quiet, cause: 'woken-late', lateMs }, 27, 2);
    expect(text).toContain(
      "Cause: the loop was still asleep past its time (late ms: 1.0 own work, 0.0 GC, 20.0 off the CPU (3.0 in the run queue, 15.0 asleep past the tick's time, 2.0 neither running nor queued: a blocking call or the host's steal);",
    );
    expect(text).toContain('woken late by the kernel or, on a virtual machine, by its host');
    expect(text).toContain("not this process's work or another program");
    expect(text).not.toContain('Close other busy programs');
  });
});

describe('the verdict names the cause', () => {
  it('the issue #16 case: 27 % of a core, load 0.9, but the loop was late from its own work', () => {
    const stall: ClientStall = { ...quiet, cause: 'own-cpu', lateMs: { ownCpu: 120, gc: 6, otherProcesses: 3 } };
    const v = assessClientHealth({ ...late, stall });
    expect(v.clientBound).toBe(true);
    expect(v.reasons[0]).not.toContain('other programs took the CPU');
    expect(v.reasons[0]).toContain(
      "Cause: this process's own work (late ms: 120.0 own work, 6.0 GC, 3.0 off the CPU; 27 % of a core over the run).",
    );
  });

  it('garbage collection, with its pauses', () => {
    const stall: ClientStall = { ...quiet, cause: 'gc', gcCount: 41, gcPauseTotalMs: 130.24, gcPauseMaxMs: 12.5 };
    stall.lateMs = { ownCpu: 10, gc: 95, otherProcesses: 0 };
    expect(assessClientHealth({ ...late, stall }).reasons[0]).toContain(
      'Cause: garbage collection (41 GC pauses, 130.2 ms in all, the longest 12.5 ms; late ms: 10.0 own work, 95.0 GC, 0.0 off the CPU',
    );
  });

  it('other processes, with the load that was not ours and the steal', () => {
    const stall: ClientStall = { ...quiet, cause: 'other-processes', othersLoad1m: 2.61, stealPercent: 7.25 };
    stall.lateMs = { ownCpu: 1, gc: 0, otherProcesses: 80 };
    const text = assessClientHealth({ ...late, loadAverage1m: 2.9, stall }).reasons[0];
    expect(text).toContain('Cause: other processes took the CPU (late ms: 1.0 own work, 0.0 GC, 80.0 off the CPU;');
    expect(text).toContain('2.6 of the load average on 2 cores was not this process, CPU steal 7.3 %');
    // steal of 0.5 % or more is named with what to do about it; less is only a figure
    expect(text).toMatch(
      /Close other busy programs\. The VM's host took 7\.3 % of this machine's CPU \(steal\): nothing here can change that/,
    );
    expect(stallSentence({ ...stall, stealPercent: 0.3 }, 27, 2)).not.toContain('nothing here can change that');
    const { stealPercent: _, ...noSteal } = stall;
    expect(stallSentence(noSteal, 27, 2)).not.toContain('steal');
  });

  it("advises more workers for a thread's own work, unless the thread could run on one core only", () => {
    const own: ClientStall = { ...quiet, cause: 'own-cpu', cpuOf: 'thread', threadCpuPercent: 22, threadWaitMs: 3 };
    expect(stallSentence({ ...own, threadCpus: 3 }, 40, 4)).toMatch(/Run fewer streams per thread \(more workers\)\.$/);
    expect(stallSentence(own, 40, 4)).toMatch(/\(more workers\)\.$/); // affinity unreadable, or saved before
    expect(stallSentence({ ...own, threadCpus: 1 }, 40, 2)).toMatch(
      /This thread could run on one core only of this machine's 2, so more workers would share it: run fewer streams, or use a machine with more cores\.$/,
    );
  });

  it('says when no cause was found, and a healthy run has no reasons', () => {
    expect(stallSentence(quiet, 27, 2)).toMatch(/^Cause not found: no 10 ms interval was late by more than 1 ms/);
    expect(assessClientHealth({ ...late, eventLoopDelayP99Ms: 1, stall: quiet })).toEqual({ clientBound: false, reasons: [] });
  });
});

describe('startStallWatch (real)', () => {
  it('a loop blocked by allocation is late, its GC pauses are counted, and the lateness is blamed on something', async () => {
    const w = startStallWatch();
    let keep: unknown[] = [];
    for (let block = 0; block < 6; block++) {
      const until = performance.now() + 40;
      while (performance.now() < until) {
        keep.push({ a: new Array(64).fill(block), s: `x${block}${keep.length}` });
        if (keep.length > 50_000) keep = [];
      }
      await new Promise((r) => setTimeout(r, 15)); // let the ticker and the GC observer run
    }
    const s = w.stop();
    expect(s.gcCount).toBeGreaterThan(0);
    expect(s.gcPauseTotalMs).toBeGreaterThanOrEqual(s.gcPauseMaxMs);
    expect(s.lateMs.ownCpu + s.lateMs.gc + s.lateMs.otherProcesses).toBeGreaterThan(0);
    expect(s.cause).not.toBe('none');
    expect(s.othersLoad1m).toBeGreaterThanOrEqual(0);
    expect(w.stop()).toBe(s);
  });

  it.skipIf(!existsSync('/proc/thread-self/schedstat'))(
    "a loop that sleeps while another thread of the process works is not blamed on its own work (the thread's own CPU)",
    async () => {
      // A busy worker thread: process.cpuUsage() counts it, the watching thread's schedstat does not.
      const busy = new Worker('const t = Date.now(); while (Date.now() - t < 1500);', { eval: true });
      const w = startStallWatch();
      const nap = new Int32Array(new SharedArrayBuffer(4));
      for (let block = 0; block < 6; block++) {
        Atomics.wait(nap, 0, 0, 40); // the loop is late by 40 ms, off the CPU
        await new Promise((r) => setTimeout(r, 15));
      }
      const s = w.stop();
      await busy.terminate();
      expect(s.cpuOf).toBe('thread');
      expect(s.threadCpus).toBe(availableParallelism()); // this test's thread is not pinned
      expect(s.lateMs.otherProcesses).toBeGreaterThan(100);
      expect(s.lateMs.ownCpu).toBeLessThan(s.lateMs.otherProcesses);
      // asleep in Atomics.wait, not queued for a core: most of the wait is "neither running nor queued"
      expect(s.lateMs.inRunQueue).toBeLessThan(s.lateMs.otherProcesses / 2);
      // blocked outside the loop's poll, so not asleep in it: not woken late
      expect(s.lateMs.wokenLate).toBeLessThan(s.lateMs.otherProcesses / 4);
      expect(s.threadCpuPercent).toBeLessThan(50);
      expect(stallSentence(s, 150, 2)).toMatch(/other threads or processes took the CPU/);
    },
  );
});

describe('startStallWatch, a process stopped while its loop sleeps (real)', () => {
  it.skipIf(process.platform !== 'linux')(
    'reads as woken late: off the CPU and not runnable past the tick, as a late wake-up looks from inside',
    async () => {
      const w = startStallWatch();
      for (let stop = 0; stop < 4; stop++) {
        // A child stops this process for 40 ms while its loop waits in its poll for the child to end.
        const child = spawn('/bin/sh', ['-c', 'sleep 0.03; kill -STOP $PPID; sleep 0.04; kill -CONT $PPID'], { stdio: 'ignore' });
        await new Promise((r) => child.on('exit', r));
        await new Promise((r) => setTimeout(r, 25));
      }
      const s = w.stop();
      expect(s.lateMs.otherProcesses).toBeGreaterThan(100); // 4 × 40 ms, less 4 × 1 ms
      expect(s.lateMs.wokenLate).toBeGreaterThan(s.lateMs.otherProcesses / 2);
      expect(s.lateMs.wokenLate).toBeLessThanOrEqual(s.lateMs.otherProcesses);
      expect(s.cause).toBe('woken-late');
      expect(stallSentence(s, 5, 2)).toMatch(/^Cause: the loop was still asleep past its time/);
    },
  );
});

describe('the calibration verdict names the cause of a pass that fell behind', () => {
  const pass = (clientCpuPercent: number, stallCause?: ClientStall['cause']) => ({
    mode: 'paced' as const,
    concurrency: 64,
    gapMs: 10,
    offeredEventsPerSec: 6400,
    eventsPerSec: 6000,
    events: 6000,
    failed: 0,
    stampErrorP50Ms: 2,
    stampErrorP99Ms: 9,
    stampErrorMaxMs: 12,
    eventLoopDelayP99Ms: 8,
    clientCpuPercent,
    serverCpuPercent: 20,
    seconds: 1,
    keptUp: false,
    ...(stallCause ? { stallCause } : {}),
  });
  const verdict = (p: ReturnType<typeof pass>) =>
    calibrationVerdict({
      passes: [p],
      ceilingEventsPerSec: 6000,
      ok: false,
      stampLimitMs: 2,
      clockOffsetMs: 0,
      startupSeconds: 0.5,
      wallSeconds: 2,
      cores: 2,
      loadAverage1m: 1,
      serverPid: 1,
      fellBehindAt: { concurrency: 64, eventsPerSec: 6000, stampErrorP99Ms: 9 },
    });

  it("low CPU is no longer read as other programs when the stalls were the client's own", () => {
    expect(verdict(pass(27, 'own-cpu'))).toContain("The delay was the client's own work (27 % of a core)");
    expect(verdict(pass(27, 'own-cpu'))).not.toContain('other programs');
    expect(verdict(pass(27, 'gc'))).toContain("The delay was the client's own garbage collection (27 % of a core)");
    expect(verdict(pass(27, 'other-processes'))).toContain('so the delay came from other programs taking the CPU');
    expect(verdict(pass(27))).toContain('other programs taking the CPU'); // older results: the CPU heuristic
    expect(verdict(pass(27, 'woken-late'))).toContain(
      "the kernel or the VM's host woke it late, not parsing and not another program",
    );
  });
});
