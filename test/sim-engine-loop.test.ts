/**
 * The engine's step loop: step boundaries, mid-step arrivals, idling, drift correction,
 * abort, config resolution, clocks, and a CPU micro-check at 256 running streams.
 */
import { describe, expect, it } from 'vitest';
import { seededRng } from '../src/rng';
import { clockMode, realClock, virtualClock } from '../src/sim/engine/clock';
import { kvCacheTokens, maxConcurrency, resolveEngineConfig } from '../src/sim/engine/config';
import { createEngine } from '../src/sim/engine/engine';
import type { EngineClock, EngineOutput, StepInfo } from '../src/sim/engine/types';
import { makeHarness, randomPrompt, submit } from './sim-engine-harness';

describe('step loop', () => {
  it('emits every stream at the same step boundary; a mid-step arrival waits for the next schedule()', () => {
    const h = makeHarness({ asyncScheduling: false }); // sync arithmetic; async: sim-async-scheduling.test.ts
    const rng = seededRng(3);
    const a = submit(h, 0, randomPrompt(rng, 50), { maxTokens: 20 });
    const b = submit(h, 0, randomPrompt(rng, 50), { maxTokens: 20 });
    const c = submit(h, 15, randomPrompt(rng, 50), { maxTokens: 5 }); // during step 2 (≈12.3–19 ms)
    h.clock.runUntilIdle();
    expect(a.outTimes).toEqual(b.outTimes);
    const s1 = h.steps[0];
    expect(s1.startMs).toBe(0);
    expect(s1.numDecodes + (s1.prefillTokens > 0 ? 2 : 0)).toBe(2);
    const s2 = h.steps[1];
    expect(s2.startMs).toBe(s1.endMs);
    expect(s2.startMs).toBeLessThan(15);
    expect(s2.endMs).toBeGreaterThan(15);
    expect(s2.numDecodes).toBe(2);
    expect(s2.prefillTokens).toBe(0); // c arrived mid-step
    expect(h.steps[2].prefillTokens).toBe(50);
    expect(c.outTimes[0]).toBe(h.steps[2].endMs);
    expect(a.outTimes.every((t) => h.steps.some((s) => s.endMs === t))).toBe(true);
    // Steps are back to back: each starts at the previous planned end.
    for (let i = 1; i < h.steps.length; i++) expect(h.steps[i].startMs).toBe(h.steps[i - 1].endMs);
  });

  it('sleeps when idle and wakes on arrival', () => {
    const h = makeHarness();
    const rng = seededRng(4);
    submit(h, 0, randomPrompt(rng, 20), { maxTokens: 3 });
    submit(h, 1000, randomPrompt(rng, 20), { maxTokens: 3 });
    h.clock.advance(500);
    expect(h.clock.pending).toBe(1); // only the scripted arrival: no step timer while idle
    expect(h.steps.length).toBe(3);
    h.clock.runUntilIdle();
    expect(h.steps[3].startMs).toBe(1000);
    expect(h.engine.stats()).toMatchObject({ running: 0, waiting: 0, steps: 6, generationTokens: 6, promptTokens: 40 });
  });

  it('betweenSteps: at once when idle, else on the turn after the step in flight ends (a /metrics render)', async () => {
    const h = makeHarness();
    const seen: string[] = [];
    h.engine.betweenSteps(() => seen.push('idle'));
    expect(seen).toEqual(['idle']);
    submit(h, 0, randomPrompt(seededRng(5), 20), { maxTokens: 3 });
    h.clock.advance(0); // the request arrives and its first step starts
    let stepsThen = -1;
    h.engine.betweenSteps(() => {
      stepsThen = h.steps.length;
      seen.push('after a step');
    });
    expect(seen).toEqual(['idle']); // a step is in flight: it waits
    const stepsBefore = h.steps.length;
    h.clock.advance(h.engine.config.maxModelLen); // long enough for every step (virtual time, all in this turn)
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(['idle', 'after a step']);
    expect(stepsThen).toBeGreaterThan(stepsBefore);
  });

  it('reports iteration tokens and kv usage per step', () => {
    const h = makeHarness({ numGpuBlocksOverride: 101, asyncScheduling: false }); // async allocates a step ahead
    const rng = seededRng(5);
    submit(h, 0, randomPrompt(rng, 160), { maxTokens: 4 });
    const usage: number[] = [];
    h.engine.onStep(() => usage.push(h.engine.stats().kvUsage));
    h.clock.runUntilIdle();
    expect(h.steps.map((s) => s.iterationTokens)).toEqual([161, 1, 1, 1]);
    // 160 prompt tokens → 10 blocks of 100 usable; the first decode computes token 161 → 11 blocks.
    expect(usage.slice(0, 3)).toEqual([0.1, 0.11, 0.11].map((u) => expect.closeTo(u, 12)));
    expect(usage[3]).toBe(0); // finished: blocks freed (cached blocks count as free)
  });

  it('abort stops output and frees blocks; no further callbacks', () => {
    const h = makeHarness();
    const rng = seededRng(6);
    const a = submit(h, 0, randomPrompt(rng, 100), { maxTokens: 50 });
    const b = submit(h, 0, randomPrompt(rng, 100), { maxTokens: 50 });
    h.clock.advance(30);
    const seen = a.outTimes.length;
    h.engine.abort(a.id);
    h.engine.abort('no-such-id');
    h.clock.runUntilIdle();
    expect(a.outTimes.length).toBe(seen);
    expect(a.finish).toBeUndefined();
    expect(b.outputTokens).toBe(50);
    expect(h.engine.stats().kvUsage).toBe(0);
  });

  it('rejects misuse with messages that name the fix', () => {
    const clock = virtualClock();
    const engine = createEngine({ config: resolveEngineConfig({ maxModelLen: 1024, numGpuBlocksOverride: 10 }), clock });
    const base = { maxTokens: 1, minTokens: 0, naturalLength: 1, ignoreEos: false };
    expect(() => engine.add({ id: 'x', promptTokenIds: [], ...base }, () => {})).toThrow(/empty prompt/);
    expect(() => engine.add({ id: 'y', promptTokenIds: new Array(1024).fill(1), ...base }, () => {})).toThrow(/max_model_len/);
    expect(() => engine.add({ id: 'z', promptTokenIds: new Array(200).fill(1), ...base }, () => {})).toThrow(
      /num-gpu-blocks-override/,
    );
    engine.add({ id: 'ok', promptTokenIds: [1, 2], ...base }, () => {});
    expect(() => engine.add({ id: 'ok', promptTokenIds: [1, 2], ...base }, () => {})).toThrow(/unique/);
    engine.close();
    expect(() => engine.add({ id: 'late', promptTokenIds: [1], ...base }, () => {})).toThrow(/closed/);
  });

  it('a request that outgrows the whole KV cache ends with abort instead of hanging', () => {
    const h = makeHarness({ numGpuBlocksOverride: 3 }); // 32 tokens
    const r = submit(h, 0, randomPrompt(seededRng(8), 20), { maxTokens: 100 });
    h.clock.runUntilIdle();
    expect(r.finish).toBe('abort');
    expect(r.outputTokens).toBe(13); // 33 tokens need a 3rd block: it preempts itself and can never be re-admitted
  });
});

describe('drift correction', () => {
  /** Runs every callback `lateMs` after its time, like a busy event loop. */
  function lateClock(lateMs: number) {
    const vc = virtualClock();
    const clock: EngineClock = { now: vc.now, at: (t, fn) => vc.at(t + lateMs, fn) };
    return { vc, clock };
  }

  function run(lateMs: number) {
    const { vc, clock } = lateClock(lateMs);
    const engine = createEngine({ config: resolveEngineConfig({}), clock });
    const steps: StepInfo[] = [];
    const outs: EngineOutput[] = [];
    engine.onStep((s) => steps.push({ ...s }));
    engine.add({ id: 'a', promptTokenIds: [1, 2, 3], maxTokens: 50, minTokens: 0, naturalLength: 50, ignoreEos: true }, (o) =>
      outs.push(o),
    );
    vc.runUntilIdle();
    return { steps, outs, resyncs: engine.resyncs };
  }

  it('small lateness: the next step starts at the planned end, so the schedule does not drift', () => {
    const exact = run(0);
    const late = run(2);
    expect(late.resyncs).toBe(0);
    for (const s of late.steps) expect(s.latenessMs).toBeCloseTo(2, 9);
    const shift = late.steps[0].startMs - exact.steps[0].startMs; // the first start ran 2 ms late too
    expect(late.steps.at(-1)!.endMs - exact.steps.at(-1)!.endMs).toBeCloseTo(shift, 9);
  });

  it("runDue ends a step whose time has come on the caller's turn, and its late callback then does nothing", () => {
    const exact = run(0);
    const { vc, clock } = lateClock(5); // every clock callback 5 ms late, as behind an arrival storm
    const engine = createEngine({ config: resolveEngineConfig({}), clock });
    const steps: StepInfo[] = [];
    const outs: EngineOutput[] = [];
    engine.onStep((s) => steps.push({ ...s }));
    engine.runDue(); // idle: nothing to end
    engine.add({ id: 'a', promptTokenIds: [1, 2, 3], maxTokens: 50, minTokens: 0, naturalLength: 50, ignoreEos: true }, (o) =>
      outs.push(o),
    );
    const firstStart = 5; // the idle loop's first start is a clock callback (5 ms late here)
    while (vc.pending > 0) {
      vc.advance(0.25); // the server's slices of work: runDue before each
      engine.runDue();
    }
    expect(outs.map((o) => o.outputTokens)).toEqual(exact.outs.map((o) => o.outputTokens));
    expect(steps.length).toBe(exact.steps.length);
    for (const st of steps) expect(st.latenessMs).toBeLessThan(0.25);
    expect(engine.resyncs).toBe(0);
    expect(steps[0].startMs).toBe(firstStart);
    expect(steps.at(-1)!.endMs - firstStart).toBeCloseTo(exact.steps.at(-1)!.endMs, 9);
  });

  it('lateness beyond one step resyncs to the actual time and counts it', () => {
    const late = run(20);
    expect(late.resyncs).toBe(late.steps.length);
    for (let i = 1; i < late.steps.length; i++) expect(late.steps[i].startMs).toBeCloseTo(late.steps[i - 1].endMs + 20, 9);
  });
});

describe('config', () => {
  it('applies vLLM V1 defaults for a <70 GiB GPU', () => {
    const c = resolveEngineConfig({});
    expect(c).toMatchObject({
      maxModelLen: 32768,
      maxNumSeqs: 256,
      maxNumBatchedTokens: 2048,
      enableChunkedPrefill: true,
      longPrefillTokenThreshold: 0,
      enablePrefixCaching: true,
      blockSize: 16,
      preemptionMode: 'recompute',
      numCpuBlocks: 0,
      reserveFullIsl: true,
    });
    expect(c.numGpuBlocks).toBeGreaterThan(17_000);
    expect(c.numGpuBlocks).toBeLessThan(18_000);
    expect(kvCacheTokens(c)).toBe(c.numGpuBlocks * 16);
    expect(maxConcurrency(c)).toBeCloseTo((c.numGpuBlocks * 16) / 32768, 12);
    const at09 = resolveEngineConfig({ gpuMemoryUtilization: 0.9 });
    expect(kvCacheTokens(at09)).toBeGreaterThan(250_000);
    expect(kvCacheTokens(at09)).toBeLessThan(280_000);
  });

  it('chunked prefill off: batched = max(max_model_len, 2048); clamps only defaulted values', () => {
    expect(resolveEngineConfig({ enableChunkedPrefill: false }).maxNumBatchedTokens).toBe(32768);
    expect(resolveEngineConfig({ enableChunkedPrefill: false, maxModelLen: 1024 }).maxNumBatchedTokens).toBe(2048);
    expect(resolveEngineConfig({ maxNumBatchedTokens: 128 }).maxNumSeqs).toBe(128);
    expect(resolveEngineConfig({ maxModelLen: 4, maxNumSeqs: 2 }).maxNumBatchedTokens).toBe(8);
  });

  it('validates like vLLM, naming the fix', () => {
    expect(() => resolveEngineConfig({ enableChunkedPrefill: false, maxNumBatchedTokens: 2048 })).toThrow(
      /raise --max-num-batched-tokens/,
    );
    expect(() => resolveEngineConfig({ maxNumBatchedTokens: 128, maxNumSeqs: 256 })).toThrow(/must be ≥ --max-num-seqs 256/);
    expect(() => resolveEngineConfig({ gpuMemoryUtilization: 0 })).toThrow(/\(0, 1\]/);
    expect(() => resolveEngineConfig({ gpuMemoryUtilization: 0.25 })).toThrow(
      /no memory left for the KV cache at --gpu-memory-utilization 0.25.*raise it/,
    );
    expect(() => resolveEngineConfig({ gpuMemoryUtilization: 0.35 })).toThrow(/set --max-model-len ≤/);
    expect(resolveEngineConfig({ gpuMemoryUtilization: 0.35, maxModelLen: 8192 }).numGpuBlocks).toBeGreaterThan(1000);
    expect(() => resolveEngineConfig({ maxModelLen: 40000 })).toThrow(/max_position_embeddings/);
    expect(() => resolveEngineConfig({ blockSize: 12 })).toThrow(/one of/);
    expect(() => resolveEngineConfig({ maxNumSeqs: 0 })).toThrow(/integer ≥ 1, got 0/);
  });

  it('swap mode sizes the CPU pool from --swap-space (default 4 GiB)', () => {
    expect(resolveEngineConfig({ preemptionMode: 'swap' }).numCpuBlocks).toBe(Math.floor((4 * 1024 ** 3) / 917_504));
    expect(resolveEngineConfig({ preemptionMode: 'swap', swapSpace: 1 }).numCpuBlocks).toBe(1170);
    expect(resolveEngineConfig({ swapSpace: 8 }).numCpuBlocks).toBe(0);
  });
});

describe('clocks', () => {
  it('virtual clock runs callbacks in (time, insertion) order and supports cancel', () => {
    const c = virtualClock();
    const seen: string[] = [];
    c.at(5, () => seen.push('b'));
    c.at(1, () => seen.push('a'));
    c.at(5, () => seen.push('c'));
    const x = c.at(3, () => seen.push('x'));
    x.cancel();
    c.advance(4);
    expect(seen).toEqual(['a']);
    expect(c.now()).toBe(4);
    c.at(2, () => seen.push(`late@${c.now()}`)); // past time → runs at now
    c.runUntilIdle();
    expect(seen).toEqual(['a', 'late@4', 'b', 'c']);
    expect(c.pending).toBe(0);
  });

  it.each(['thread', 'spin', 'busy'] as const)('real clock (%s) never fires early and keeps order', async (mode) => {
    const c = realClock({ mode });
    const t0 = c.now();
    const fired: [number, number][] = [];
    await new Promise<void>((resolve) => {
      for (const d of [12, 3, 7])
        c.at(t0 + d, () => {
          fired.push([d, c.now() - t0]);
          if (fired.length === 3) resolve();
        });
      c.at(t0 + 5, () => fired.push([-1, 0])).cancel();
    });
    expect(fired.map((f) => f[0])).toEqual([3, 7, 12]);
    for (const [d, at] of fired) expect(at).toBeGreaterThanOrEqual(d);
  });
  it.each(['spin', 'busy'] as const)(
    'the %s clock gives the loop turns while it waits in place near a deadline (I/O is not held)',
    async (mode) => {
      // The whole wait is in place, in slices (napped or polled); 25 ms of it, so a few ms without a core on a
      // loaded CI machine cannot leave the wait with only the turn that ends it.
      const c = realClock({ mode, spinMs: 30 });
      const t0 = c.now();
      let turns = 0;
      let done = false;
      const tick = () => {
        if (done) return;
        turns++;
        setImmediate(tick);
      };
      setImmediate(tick);
      const firedAt = await new Promise<number>((resolve) => c.at(t0 + 25, () => resolve(c.now() - t0)));
      done = true;
      expect(firedAt).toBeGreaterThanOrEqual(25);
      // One turn per slice of SPIN_SLICE_MS, so at least a few over 25 ms (a held loop would give 0 or 1).
      expect(turns).toBeGreaterThanOrEqual(3);
    },
  );

  it('the spinning clock says how long past a deadline its thread slept, and counts none of its own work', async () => {
    /** Sets a deadline 5 ms ahead; resolves with what its callback read: asleep past it, and how late it ran. */
    const lateBy = (c: EngineClock) => {
      const at = c.now() + 5;
      return new Promise<[number, number]>((resolve) => c.at(at, () => resolve([c.sleptLateMs!(), c.now() - at])));
    };
    // Time that passes while the loop sleeps in its poll counts as wall and idle time alike: a clock and an idle
    // reading that jump 10 ms together, while the clock's timer is pending, stand for a wake-up 10 ms late.
    let jump = 0;
    const asleep = realClock({ now: () => performance.now() + jump, idleMs: () => performance.nodeTiming.idleTime + jump });
    setTimeout(() => (jump = 10), 1);
    const [slept, late] = await lateBy(asleep);
    expect(late).toBeGreaterThan(5);
    expect(slept).toBeGreaterThan(4); // the loop's few callbacks since the timer was set count as awake
    expect(slept).toBeLessThanOrEqual(late);
    expect(asleep.sleptLateMs!()).toBe(0); // outside a callback

    // A callback that keeps the loop busy past the deadline is the thread's own work, never sleep.
    const c = realClock();
    setTimeout(() => {
      const until = performance.now() + 12;
      while (performance.now() < until);
    }, 1);
    const [sleptBusy, lateBusy] = await lateBy(c);
    expect(lateBusy).toBeGreaterThan(5);
    expect(sleptBusy).toBe(0);

    // Deadlines within the last 1.5 ms are met by napping and polling: what slept past them is never more than the lateness.
    for (let i = 0; i < 20; i++) {
      const at = c.now() + 0.5;
      const [s, l] = await new Promise<[number, number]>((r) => c.at(at, () => r([c.sleptLateMs!(), c.now() - at])));
      expect(s).toBeGreaterThanOrEqual(0);
      expect(s).toBeLessThanOrEqual(l);
    }
  });

  it('LOADLAB_SIM_CLOCK picks spin (default), busy or thread, and names the fix for anything else', () => {
    expect(clockMode(undefined)).toBe('spin');
    expect(clockMode('')).toBe('spin');
    expect(clockMode('thread')).toBe('thread');
    expect(clockMode('busy')).toBe('busy');
    expect(() => clockMode('fast')).toThrow(/use spin \(the default\), busy or thread/);
  });
});

describe('CPU cost (micro-check, not a timed assertion)', () => {
  it('a step with 256 running requests', () => {
    const h = makeHarness();
    const rng = seededRng(12);
    for (let i = 0; i < 256; i++) submit(h, 0, randomPrompt(rng, 100), { maxTokens: 2000 });
    let outputs = 0;
    h.engine.onStep(() => outputs++);
    h.clock.advance(5000); // admit (≈2.7 s of prefill) and let the JIT warm up
    const steps0 = h.steps.length;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    h.clock.advance(5000);
    const cpu = process.cpuUsage(cpu0);
    const wallMs = performance.now() - t0;
    const steps = h.steps.length - steps0;
    expect(h.steps.at(-1)!.running).toBe(256);
    const perStep = (us: number) => (us / steps).toFixed(0);
    console.log(
      `per step at 256 running: CPU ${perStep(cpu.user + cpu.system)} µs, wall ${perStep(1000 * wallMs)} µs ` +
        `(${steps} steps; harness callbacks included; wall includes other processes on a shared machine)`,
    );
    h.engine.close();
    expect(steps).toBeGreaterThan(0);
  });
});
