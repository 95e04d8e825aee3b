/**
 * `runLoad({ workers })` and `loadlab run --workers N`: worker threads against a scripted SSE server
 * (real HTTP on 127.0.0.1). Invariants only: every index once, totals, the server's own in-flight
 * count, the plan's offsets, causality across threads; no wall-clock tolerances.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../src/cli/run';
import { loadRun } from '../src/run/loader';
import { runLoad } from '../src/runner/runner';
import type { ClientHealth } from '../src/runner/health';
import { threadCpuMs } from '../src/proc/cpu-times';
import { memoryReducerHeldOff } from '../src/proc/memory-reducer';
import { combineWorkerHealth } from '../src/runner/worker-health';
import { checkWorkers, roundRobin, splitEvenly } from '../src/runner/worker-split';
import { arrivalOffsets } from '../src/schedule/arrivals';
import { closedLoop, openLoop, timeline } from '../src/schedule/shapes';
import type { RequestRecord } from '../src/types';
import { makeRequest } from '../src/workload/workload';
import { capture, lines, readJson } from './helpers/cli-io';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';

let tmp: string;
const servers: ScriptedServer[] = [];
const server = async (gapMs: number, tokens: number) => {
  const s = await startScriptedServer({ firstTokenDelayMs: 2, gapMs, tokens });
  servers.push(s);
  return s;
};
const spec = makeRequest('hello', { maxTokens: 8 });
const sortedIndices = (rs: readonly { index: number }[]) => rs.map((r) => r.index).sort((a, b) => a - b);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-workers-'));
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(tmp, { recursive: true, force: true });
});

describe('how a run is shared among workers', () => {
  it('splits slots evenly and arrivals round-robin by index', () => {
    expect(splitEvenly(5, 2)).toEqual([3, 2]);
    expect(splitEvenly(8, 4)).toEqual([2, 2, 2, 2]);
    expect(roundRobin(7, 3, 1)).toEqual([1, 4]);
    expect(
      range(3)
        .flatMap((w) => roundRobin(10, 3, w))
        .sort((a, b) => a - b),
    ).toEqual(range(10));
  });
  it('refuses what it cannot share, naming the fix', () => {
    expect(checkWorkers(undefined, closedLoop(2), undefined)).toBe(1);
    expect(() => checkWorkers(0, closedLoop(2), undefined)).toThrow(/integer from 1 to 64.*workers: 2/);
    expect(() => checkWorkers(1.5, closedLoop(2), undefined)).toThrow(/integer from 1/);
    expect(() => checkWorkers(3, closedLoop(2), undefined)).toThrow(/use workers ≤ 2/);
    expect(() => checkWorkers(2, closedLoop(2), 5000)).toThrow(/durationMs.*workers: 1/);
    const conv = { kind: 'sessions', conversations: [], maxConcurrency: 1 } as never;
    expect(() => checkWorkers(2, conv, undefined)).toThrow(/sessions shape.*workers: 1/);
    // thread: one worker thread even for workers 1; the same limits, named for it
    expect(checkWorkers(undefined, closedLoop(2), undefined, true)).toBe(1);
    expect(checkWorkers(1, closedLoop(2), undefined, false)).toBe(1);
    expect(() => checkWorkers(1, closedLoop(2), 5000, true)).toThrow(
      /thread: true does not apply with durationMs.*leave thread unset/,
    );
    expect(() => checkWorkers(1, conv, undefined, true)).toThrow(/thread: true does not apply to a sessions shape/);
    expect(() => checkWorkers(1, closedLoop(2), undefined, 'yes')).toThrow(/thread must be true or false/);
  });
});

describe('runLoad with thread: true (one worker thread, as the lessons measure)', () => {
  it('sends from a worker thread: every index once, and the verdict covers that one worker', async () => {
    const s = await server(2, 8);
    const out = join(tmp, 'thread');
    const heldOff: boolean[] = [];
    const r = await runLoad({
      baseUrl: s.url,
      shape: closedLoop(3),
      thread: true,
      requests: 12,
      warmup: 1,
      workload: [spec],
      out,
      onRecord: () => heldOff.push(memoryReducerHeldOff()),
    });
    expect(r.manifest.status).toBe('complete');
    // V8's memory reducer stays off while the worker measures, and back on after (src/proc/memory-reducer.ts)
    expect(heldOff.length).toBe(13);
    expect(heldOff.every(Boolean)).toBe(true);
    expect(memoryReducerHeldOff()).toBe(false);
    const saved = loadRun(out);
    expect(sortedIndices(saved.records)).toEqual(range(13));
    expect(saved.records.every((x) => x.ok)).toBe(true);
    expect((await s.stats()).peakInFlight).toBeLessThanOrEqual(3);
    const client = saved.manifest.client as { workers: Array<{ worker: number }> };
    expect(client.workers.map((w) => w.worker)).toEqual([0]);
  });
});

describe('the verdict over workers', () => {
  const h = (over: Partial<ClientHealth> = {}): ClientHealth => ({
    eventLoopDelayP50Ms: 0.1,
    eventLoopDelayP99Ms: 1,
    eventLoopDelayMaxMs: 2,
    cpuUserMs: 100,
    cpuSystemMs: 0,
    wallMs: 1000,
    cpuPercentOfOneCore: 10,
    loadAverage1m: 0.5,
    cores: 2,
    clientBound: false,
    reasons: [],
    ...over,
  });
  it('names the worker whose loop was late, and the worker whose thread used a whole core', () => {
    const late = h({ eventLoopDelayP99Ms: 9, clientBound: true, reasons: ['The load generator was the bottleneck: …'] });
    const r = combineWorkerHealth([{ ...h(), threadCpuPercentOfOneCore: 97 }, late, h()], h({ cpuPercentOfOneCore: 120 }));
    expect(r.clientBound).toBe(true);
    expect(r.eventLoopDelayP99Ms).toBe(9); // the worst worker's
    expect(r.cpuPercentOfOneCore).toBe(120); // the whole process's
    expect(r.workers.map((w) => w.clientBound)).toEqual([true, true, false]);
    expect(r.reasons.some((x) => x.startsWith('worker 0:') && /97 % of one core/.test(x))).toBe(true);
    expect(r.reasons.some((x) => x.startsWith('worker 1:'))).toBe(true);
    expect(r.reasons.some((x) => x.startsWith('worker 2:'))).toBe(false);
  });
  it('is healthy when every worker is, and flags a process that used every core', () => {
    expect(combineWorkerHealth([h(), h()], h()).clientBound).toBe(false);
    const busy = combineWorkerHealth([h(), h()], h({ cpuPercentOfOneCore: 195 }));
    expect(busy.reasons).toEqual([
      expect.stringMatching(/2 worker threads used 195 % of one core, more than 90 % of all 2 cores/),
    ]);
  });
  it("reads the calling thread's own CPU, never going back", () => {
    const a = threadCpuMs();
    if (a === undefined) return; // not Linux: nothing to read (and nothing is claimed)
    let x = 0;
    for (let i = 0; i < 2e6; i++) x += Math.sqrt(i);
    expect(x).toBeGreaterThan(0);
    expect(threadCpuMs()!).toBeGreaterThanOrEqual(a);
  });
});

describe('runLoad with 2 workers', () => {
  it('closed loop: every index once on disk, as many records as requests, never more than C in flight at the server', async () => {
    const s = await server(2, 8);
    const out = join(tmp, 'closed');
    const r = await runLoad({ baseUrl: s.url, shape: closedLoop(4), workers: 2, requests: 40, warmup: 3, workload: [spec], out });
    expect(r.manifest.status).toBe('complete');
    const saved = loadRun(out);
    expect(sortedIndices(saved.records)).toEqual(range(43));
    expect(saved.records.filter((x) => !x.warmup)).toHaveLength(40);
    expect(saved.records.every((x) => x.ok)).toBe(true);
    expect(new Set(lines(join(out, 'requests.jsonl')).map((x) => x.requestId)).size).toBe(43);
    const stats = await s.stats();
    expect(stats.requests).toBe(43);
    expect(stats.peakInFlight).toBeLessThanOrEqual(4);
    expect(r.peakInFlight).toBeLessThanOrEqual(4);
    // the verdict covers each worker, in the manifest and in the summary
    const client = saved.manifest.client as {
      workers: Array<{ worker: number; threadCpuPercentOfOneCore?: number }>;
      sent: number;
    };
    expect(client.workers.map((w) => w.worker)).toEqual([0, 1]);
    if (threadCpuMs() !== undefined) expect(client.workers.every((w) => (w.threadCpuPercentOfOneCore ?? -1) >= 0)).toBe(true);
    expect(client.sent).toBe(43);
    expect(readJson(join(out, 'summary.json')).health.workers.map((w: { worker: number }) => w.worker)).toEqual([0, 1]);
  });

  it("open loop: each send is intended at the plan's offset on one clock, never sent early, received after it was sent", async () => {
    const s = await server(1, 4);
    const shape = openLoop(200, { seed: 7 });
    const n = 40;
    const r = await runLoad({ baseUrl: s.url, shape, workers: 2, requests: n, workload: [spec], out: false });
    const byIndex = new Map<number, RequestRecord>(r.records.map((x) => [x.index, x]));
    expect(sortedIndices(r.records)).toEqual(range(n));
    const planned = arrivalOffsets(shape, n)!;
    const start = byIndex.get(0)!.intendedStartMs - planned[0];
    for (const i of range(n)) {
      const rec = byIndex.get(i)!;
      expect(Math.abs(rec.intendedStartMs - (start + planned[i]))).toBeLessThan(1e-6); // one shared start, the plan's offsets
      expect(rec.startMs).toBeGreaterThanOrEqual(rec.intendedStartMs); // paced on the same clock: never early
    }
    // causality across threads: the server (this thread) got each request after its worker stamped the send
    const origin = r.manifest.clock.originEpochMs;
    const seen = (await s.stats()).recent;
    for (const rec of r.records) {
      const got = seen.find((q) => q.requestId === rec.requestId)!;
      expect(got.receivedAtMs - origin).toBeGreaterThanOrEqual(rec.startMs);
      expect(got.receivedAtMs - origin).toBeLessThanOrEqual(rec.endMs);
    }
  });

  it('workers start from their TypeScript sources through tsx too (LOADLAB_NO_DIST=1)', async () => {
    const s = await server(1, 2);
    const before = process.env.LOADLAB_NO_DIST;
    process.env.LOADLAB_NO_DIST = '1';
    try {
      const r = await runLoad({ baseUrl: s.url, shape: closedLoop(2), workers: 2, requests: 6, workload: [spec], out: false });
      expect(sortedIndices(r.records)).toEqual(range(6));
    } finally {
      if (before === undefined) delete process.env.LOADLAB_NO_DIST;
      else process.env.LOADLAB_NO_DIST = before;
    }
  });

  it('timeline: split round-robin, every entry sent once', async () => {
    const s = await server(1, 2);
    const r = await runLoad({
      baseUrl: s.url,
      shape: timeline([0, 0, 5, 5, 10, 30, 30]),
      workers: 3,
      workload: [spec],
      out: false,
    });
    expect(sortedIndices(r.records)).toEqual(range(7));
    expect((await s.stats()).requests).toBe(7);
  });

  it('interrupt: saves what finished and the aborted in-flight ones, status interrupted, nothing duplicated', async () => {
    const s = await server(20, 30);
    const out = join(tmp, 'interrupt');
    const stop = new AbortController();
    let seen = 0;
    const onRecord = () => ++seen === 4 && stop.abort();
    const r = await runLoad({
      baseUrl: s.url,
      shape: closedLoop(4),
      workers: 2,
      requests: 200,
      workload: [spec],
      out,
      signal: stop.signal,
      onRecord,
      abortOnSigint: false,
    });
    expect(r.manifest.status).toBe('interrupted');
    const saved = loadRun(out);
    expect(saved.manifest.status).toBe('interrupted');
    expect(saved.records).toHaveLength(r.records.length);
    expect(new Set(saved.records.map((x) => x.index)).size).toBe(saved.records.length);
    expect(r.records.length).toBeLessThan(200);
    const codes = saved.records.map((x) => (x.ok ? 'ok' : x.error?.code));
    expect(codes).toContain('ok');
    expect(codes).toContain('aborted');
    expect((saved.manifest.client as { sent: number }).sent).toBe(saved.records.length);
  });
});

describe('a worker that dies mid-run (LOADLAB_TEST_WORKER_CRASH, as a crash would)', () => {
  it("fails the run but keeps a record for every request sent: the dead worker's as aborted, the others' as they ended", async () => {
    const s = await server(20, 10); // 200 ms streams: requests are in flight when the worker dies
    const out = join(tmp, 'crash');
    process.env.LOADLAB_TEST_WORKER_CRASH = '1:3';
    let err: unknown;
    try {
      await runLoad({ baseUrl: s.url, shape: closedLoop(4), workers: 2, requests: 20, workload: [spec], out, progress: false });
    } catch (e) {
      err = e;
    } finally {
      delete process.env.LOADLAB_TEST_WORKER_CRASH;
    }
    expect(String(err)).toMatch(/worker 1 failed: exited with code 70/);
    expect(memoryReducerHeldOff()).toBe(false); // released after a failed run too
    const saved = loadRun(out);
    expect(saved.manifest.status).toBe('failed');
    const ids = saved.records.map((x) => x.requestId);
    expect(new Set(ids).size).toBe(ids.length); // nothing twice
    expect(new Set(saved.records.map((x) => x.index)).size).toBe(ids.length);
    // every request the server saw has its record on disk
    for (const q of (await s.stats()).recent) expect(ids).toContain(q.requestId);
    const lost = saved.records.filter((x) => /worker 1 failed with this request in flight/.test(x.error?.message ?? ''));
    expect(lost.length).toBeGreaterThanOrEqual(1); // its 1st and 2nd requests were still streaming
    expect(lost.every((x) => x.error?.code === 'aborted' && !x.ok && x.chunkMs.length === 0)).toBe(true);
    expect(lost.every((x) => x.startMs >= x.intendedStartMs && x.endMs >= x.startMs)).toBe(true);
    // worker 0 was stopped, not killed: its requests ended as records of its own (ok, or aborted with timings)
    expect(saved.records.some((x) => x.ok)).toBe(true);
  });
});

describe('SIGINT during a run with workers (Ctrl-C, or "interrupt kernel" in a notebook)', () => {
  it('stops every worker, keeps their in-flight records as aborted, writes interrupted, and the process exits', () => {
    const out = join(tmp, 'sigint');
    const fixture = join(__dirname, 'fixtures', 'sigint-workers-run.ts');
    const child = spawnSync(process.execPath, ['--import', 'tsx', fixture, out], { encoding: 'utf8', timeout: 60_000 });
    expect(child.status, child.stderr).toBe(0); // caught, and no worker thread kept the process alive
    const result = JSON.parse(child.stdout.trim().split('\n').pop()!);
    expect(result.status).toBe('interrupted');
    expect(result.sigintListeners).toBe(0);
    expect(result.codes).toContain('ok');
    expect(result.codes).toContain('aborted');
    expect(new Set(result.indices).size).toBe(result.records);
    const saved = loadRun(out);
    expect(saved.manifest.status).toBe('interrupted');
    expect(sortedIndices(saved.records)).toEqual([...result.indices].sort((a: number, b: number) => a - b));
  });
});

describe('loadlab run --workers', () => {
  const base = ['--base-url', 'http://127.0.0.1:9', '--num-prompts', '4', '--quiet'];
  it.each([
    [['--workers', '0'], /--workers must be an integer from 1 to 64, got '0', e\.g\. --workers 2/],
    [['--workers', '1.5'], /--workers must be an integer/],
    [['--workers', '3', '--max-concurrency', '2'], /use --workers ≤ 2/],
    [['--workers', '2', '--duration', '5', '--max-concurrency', '4'], /does not apply with --duration.*--num-prompts/],
    [
      [
        '--workers',
        '2',
        '--max-concurrency',
        '2',
        '--dataset-name',
        'sharegpt',
        '--dataset-path',
        'datasets/sample-sharegpt.json',
        '--multi-turn',
      ],
      /--workers 2 does not apply with --multi-turn.*drop --workers/,
    ],
  ])('%j exits 2 naming the fix', async (flags, message) => {
    const { out, io } = capture();
    expect(await runCommand([...base, '--out', join(tmp, 'bad'), ...flags], io)).toBe(2);
    expect(out.stderr).toMatch(message);
  });

  it('runs a closed loop from 2 workers into one run folder', async () => {
    const s = await server(1, 4);
    const out = join(tmp, 'cli');
    const { out: o, io } = capture();
    const code = await runCommand(
      ['--base-url', s.url, '--num-prompts', '12', '--max-concurrency', '2', '--workers', '2', '--out', out, '--quiet'],
      io,
    );
    expect(code, o.stderr).toBe(0);
    expect(sortedIndices(lines(join(out, 'requests.jsonl')))).toEqual(range(12));
  });
});
