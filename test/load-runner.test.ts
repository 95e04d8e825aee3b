import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../src/runner/runner';
import { burst, closedLoop, openLoop, timeline } from '../src/schedule/shapes';
import { longPlusShort, makeRequest } from '../src/workload/workload';
import type { RequestRecord } from '../src/types';
import { closedPort, spawnScriptedServer, startScriptedServer, type ScriptedServer } from './helpers/sse-server';

const spec = makeRequest('你好', { maxTokens: 4 });
const readJson = (f: string) => JSON.parse(readFileSync(f, 'utf8'));
const readLines = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RequestRecord);

let tmp: string;
let fast: ScriptedServer;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-runner-'));
  fast = await startScriptedServer({
    firstTokenDelayMs: 20,
    gapMs: 5,
    tokens: 4,
    routes: {
      mid: { firstTokenDelayMs: 20, gapMs: 10, tokens: 10 },
      slow: { firstTokenDelayMs: 20, gapMs: 50, tokens: 40 },
    },
  });
});
afterAll(async () => {
  await fast.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('runLoad', () => {
  it('closed loop: in-flight reaches C, never more; records on disk as they finish; warm-up excluded', async () => {
    const dir = join(tmp, 'closed');
    const seenOnDisk: number[] = [];
    let count = 0;
    const r = await runLoad({
      baseUrl: fast.url,
      workload: [spec],
      requests: 12,
      shape: closedLoop(4),
      warmup: 2,
      out: dir,
      onRecord: () => {
        count++;
        seenOnDisk.push(readLines(join(dir, 'requests.jsonl')).length - count);
      },
    });
    expect(r.dir).toBe(dir);
    expect(r.peakInFlight).toBe(4);
    expect(r.manifest.status).toBe('complete');
    expect(r.manifest.target.model).toBe('scripted');
    expect(seenOnDisk.every((d) => d >= 0)).toBe(true); // each record was on disk before onRecord (batched: a turn's lines come together)
    expect(r.records).toHaveLength(14);
    const warm = r.records.filter((x) => x.warmup);
    expect(warm.map((x) => x.index).sort()).toEqual([0, 1]);
    expect(
      r.records
        .filter((x) => !x.warmup)
        .map((x) => x.index)
        .sort((a, b) => a - b),
    ).toEqual(Array.from({ length: 12 }, (_, i) => i + 2));
    expect(r.summary.requests).toBe(12);
    expect(r.summary.completed).toBe(12);
    const onDisk = readLines(join(dir, 'requests.jsonl'));
    expect(onDisk).toHaveLength(14);
    expect(readJson(join(dir, 'summary.json')).requests).toBe(12);
    expect(readJson(join(dir, 'manifest.json')).status).toBe('complete');
    // one origin: the warm-ups come first and start near 0
    const first = Math.min(...r.records.map((x) => x.startMs));
    expect(first).toBeGreaterThanOrEqual(0);
    expect(first).toBeLessThan(1000);
    for (const x of r.records) {
      expect(x.ttftMs!).toBeLessThanOrEqual(x.e2eMs!);
      expect(x.queueMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('open loop with maxConcurrency never exceeds the cap and shows the wait as queueMs', async () => {
    const r = await runLoad({
      baseUrl: fast.routeUrl('mid'),
      model: 'scripted', // routes have no /v1/models: the model must be given
      workload: [spec],
      requests: 6,
      shape: openLoop(200, { burstiness: Infinity, maxConcurrency: 2 }),
      out: false,
    });
    expect(r.dir).toBeUndefined();
    expect(r.peakInFlight).toBe(2);
    const queued = r.records.filter((x) => x.queueMs > 50);
    expect(queued.length).toBeGreaterThan(0);
    const intended = r.records.map((x) => x.intendedStartMs).sort((a, b) => a - b);
    for (let i = 1; i < intended.length; i++) expect(intended[i] - intended[i - 1]).toBeCloseTo(5, 6);
  }, 20_000);

  it('timeline carries its requests; intended times follow the script', async () => {
    const shape = longPlusShort({ longPrompt: 'long '.repeat(50), shortCount: 5, shortAtMs: 40, maxTokens: 2 });
    const r = await runLoad({ baseUrl: fast.url, shape, out: false });
    expect(r.records).toHaveLength(6);
    const long = r.records.find((x) => x.tag === 'long')!;
    const shorts = r.records.filter((x) => x.tag === 'short');
    expect(shorts).toHaveLength(5);
    for (const s of shorts) {
      expect(s.intendedStartMs - long.intendedStartMs).toBeCloseTo(40, 6);
      expect(s.startMs).toBeGreaterThanOrEqual(s.intendedStartMs);
    }
    expect(r.peakInFlight).toBeLessThanOrEqual(6);
  });

  it('burst sends everything at once', async () => {
    const r = await runLoad({ baseUrl: fast.routeUrl('mid'), model: 'scripted', workload: [spec], shape: burst(8), out: false });
    expect(r.records).toHaveLength(8);
    expect(r.peakInFlight).toBe(8);
    expect(new Set(r.records.map((x) => x.intendedStartMs)).size).toBe(1);
  }, 20_000);

  it('abort mid-run: aborted records, summary written, manifest interrupted', async () => {
    const dir = join(tmp, 'aborted');
    const ac = new AbortController();
    const progress: number[] = [];
    setTimeout(() => ac.abort(), 400);
    const r = await runLoad({
      baseUrl: fast.routeUrl('slow'),
      model: 'scripted', // routes have no /v1/models: the model must be given
      workload: [spec],
      requests: 20,
      shape: closedLoop(4),
      out: dir,
      signal: ac.signal,
      progress: (p) => progress.push(p.inFlight),
    });
    expect(r.manifest.status).toBe('interrupted');
    expect(r.records).toHaveLength(4);
    expect(r.records.every((x) => x.error?.code === 'aborted')).toBe(true);
    expect(readJson(join(dir, 'manifest.json')).status).toBe('interrupted');
    const summary = readJson(join(dir, 'summary.json'));
    expect(summary.requests).toBe(4);
    expect(summary.errors.aborted).toBe(4);
    expect(readLines(join(dir, 'requests.jsonl'))).toHaveLength(4);
    expect(progress.length).toBeGreaterThan(0);
  }, 20_000);

  it('a server that dies midway leaves every request on disk with an error code', async () => {
    const srv = await spawnScriptedServer({ firstTokenDelayMs: 10, gapMs: 20, tokens: 6 });
    const dir = join(tmp, 'dies');
    setTimeout(() => void srv.close(), 500);
    const r = await runLoad({ baseUrl: srv.url, workload: [spec], requests: 30, shape: closedLoop(3), out: dir });
    await srv.close();
    const onDisk = readLines(join(dir, 'requests.jsonl'));
    expect(onDisk).toHaveLength(30);
    const failed = onDisk.filter((x) => !x.ok);
    expect(failed.length).toBeGreaterThan(0);
    for (const x of failed) expect(['connection_reset', 'connection_refused', 'incomplete']).toContain(x.error?.code);
    expect(r.summary.failed).toBe(failed.length);
    expect(readJson(join(dir, 'manifest.json')).status).toBe('complete');
  }, 30_000);

  it('unreachable target and unknown model fail before any load, naming the fix', async () => {
    const port = await closedPort();
    await expect(runLoad({ baseUrl: `http://127.0.0.1:${port}`, workload: [spec], shape: burst(), out: false })).rejects.toThrow(
      new RegExp(`Cannot reach the server at http://127\\.0\\.0\\.1:${port} \\(connection refused.*loadlab sim`),
    );
    await expect(runLoad({ baseUrl: fast.url, model: 'nope', workload: [spec], shape: burst(), out: false })).rejects.toThrow(
      `Model 'nope' is not served at ${fast.url}. It serves: scripted.`,
    );
    expect(existsSync(join(tmp, 'never'))).toBe(false);
  });

  it('validates options up front', async () => {
    const base = { baseUrl: fast.url, workload: [spec], out: false as const };
    await expect(runLoad({ ...base, shape: closedLoop(2), warmup: -1 })).rejects.toThrow('warmup must be an integer ≥ 0');
    await expect(runLoad({ ...base, baseUrl: 'localhost:8000', shape: burst() })).rejects.toThrow(
      'baseUrl must start with http:// or https://',
    );
    await expect(runLoad({ ...base, workload: (i) => ({ ...spec, tag: String(i) }), shape: closedLoop(2) })).rejects.toThrow(
      'requests is required when workload is a function: pass requests: N',
    );
    await expect(runLoad({ ...base, workload: undefined, shape: closedLoop(2) })).rejects.toThrow('workload is required');
    await expect(runLoad({ ...base, shape: timeline([0, 10]), requests: 3 })).rejects.toThrow(
      'timeline has 2 entries but requests is 3',
    );
    await expect(runLoad({ ...base, shape: { kind: 'closed', concurrency: 0 } })).rejects.toThrow(
      'concurrency must be an integer ≥ 1, got 0',
    );
    await expect(runLoad({ ...base, shape: closedLoop(2), timeoutMs: 0 })).rejects.toThrow(
      'timeoutMs must be a number of ms > 0',
    );
    await expect(runLoad({ ...base, shape: closedLoop(2), slo: { ttft: 5 } as never })).rejects.toThrow("unknown SLO key 'ttft'");
  });
});
