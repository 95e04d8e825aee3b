import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../src/runner/runner';
import type { DurationStopRule } from '../src/runner/runner-stop';
import { closedLoop, openLoop } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';

const spec = makeRequest('你好', { maxTokens: 4 });
const readJson = (f: string) => JSON.parse(readFileSync(f, 'utf8'));

let tmp: string;
let server: ScriptedServer;
let slow: ScriptedServer;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-duration-'));
  server = await startScriptedServer({ firstTokenDelayMs: 20, gapMs: 5, tokens: 4 });
  slow = await startScriptedServer({ firstTokenDelayMs: 60, gapMs: 5, tokens: 4 });
});
afterAll(async () => {
  await server.close();
  await slow.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('runLoad durationMs (stop rule)', () => {
  it('closed loop: stops issuing at the deadline; requests in flight finish and are recorded', async () => {
    const dir = join(tmp, 'closed');
    const r = await runLoad({
      baseUrl: server.url,
      workload: [spec],
      requests: 10_000,
      shape: closedLoop(2),
      durationMs: 300,
      out: dir,
    });
    const rule = r.manifest.load.options.stopRule as DurationStopRule;
    const measured = r.records.filter((x) => !x.warmup);
    expect(r.manifest.status).toBe('complete');
    expect(rule).toMatchObject({
      rule: 'duration',
      durationMs: 300,
      inFlight: 'finish',
      maxRequests: 10_000,
      stoppedBy: 'duration',
    });
    expect(rule.issued).toBe(measured.length);
    expect(measured.length).toBeGreaterThanOrEqual(2);
    expect(measured.length).toBeLessThan(10_000);
    // Nothing was issued at or after the deadline; nothing in flight was cancelled.
    for (const x of measured) expect(x.intendedStartMs).toBeLessThan(rule.deadlineMs);
    expect(measured.every((x) => x.ok)).toBe(true);
    expect(r.summary.requests).toBe(measured.length);
    // The saved manifest says the same.
    expect(readJson(join(dir, 'manifest.json')).load.options.stopRule).toEqual(rule);
  });

  it('open loop with a cap: requests intended before the deadline are still sent after it, their wait in queueMs', async () => {
    const r = await runLoad({
      baseUrl: slow.url,
      workload: [spec],
      requests: 500,
      shape: openLoop(50, { maxConcurrency: 1, seed: 3 }),
      durationMs: 300,
      out: false,
    });
    const rule = r.manifest.load.options.stopRule as DurationStopRule;
    expect(rule.stoppedBy).toBe('duration');
    expect(rule.issued).toBe(r.records.length);
    for (const x of r.records) expect(x.intendedStartMs).toBeLessThan(rule.deadlineMs);
    const late = r.records.filter((x) => x.startMs >= rule.deadlineMs);
    expect(late.length).toBeGreaterThan(0); // queued for the one slot at the deadline, sent afterwards
    for (const x of late) expect(x.queueMs).toBeGreaterThan(0);
    expect(r.records.every((x) => x.ok)).toBe(true);
  });

  it('the count ends first: every request is sent and the rule says count', async () => {
    const r = await runLoad({
      baseUrl: server.url,
      workload: [spec],
      requests: 3,
      shape: closedLoop(1),
      durationMs: 60_000,
      out: false,
    });
    expect(r.records).toHaveLength(3);
    expect(r.manifest.load.options.stopRule).toMatchObject({ issued: 3, stoppedBy: 'count' });
  });

  it('a bad durationMs throws before any load, naming the fix', async () => {
    const before = (await server.stats()).requests;
    for (const bad of [0, -1, Number.NaN, '5' as unknown as number]) {
      await expect(
        runLoad({ baseUrl: server.url, workload: [spec], shape: closedLoop(1), durationMs: bad, out: false }),
      ).rejects.toThrow(/durationMs must be a finite number of ms > 0/);
    }
    expect((await server.stats()).requests).toBe(before);
  });
});
