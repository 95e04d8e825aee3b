import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeTarget } from '../src/observe/probe';
import { closedLoop } from '../src/schedule/shapes';
import { runLoadPoints } from '../src/sweep/load-points';
import { runSweep, type RunSweepOptions } from '../src/sweep/run-sweep';
import { SweepFolderError } from '../src/sweep/sweep-file';
import { makeRequest } from '../src/workload/workload';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';

let server: ScriptedServer;
let root: string;
beforeAll(async () => {
  server = await startScriptedServer({ firstTokenDelayMs: 5, gapMs: 1, tokens: 4 });
  root = mkdtempSync(join(tmpdir(), 'loadlab-sweep-run-'));
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

async function options(dir: string, requests: number, extra: Partial<RunSweepOptions> = {}): Promise<RunSweepOptions> {
  const probe = await probeTarget(server.url);
  const points = runLoadPoints(
    { baseUrl: server.url, requests, workload: [makeRequest('hi', { maxTokens: 4 })], progress: false },
    (c) => closedLoop(c),
  );
  return {
    dir,
    plan: { mode: 'list', variable: 'concurrency', values: [1, 2], attainment: 0.9, slo: { ttftMs: 60_000 } },
    runFlags: [],
    current: { probe, model: probe.model ?? '' },
    ...points,
    ...extra,
  };
}

describe('runSweep with runLoad points (library use)', () => {
  it('measures each point into its folder, reuses them on the next call, refuses other flags, replaces on request', async () => {
    const dir = join(root, 's');
    const first = await runSweep(await options(dir, 4));
    expect(first.status).toBe('complete');
    expect(first.provenance).toBe('real'); // the scripted server is not LoadLab's simulator
    expect(first.points.map((p) => [p.name, p.status, p.reused, p.completed])).toEqual([
      ['c=1', 'complete', false, 4],
      ['c=2', 'complete', false, 4],
    ]);
    expect(first.points.every((p) => p.meetsSlo === true)).toBe(true);
    expect(first.capacity).toEqual([{ criterion: 'ttft:60000', attainment: 0.9, value: 2 }]);
    const ids = first.points.map((p) => p.runId);

    const again = await runSweep(await options(dir, 4));
    expect(again.points.map((p) => p.reused)).toEqual([true, true]);
    expect(again.points.map((p) => p.runId)).toEqual(ids);

    const before = readFileSync(join(dir, 'sweep.json'), 'utf8');
    await expect(runSweep(await options(dir, 6))).rejects.toThrow(SweepFolderError);
    await expect(runSweep(await options(dir, 6))).rejects.toThrow(/c=1 holds a complete run .*other run flags.*--replace/);
    expect(readFileSync(join(dir, 'sweep.json'), 'utf8')).toBe(before); // refused before writing

    const replaced = await runSweep(await options(dir, 6, { replace: true }));
    expect(replaced.points.map((p) => [p.reused, p.completed])).toEqual([
      [false, 6],
      [false, 6],
    ]);
    expect(replaced.points.map((p) => p.runId)).not.toEqual(ids);
  });

  it('stops before the next point once asked to, saving sweep.json as interrupted', async () => {
    const dir = join(root, 'stop');
    let calls = 0;
    const f = await runSweep(await options(dir, 2, { stopped: () => calls++ > 0 }));
    expect(f.status).toBe('interrupted');
    expect(f.points.map((p) => p.name)).toEqual(['c=1']);
    expect(JSON.parse(readFileSync(join(dir, 'sweep.json'), 'utf8')).status).toBe('interrupted');
  });
});
