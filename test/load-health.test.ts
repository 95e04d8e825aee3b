import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { healthFlag } from '../src/view/tables';
import { pastBound } from '../src/client-stall';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/client/client';
import {
  assessClientHealth,
  assessSimLateness,
  startClientHealth,
  startSimLatenessWatch,
  type ClientHealth,
  type ClientHealthNumbers,
} from '../src/runner/health';
import { makeRequest } from '../src/workload/workload';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';

const healthy: ClientHealthNumbers = {
  eventLoopDelayP50Ms: 0.2,
  eventLoopDelayP99Ms: 1.5,
  eventLoopDelayMaxMs: 3,
  cpuUserMs: 400,
  cpuSystemMs: 100,
  wallMs: 2000,
  cpuPercentOfOneCore: 25,
  loadAverage1m: 0.5,
  cores: 2,
};

describe('assessClientHealth (pure)', () => {
  it('healthy numbers: not client-bound, no reasons', () => {
    expect(assessClientHealth(healthy)).toEqual({ clientBound: false, reasons: [] });
  });

  it('event-loop delay p99 above 5 ms: client-bound, in plain words with the numbers', () => {
    const v = assessClientHealth({ ...healthy, eventLoopDelayP99Ms: 12.34, eventLoopDelayMaxMs: 31, cpuPercentOfOneCore: 80 });
    expect(v.clientBound).toBe(true);
    expect(v.reasons).toHaveLength(1);
    expect(v.reasons[0]).toBe(
      'The load generator was the bottleneck: event-loop delay p99 12.3 ms > 5 ms (max 31.0 ms). ' +
        "Its timings include Node's own delay. Run fewer streams per process, and don't run other heavy cells at the same time.",
    );
  });

  it('a late loop with little CPU of its own blames the other programs on the machine', () => {
    const v = assessClientHealth({ ...healthy, eventLoopDelayP99Ms: 9, cpuPercentOfOneCore: 12, loadAverage1m: 6.25 });
    expect(v.reasons[0]).toContain('used only 12 % of a core, so other programs took the CPU (load average 6.3 on 2 cores)');
  });

  it('CPU above 90 % of one core: client-bound; custom thresholds apply', () => {
    const busy = { ...healthy, cpuPercentOfOneCore: 96 };
    const v = assessClientHealth(busy);
    expect(v.clientBound).toBe(true);
    expect(v.reasons[0]).toMatch(/^The load generator was the bottleneck: it used 96 % of one core \(> 90 %\)/);
    expect(assessClientHealth(busy, { cpuPercent: 98 }).clientBound).toBe(false);
    expect(assessClientHealth({ ...healthy, eventLoopDelayP99Ms: 3 }, { delayP99Ms: 2 }).clientBound).toBe(true);
  });

  it('CPU is not judged on runs shorter than 500 ms (start-up work reads as 100 %)', () => {
    expect(assessClientHealth({ ...healthy, wallMs: 200, cpuPercentOfOneCore: 100 }).clientBound).toBe(false);
  });
});

describe('assessSimLateness (pure)', () => {
  it('flags p99 above 2 ms, not at or below it, never an unknown p99', () => {
    expect(assessSimLateness(1.2)).toEqual({ p99Ms: 1.2, simBehind: false, reasons: [] });
    expect(assessSimLateness(2).simBehind).toBe(false);
    expect(assessSimLateness(undefined).simBehind).toBe(false);
    const v = assessSimLateness(4.56);
    expect(v.simBehind).toBe(true);
    expect(v.reasons[0]).toMatch(/^The simulator fell behind real time: its step lateness p99 4\.6 ms > 2 ms/);
    expect(assessSimLateness(4.56, 5).simBehind).toBe(false);
  });
  it('words a p99 just past its bound with the digits that show it is past (2.04 ms > 2 ms, not 2.0 ms > 2 ms)', () => {
    expect(assessSimLateness(2.04).reasons[0]).toContain('p99 2.04 ms > 2 ms');
    expect(assessSimLateness(2.0004).reasons[0]).toContain('p99 2.000 ms, just over 2 ms, so every');
    expect(pastBound(5.2, 5)).toBe('5.2 ms > 5 ms');
    expect(pastBound(5.004, 5)).toBe('5.004 ms > 5 ms');
  });
  it('says how many steps the p99 rests on, and when they are too few for more than the latest one or two', () => {
    expect(assessSimLateness(4.56, 2, undefined, 57).reasons[0]).toContain(
      'p99 4.6 ms > 2 ms over only 57 steps (so the p99 is the latest step or two), so every',
    );
    expect(assessSimLateness(4.56, 2, undefined, 500).reasons[0]).toContain('p99 4.6 ms > 2 ms over 500 steps, so every');
    expect(assessSimLateness(1, 2, undefined, 57)).toEqual({ p99Ms: 1, simBehind: false, reasons: [], steps: 57 });
  });
});

describe('assessSimLateness names what the CPU figures show', () => {
  const base = { wallMs: 20_000, threadCpuPercent: 24.6, threadWaitMs: 350 };
  const why = (cpu: Parameters<typeof assessSimLateness>[2]) => assessSimLateness(3.2, 2, cpu).reasons[0];
  it('the figures of the interval, and the late steps split by cause', () => {
    const w = why({ ...base, stealPercent: 0.1, lateMs: { waitingForCpu: 120.4, other: 30 } });
    expect(w).toContain("Over the run's 20.0 s, its engine thread used 25 % of a core, waited 350 ms in all for a core");
    expect(w).toContain("steal was 0.1 % of this machine's CPU");
    expect(w).toContain('late by 150 ms in all: 120 ms waiting for a core (other programs or threads here), 30 ms running');
    expect(w).toMatch(/Close other busy programs \(or notebook cells\), or run fewer streams\.$/);
  });
  it('late while running, with steal: the hypervisor, which nothing here can change', () => {
    const w = why({ ...base, stealPercent: 2.19, lateMs: { waitingForCpu: 10, other: 200 } });
    expect(w).toMatch(
      /The VM's host took 2\.2 % of this machine's CPU \(steal\): nothing here can change that; rerun later, or read the ITL\/TPOT tails as upper bounds\.$/,
    );
  });
  it('late while running, no steal: its own work', () => {
    expect(why({ ...base, stealPercent: 0.1, lateMs: { waitingForCpu: 10, other: 200 } })).toMatch(/Run fewer streams\.$/);
  });
  it("late in the simulator's own garbage collection: named, and said to be the simulator's cost", () => {
    const w = why({ ...base, stealPercent: 0.1, lateMs: { waitingForCpu: 10, gc: 40, other: 5 } });
    expect(w).toContain(
      'late by 55 ms in all: 10 ms waiting for a core (other programs or threads here), 40 ms in its own garbage collection, 5 ms running',
    );
    expect(w).toMatch(/the simulator's own cost \(LoadLab's, not the modelled GPU's\)/);
    // No `gc` figure (a simulator without that label): the sentence as before.
    expect(why({ ...base, stealPercent: 0.1, lateMs: { waitingForCpu: 10, other: 200 } })).not.toContain('garbage');
    // Waiting for a core still leads when it is the largest part.
    expect(why({ ...base, stealPercent: 0.1, lateMs: { waitingForCpu: 50, gc: 40, other: 5 } })).toMatch(
      /Close other busy programs/,
    );
  });
  it('late while still asleep past the deadline: the machine woke it late, named with its figure', () => {
    const w = why({ ...base, stealPercent: 0, lateMs: { waitingForCpu: 10, wokenLate: 30, gc: 2, other: 5 } });
    expect(w).toContain(
      'late by 47 ms in all: 10 ms waiting for a core (other programs or threads here), 30 ms still asleep past the deadline (woken late), 2 ms in its own garbage collection, 5 ms running',
    );
    expect(w).toMatch(/woken late by the kernel or, on a virtual machine, by its host .* not the modelled GPU\. Rerun the point/);
    // The largest cause leads, the first of equals: waiting for a core, then woken late.
    expect(why({ ...base, lateMs: { waitingForCpu: 30, wokenLate: 30, other: 5 } })).toMatch(/Close other busy programs/);
    expect(why({ ...base, lateMs: { waitingForCpu: 3, wokenLate: 5, other: 5 } })).toMatch(/Rerun the point/);
  });
  it('no late-step figures: steal named when it is there, and the generic advice', () => {
    const w = why({ ...base, stealPercent: 1 });
    expect(w).toContain('nothing here can change that');
    expect(w).toMatch(/Close other busy programs/);
    expect(why({ ...base, stealPercent: 0.2 })).not.toContain('nothing here can change that');
  });
  it('no figures at all (a server without them): the generic advice; the figures ride along unflagged too', () => {
    expect(assessSimLateness(3.2).reasons[0]).toMatch(/read high\. Close other busy programs/);
    expect(assessSimLateness(1, 2, base)).toEqual({ p99Ms: 1, simBehind: false, reasons: [], cpu: base });
  });
});

describe('startSimLatenessWatch', () => {
  /** The lateness histogram as the simulator renders it, with cumulative bucket counts. */
  const text = (counts: number[]) =>
    [
      '# HELP loadlab:sim_step_lateness_seconds Simulator only: lateness.',
      '# TYPE loadlab:sim_step_lateness_seconds histogram',
      ...['0.001', '0.002', '0.005', '0.01', '+Inf'].map(
        (le, i) => `loadlab:sim_step_lateness_seconds_bucket{engine="0",le="${le}"} ${counts[i]}`,
      ),
      `loadlab:sim_step_lateness_seconds_sum{engine="0"} 0.1`,
      `loadlab:sim_step_lateness_seconds_count{engine="0"} ${counts[4]}`,
      '',
    ].join('\n');

  /** A /metrics server answering the given bodies in turn (404 when `null`). */
  async function metricsServer(bodies: Array<string | null>) {
    let i = 0;
    const server = createServer((_req, res) => {
      const body = bodies[Math.min(i++, bodies.length - 1)];
      if (body === null) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise((r) => server.close(r)),
    };
  }

  it('judges the p99 of the steps between the two scrapes', async () => {
    // Before: 100 steps ≤ 1 ms. During the run: 90 more ≤ 1 ms and 10 in (5, 10] ms → p99 ≈ 9.5 ms.
    const s = await metricsServer([text([100, 100, 100, 100, 100]), text([190, 190, 190, 200, 200])]);
    try {
      const watch = await startSimLatenessWatch(`${s.url}/v1`);
      const v = await watch.finish();
      expect(v.p99Ms).toBeCloseTo(9.5, 6);
      expect(v.simBehind).toBe(true);
      expect(v.reasons[0]).toContain('step lateness p99 9.5 ms > 2 ms over 100 steps');
      expect(v.steps).toBe(100);
    } finally {
      await s.close();
    }
  });

  it("reads the engine thread's CPU, its wait and the host's steal over the same interval", async () => {
    const counters = (cpu: number, wait: number, host: number, steal: number) =>
      [
        ['loadlab:sim_thread_cpu_seconds', cpu],
        ['loadlab:sim_thread_wait_seconds', wait],
        ['loadlab:sim_host_cpu_seconds', host],
        ['loadlab:sim_host_steal_seconds', steal],
      ]
        .map(([n, v]) => `# TYPE ${n}_total counter\n${n}_total{engine="0"} ${v}\n`)
        .join('') +
      '# TYPE loadlab:sim_late_step_seconds_total counter\n' +
      `loadlab:sim_late_step_seconds_total{cause="waiting_for_cpu",engine="0"} ${wait / 10}\n` +
      `loadlab:sim_late_step_seconds_total{cause="gc",engine="0"} ${steal / 100}\n` +
      `loadlab:sim_late_step_seconds_total{cause="other",engine="0"} ${steal / 10}\n`;
    const s = await metricsServer([
      text([100, 100, 100, 100, 100]) + counters(10, 1, 1000, 5),
      text([190, 190, 190, 200, 200]) + counters(10.5, 1.3, 1040, 5.8),
    ]);
    try {
      const v = await (await startSimLatenessWatch(s.url)).finish();
      const wall = v.cpu!.wallMs;
      expect(wall).toBeGreaterThan(0);
      // 0.5 s of CPU over the wall. Both figures are rounded to 0.01 (ms and %), and the wall of two quick scrapes
      // can be about 1 ms, so the share is checked against the walls the rounded one stands for.
      const pct = v.cpu!.threadCpuPercent!;
      expect(pct).toBeGreaterThanOrEqual(50_000 / (wall + 0.005) - 0.005);
      expect(pct).toBeLessThanOrEqual(50_000 / (wall - 0.005) + 0.005);
      expect(v.cpu!.threadWaitMs).toBeCloseTo(300, 6);
      expect(v.cpu!.stealPercent).toBeCloseTo(2, 6); // 0.8 s of 40 s
      expect(v.reasons[0]).toContain("The VM's host took 2.0 % of this machine's CPU (steal)");
      expect(v.cpu!.lateMs!.waitingForCpu).toBeCloseTo(30, 6);
      expect(v.cpu!.lateMs!.gc).toBeCloseTo(8, 6);
      expect(v.cpu!.lateMs!.other).toBeCloseTo(80, 6);
    } finally {
      await s.close();
    }
  });

  it('a server without the series (a real vLLM) or without /metrics is never flagged', async () => {
    const s = await metricsServer(['# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n', null]);
    try {
      expect(await (await startSimLatenessWatch(s.url)).finish()).toEqual({ p99Ms: undefined, simBehind: false, reasons: [] });
      expect(await (await startSimLatenessWatch(s.url)).finish()).toEqual({ p99Ms: undefined, simBehind: false, reasons: [] });
    } finally {
      await s.close();
    }
  });
});

describe('startClientHealth during a real run', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    // 8 streams × 30 tokens at 10 ms: a light, ~0.3 s run per request.
    server = await startScriptedServer({ firstTokenDelayMs: 5, gapMs: 10, tokens: 30 });
  });
  afterAll(async () => {
    await server.close();
  });

  /** Closed loop of 8 streams for about `ms`, watched by startClientHealth. */
  async function watchedRun(ms: number): Promise<{ health: ClientHealth; ok: number }> {
    const client = createClient({ baseUrl: server.url, model: 'scripted', connections: 8 });
    const spec = makeRequest('hi', { maxTokens: 30 });
    // Warm up (JIT, first connections) outside the watch, as runLoad's target probe does.
    await Promise.all(Array.from({ length: 8 }, (_, i) => client.send(spec, { index: -1 - i, intendedStartMs: 0 })));
    const watch = startClientHealth();
    const end = performance.now() + ms;
    let ok = 0;
    let index = 0;
    const lane = async () => {
      while (performance.now() < end) {
        const r = await client.send(spec, { index: index++, intendedStartMs: performance.now() });
        if (r.ok) ok++;
      }
    };
    await Promise.all(Array.from({ length: 8 }, lane));
    const health = watch.stop();
    await client.close();
    return { health, ok };
  }

  it('flags client-bound when a cell blocks the event loop 30 ms every 50 ms', async () => {
    const blocker = setInterval(() => {
      const t = performance.now();
      while (performance.now() - t < 30); // a synchronous "heavy cell"
    }, 50);
    let result: Awaited<ReturnType<typeof watchedRun>>;
    try {
      result = await watchedRun(1000);
    } finally {
      clearInterval(blocker);
    }
    const { health, ok } = result;
    expect(ok).toBeGreaterThan(0);
    expect(health.eventLoopDelayP99Ms).toBeGreaterThan(15);
    expect(health.clientBound).toBe(true);
    expect(health.reasons.join(' ')).toContain('The load generator was the bottleneck: event-loop delay p99');
    expect(health.wallMs).toBeGreaterThan(900);
  });

  // On a shared machine another process can starve this one for > 5 ms; that is a real
  // (correctly flagged) client-bound run, so allow a retry instead of widening the threshold.
  it('does not flag a normal run', { retry: 2 }, async () => {
    const { health, ok } = await watchedRun(1000);
    expect(ok).toBeGreaterThan(8);
    expect(health.reasons).toEqual([]);
    expect(health.clientBound).toBe(false);
    expect(health.eventLoopDelayP99Ms).toBeLessThanOrEqual(5);
    expect(health.cpuPercentOfOneCore).toBeGreaterThan(0);
    expect(health.cpuUserMs + health.cpuSystemMs).toBeGreaterThan(0);
  });

  it('runLoad puts the verdict into the run summary (and summary.json) when a cell blocks the loop', async () => {
    const blocker = setInterval(() => {
      const t = performance.now();
      while (performance.now() - t < 30);
    }, 50);
    let run: Awaited<ReturnType<typeof runLoad>>;
    try {
      run = await runLoad({
        baseUrl: server.url,
        model: 'scripted',
        workload: [makeRequest('hi', { maxTokens: 30 })],
        requests: 24,
        shape: closedLoop(8),
        out: false,
      });
    } finally {
      clearInterval(blocker);
    }
    expect(run.summary.health?.clientBound).toBe(true);
    expect(run.summary.health?.warnings.join(' ')).toContain('The load generator was the bottleneck');
    expect(healthFlag(run.summary)).toMatch(/^⚠ CLIENT-BOUND: /);
  });

  it('stop() is idempotent', () => {
    const w = startClientHealth();
    const a = w.stop();
    expect(w.stop()).toBe(a);
  });
});
