/**
 * Helper threads that yield (src/proc/idle-threads.ts): the capability check, a real worker thread of
 * this process set to SCHED_IDLE and back through `chrt`, a real simulator process whose threads other than
 * the engine's are idle, and `runLoad` putting this process's other threads on SCHED_IDLE and off the simulator's
 * CPU for the run only; `confineThreads` giving each thread its own CPUs back.
 * Linux with ≥ 2 CPUs and util-linux; the set-back parts need CAP_SYS_NICE (root on CI).
 */
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tsxImportExpr } from '../src/proc/dist';
import { formatCpuList, pinWithIdleHelpers, setThreadCpus, thisThreadCpus } from '../src/proc/cpu-split';
import {
  canLeaveIdle,
  confineThreads,
  idleOtherThreadsFor,
  processThreads,
  SCHED_IDLE,
  SCHED_OTHER,
  setThreadsPolicy,
  threadCpuList,
  threadPolicy,
} from '../src/proc/idle-threads';
import { packageRoot } from '../src/paths';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { startSim, type SimHandle } from '../src/sim/start';
import { makeRequest } from '../src/workload/workload';

const here = thisThreadCpus();
const canSplit = here !== undefined && here.cpus.length >= 2;
const privileged = canSplit && canLeaveIdle();

/** A worker thread of this process that reports its thread id and then waits; `stop` ends it. */
async function idleWorker(): Promise<{ tid: number; stop: () => Promise<number> }> {
  const src = `
    const { parentPort } = require('node:worker_threads');
    const m = /task\\/(\\d+)/.exec(require('node:fs').readlinkSync('/proc/thread-self'));
    parentPort.postMessage(Number(m[1]));
    parentPort.on('message', () => {});
  `;
  const w = new Worker(src, { eval: true });
  const tid = await new Promise<number>((res) => w.once('message', res));
  return { tid, stop: () => w.terminate() };
}

describe('the capability and the policy', () => {
  it('reads CAP_SYS_NICE from the effective set only', () => {
    expect(canLeaveIdle('CapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n')).toBe(true);
    expect(canLeaveIdle('CapEff:\t0000000000800000\n')).toBe(true); // bit 23 alone
    expect(canLeaveIdle('CapEff:\t00000000a80425fb\n')).toBe(false); // Docker's default set
    expect(canLeaveIdle('no such line')).toBe(false);
  });

  it.runIf(canSplit)('reads this thread as SCHED_OTHER, and a thread that is gone as undefined', () => {
    expect(threadPolicy(process.pid)).toBe(SCHED_OTHER);
    expect(processThreads()).toContain(process.pid);
    expect(threadPolicy(2 ** 30)).toBeUndefined();
  });

  it.runIf(privileged)('sets one thread idle and back, leaving the others', async () => {
    const w = await idleWorker();
    try {
      expect(setThreadsPolicy([w.tid], true)).toEqual([w.tid]);
      expect(threadPolicy(w.tid)).toBe(SCHED_IDLE);
      expect(threadPolicy(process.pid)).toBe(SCHED_OTHER);
      expect(setThreadsPolicy([w.tid], false)).toEqual([w.tid]);
      expect(threadPolicy(w.tid)).toBe(SCHED_OTHER);
    } finally {
      await w.stop();
    }
  });

  it.runIf(privileged)('for a run: every other thread idle, then all back; without CAP_SYS_NICE, none touched', async () => {
    const w = await idleWorker();
    try {
      expect(idleOtherThreadsFor(process.pid, 'CapEff:\t0000000000000000\n')).toEqual({
        reason: 'no CAP_SYS_NICE to set them back after the run',
      });
      expect(threadPolicy(w.tid)).toBe(SCHED_OTHER);
      const y = idleOtherThreadsFor(process.pid);
      if ('reason' in y) throw new Error(y.reason);
      expect(y.tids).toContain(w.tid);
      expect(y.tids).not.toContain(process.pid);
      expect(threadPolicy(w.tid)).toBe(SCHED_IDLE);
      y.release();
      expect(threadPolicy(w.tid)).toBe(SCHED_OTHER);
    } finally {
      await w.stop();
    }
  });
});

describe.runIf(privileged)('for a run, in three chrt calls when every thread is at the normal policy', () => {
  it('sets a thread born idle during the run back too, and the calling thread is never left idle', async () => {
    const a = await idleWorker();
    try {
      const y = idleOtherThreadsFor(process.pid);
      if ('reason' in y) throw new Error(y.reason);
      expect(threadPolicy(process.pid)).toBe(SCHED_OTHER);
      const b = await idleWorker(); // started by this thread: at its policy
      try {
        expect(setThreadsPolicy([b.tid], true)).toEqual([b.tid]); // as a thread started by an idle one would be
        y.release();
        expect([threadPolicy(a.tid), threadPolicy(b.tid), threadPolicy(process.pid)]).toEqual([
          SCHED_OTHER,
          SCHED_OTHER,
          SCHED_OTHER,
        ]);
      } finally {
        await b.stop();
      }
    } finally {
      await a.stop();
    }
  });

  it('with a thread already idle before the run, sets back only the threads it set idle', async () => {
    const before = await idleWorker();
    const other = await idleWorker();
    try {
      expect(setThreadsPolicy([before.tid], true)).toEqual([before.tid]);
      const y = idleOtherThreadsFor(process.pid);
      if ('reason' in y) throw new Error(y.reason);
      expect(y.tids).toContain(other.tid);
      expect(y.tids).not.toContain(before.tid);
      y.release();
      expect([threadPolicy(before.tid), threadPolicy(other.tid)]).toEqual([SCHED_IDLE, SCHED_OTHER]);
    } finally {
      setThreadsPolicy([before.tid], false);
      await Promise.all([before.stop(), other.stop()]);
    }
  });
});

describe.runIf(canSplit)('every thread kept to some CPUs for a while', () => {
  it('moves every thread, then gives each its own CPUs back, a thread pinned elsewhere included', async () => {
    const [first, second] = here?.cpus ?? [];
    const a = await idleWorker();
    const b = await idleWorker();
    const spread = threadCpuList(a.tid);
    try {
      setThreadCpus(b.tid, [second]);
      const kept = confineThreads(String(first));
      if ('reason' in kept) throw new Error(kept.reason);
      expect([threadCpuList(a.tid), threadCpuList(b.tid), threadCpuList(process.pid)]).toEqual([
        `${first}`,
        `${first}`,
        `${first}`,
      ]);
      kept.release();
      expect([threadCpuList(a.tid), threadCpuList(b.tid), threadCpuList(process.pid)]).toEqual([spread, `${second}`, spread]);
      expect(spread).toBe(formatCpuList(here?.cpus ?? []));
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('reads a thread that is gone as undefined', () => {
    expect(threadCpuList(2 ** 30)).toBeUndefined();
  });

  it("pinned from the main thread, moves the others; from a worker thread, leaves the others' CPUs alone", async () => {
    const [first] = here?.cpus ?? [];
    const other = await idleWorker();
    const spread = threadCpuList(other.tid);
    try {
      const main = pinWithIdleHelpers([first]);
      if ('reason' in main) throw new Error(main.reason);
      expect([main.helpers, threadCpuList(other.tid)]).toEqual([expect.stringContaining(`kept to CPUs ${first}`), `${first}`]);
      expect(threadCpuList(process.pid)).toBe(`${first}`);
      main.release();
      expect([threadCpuList(other.tid), threadCpuList(process.pid)]).toEqual([spread, spread]);
      // The same call in a worker thread (the sources through tsx, as src/runner/worker-crew.ts starts its workers).
      const src = (file: string) => join(packageRoot(), 'src', 'proc', file);
      const boot = `const { parentPort, workerData } = require('node:worker_threads');
        Promise.all([${tsxImportExpr(src('cpu-split.ts'))}, ${tsxImportExpr(src('idle-threads.ts'))}]).then(([c, i]) => {
          const pin = c.pinWithIdleHelpers([workerData.cpu]);
          const during = i.threadCpuList(workerData.other, ${process.pid});
          pin.release(); // before answering: the test ends the thread once it has the answer
          parentPort.postMessage({ helpers: pin.helpers, during });
        });`;
      const w = new Worker(boot, { eval: true, workerData: { cpu: first, other: other.tid } });
      const seen = await new Promise<{ helpers: string; during: string }>((res, rej) => {
        w.once('message', res);
        w.once('error', rej);
      });
      await w.terminate();
      expect(threadPolicy(process.pid)).toBe(SCHED_OTHER);
      expect(seen.helpers).toMatch(/not kept to them \(a worker thread: only the main thread moves them\)/);
      expect(seen.during).toBe(spread);
    } finally {
      await other.stop();
    }
  });
});

describe.runIf(canSplit)('a simulator and a run against it', () => {
  let sim: SimHandle;
  let normalAtListen: number[] = [];
  beforeAll(async () => {
    sim = await startSim();
    normalAtListen = processThreads(sim.pid).filter((t) => threadPolicy(t, sim.pid) === SCHED_OTHER);
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it("puts the simulator's helper threads on SCHED_IDLE, not its engine thread", async () => {
    await fetch(`${sim.baseUrl}/version`);
    const tids = processThreads(sim.pid);
    expect(threadPolicy(sim.pid, sim.pid)).toBe(SCHED_OTHER); // the engine: the main thread
    const idle = tids.filter((t) => threadPolicy(t, sim.pid) === SCHED_IDLE);
    expect(idle.length).toBeGreaterThan(0);
    expect(idle).not.toContain(sim.pid);
  });

  it('listens only once its tokenizer thread has booted and yields: the engine is then its one thread at the normal policy', () => {
    expect(normalAtListen).toEqual([sim.pid]);
  });

  it('starts its tokenizer thread with the server, on SCHED_IDLE: a long prompt starts no thread', async () => {
    const before = processThreads(sim.pid);
    const res = await fetch(`${sim.baseUrl}/tokenize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // longer than INLINE_PROMPT_CHARS (256), so the tokenizer thread encodes it (src/sim/http/prompt-tokens.ts)
      body: JSON.stringify({ model: sim.model, prompt: '你好，世界'.repeat(100) }),
    });
    expect(res.status).toBe(200);
    const after = processThreads(sim.pid);
    expect(after.filter((t) => !before.includes(t))).toEqual([]);
    // The default clock ('spin') starts no alarm thread: the engine is the only thread at the normal policy.
    expect(after.filter((t) => threadPolicy(t, sim.pid) === SCHED_OTHER)).toEqual([sim.pid]);
  });

  it.runIf(privileged)(
    "puts this process's other threads on SCHED_IDLE and off the simulator's CPU for the run only",
    async () => {
      const w = await idleWorker();
      try {
        const during: Array<[number | undefined, string | undefined]> = [];
        const spread = threadCpuList(w.tid);
        const r = await runLoad({
          baseUrl: sim.baseUrl,
          workload: [makeRequest('hi', { maxTokens: 4 })],
          requests: 2,
          shape: closedLoop(1),
          out: false,
          onRecord: () => during.push([threadPolicy(w.tid), threadCpuList(w.tid)]),
        });
        const loadCpus = formatCpuList((here?.cpus ?? []).slice(0, -1)); // every simulator takes the last CPU (src/proc/cpu-split.ts)
        expect(during).toEqual([
          [SCHED_IDLE, loadCpus],
          [SCHED_IDLE, loadCpus],
        ]);
        expect(threadPolicy(w.tid)).toBe(SCHED_OTHER);
        expect(threadCpuList(w.tid)).toBe(spread);
        expect(threadPolicy(process.pid)).toBe(SCHED_OTHER);
        expect((r.manifest.client?.cpuSplit as { note?: string } | undefined)?.note).toMatch(
          /; \d+ other threads of this process on SCHED_IDLE, kept to CPUs [\d,-]+$/,
        );
      } finally {
        await w.stop();
      }
    },
  );

  it.runIf(privileged)(
    'with the load on a worker thread, this thread yields to it (SCHED_IDLE) while it sends, and is set back after',
    async () => {
      const during: Array<number | undefined> = [];
      const r = await runLoad({
        baseUrl: sim.baseUrl,
        workload: [makeRequest('hi', { maxTokens: 4 })],
        requests: 3,
        shape: closedLoop(1),
        out: false,
        thread: true,
        onRecord: (rec) => {
          if (!rec.warmup) during.push(threadPolicy(process.pid));
        },
      });
      expect(during).toEqual([SCHED_IDLE, SCHED_IDLE, SCHED_IDLE]);
      expect(threadPolicy(process.pid)).toBe(SCHED_OTHER);
      expect((r.manifest.client?.cpuSplit as { note?: string } | undefined)?.note).toMatch(
        /; this thread yielded to the worker threads \(SCHED_IDLE\) while they sent the load$/,
      );
    },
  );
});
