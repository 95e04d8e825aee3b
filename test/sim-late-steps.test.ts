/**
 * `createLateSteps` (src/sim/http/late-steps.ts): a late step's lateness is split into the engine
 * thread's wait for a core (its schedstat run-queue time since the previous step), the part it was still asleep
 * past the deadline (the clock's reading, given), its garbage collection (the `gc` entries since the previous
 * step) and the rest. Real threads: busy workers outnumbering the cores make this thread wait; a sleep does not; a
 * full collection pauses it.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { threadSched, threadSchedReader } from '../src/proc/cpu-times';
import { createLateSteps } from '../src/sim/http/late-steps';

const spin = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe.skipIf(!existsSync('/proc/thread-self/schedstat'))('late steps by cause', () => {
  it('steps up to 1 ms late count for nothing; a later one is split into waiting for a core and the rest', async () => {
    const late = createLateSteps()!;
    late.observe(0.9);
    expect(late.totals).toEqual({ waitingForCpuS: 0, wokenLateS: 0, gcS: 0, otherS: 0 });

    // Asleep (off the run queue) for 30 ms, then late by 5 ms: at most a wake-up's wait, the rest is "other".
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30);
    late.observe(5);
    expect(late.totals.waitingForCpuS + late.totals.otherS).toBeCloseTo(0.005, 9);
    expect(late.totals.otherS).toBeGreaterThan(late.totals.waitingForCpuS);

    // Late by 5 ms, 4 of them still asleep past the deadline (the clock's reading): woken late, less any wait for a
    // core, which comes first (it includes the wait after the wake-up).
    const before = { ...late.totals };
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30);
    late.observe(5, 4);
    const woken = (late.totals.wokenLateS - before.wokenLateS) * 1000;
    const waited = (late.totals.waitingForCpuS - before.waitingForCpuS) * 1000;
    expect(woken).toBeLessThanOrEqual(4 + 1e-9);
    expect(woken + waited).toBeGreaterThanOrEqual(4 - 1e-9);
    expect(woken + waited + (late.totals.otherS - before.otherS) * 1000).toBeCloseTo(5, 9);

    // More busy threads than cores while this one spins: it waits for a core far longer than 5 ms.
    const n = availableParallelism() + 1;
    const busy = Array.from(
      { length: n },
      () => new Worker('const t = Date.now(); while (Date.now() - t < 600);', { eval: true }),
    );
    await new Promise((r) => setTimeout(r, 50)); // let them start
    spin(300);
    const beforeBusy = { ...late.totals };
    late.observe(5);
    await Promise.all(busy.map((w) => w.terminate()));
    expect(late.totals.waitingForCpuS - beforeBusy.waitingForCpuS).toBeGreaterThanOrEqual(0.005 - 1e-9); // the cap
    const t = late.totals;
    expect(t.waitingForCpuS + t.wokenLateS + t.gcS + t.otherS).toBeCloseTo(0.015, 9);
  });

  it("a late step's share in this thread's garbage collection, judged once the pause is reported", async () => {
    setFlagsFromString('--expose-gc');
    const fullGc = runInNewContext('gc') as () => void;
    const seen: { at: number; ms: number }[] = [];
    const observer = new PerformanceObserver((l) => {
      for (const e of l.getEntries()) seen.push({ at: e.startTime, ms: e.duration });
    });
    observer.observe({ entryTypes: ['gc'] });
    const tick = () => new Promise((r) => setImmediate(r));
    try {
      const late = createLateSteps()!;
      const before = { ...late.totals };
      const from = performance.now();
      late.observe(0);
      const keep = Array.from({ length: 200_000 }, (_, i) => ({ i })); // something to mark
      fullGc();
      late.observe(500); // late by more than the pause: the pause is its GC share, the rest "other"
      const to = performance.now();
      await tick();
      await tick();
      late.observe(0);
      late.observe(0); // the second step after it: judged
      expect(keep.length).toBe(200_000);
      const inWindow = seen.filter((g) => g.at >= from && g.at < to).map((g) => g.ms);
      const t = late.totals;
      const gcMs = (t.gcS - before.gcS) * 1000;
      expect(gcMs).toBeGreaterThanOrEqual(Math.max(...inWindow) - 1e-6); // the full collection, at least
      expect(gcMs).toBeLessThanOrEqual(inWindow.reduce((a, b) => a + b, 0) + 1e-6);
      const all = (x: typeof t) => x.waitingForCpuS + x.wokenLateS + x.gcS + x.otherS;
      expect((all(t) - all(before)) * 1000).toBeCloseTo(500, 6);

      // A pause in a step that was not late counts for nothing.
      fullGc();
      late.observe(0.5);
      await tick();
      await tick();
      late.observe(0);
      late.observe(0);
      expect(late.totals.gcS).toBe(t.gcS);
    } finally {
      observer.disconnect();
    }
  });
});

describe.skipIf(!existsSync('/proc/thread-self/schedstat'))('threadSchedReader (one pread per reading)', () => {
  it("reads what threadSched reads, rising with this thread's work, never more than the wall time; nothing after close", () => {
    const r = threadSchedReader()!;
    const t0 = performance.now(); // before the first reading: the two readings lie within the wall time
    const a = r.read()!;
    const ref = threadSched()!;
    expect(ref.cpuMs).toBeGreaterThanOrEqual(a.cpuMs);
    spin(50);
    const b = r.read()!;
    const wall = performance.now() - t0;
    expect(b.cpuMs).toBeGreaterThan(a.cpuMs);
    // schedstat's runtime is brought up to date at scheduler ticks and switches, not at each read, so a reading can
    // lag by up to one tick (10 ms at HZ=100): the first one lagging makes the difference exceed the wall time.
    expect(b.cpuMs - a.cpuMs + (b.waitMs - a.waitMs)).toBeLessThanOrEqual(wall + 10);
    r.close();
    expect(r.read()).toBeUndefined();
    r.close(); // twice is harmless
  });

  it('fresh: the CPU time is brought up to now before each reading, so it never exceeds the wall time between two', () => {
    const r = threadSchedReader({ fresh: true })!;
    const over: number[] = [];
    let cpu = 0;
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const a = r.read()!;
      spin(3);
      const b = r.read()!;
      const wall = performance.now() - t0;
      cpu += b.cpuMs - a.cpuMs;
      // unfreshened, a 3 ms spin read 0.0–6.7 ms here (up to a 4 ms tick behind at either end)
      if (b.cpuMs - a.cpuMs > wall + 0.05) over.push(b.cpuMs - a.cpuMs - wall);
    }
    r.close();
    expect(over).toEqual([]);
    expect(cpu).toBeGreaterThan(0);
  });
});
