import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measure } from '../src/lesson/measure';
import { closedLoop } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';

let server: ScriptedServer;
let root: string;
beforeAll(async () => {
  server = await startScriptedServer({ firstTokenDelayMs: 5, gapMs: 1, tokens: 4 });
  root = mkdtempSync(join(tmpdir(), 'loadlab-measure-'));
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

const point = (extra: Record<string, unknown> = {}) => ({
  lesson: 'sweep',
  name: 'c2',
  root,
  requests: 4,
  shape: closedLoop(2),
  workload: [makeRequest('hi', { maxTokens: 4 })],
  sampleMetrics: false,
  progress: false,
  ...extra,
});

describe('measure: resumable load points', () => {
  it('measures a point once, then reuses its complete run; force measures again', async () => {
    const target = { baseUrl: server.url, model: 'scripted' };
    const first = await measure(target, point());
    expect(first.resumed).toBe(false);
    expect(first.summary.completed).toBe(4);
    const again = await measure(target, point());
    expect(again.resumed).toBe(true);
    expect(again.manifest.runId).toBe(first.manifest.runId);
    expect(again.summary.completed).toBe(4);
    expect(again.records).toHaveLength(4);
    const forced = await measure(target, point({ force: true }));
    expect(forced.resumed).toBe(false);
    expect(forced.manifest.runId).not.toBe(first.manifest.runId);
  });

  it('a saved point measured with another request count or other server flags is measured again', async () => {
    const target = { baseUrl: server.url, model: 'scripted', flags: { maxNumSeqs: 8 } };
    const first = await measure(target, point({ name: 'c3' }));
    expect((await measure(target, point({ name: 'c3' }))).resumed).toBe(true);
    const more = await measure(target, point({ name: 'c3', requests: 6 }));
    expect(more.resumed).toBe(false);
    expect(more.summary.completed).toBe(6);
    const otherFlags = await measure({ ...target, flags: { maxNumSeqs: 16 } }, point({ name: 'c3', requests: 6 }));
    expect(otherFlags.resumed).toBe(false);
    expect(otherFlags.manifest.target.flags).toEqual({ maxNumSeqs: 16 });
    expect(first.manifest.runId).not.toBe(otherFlags.manifest.runId);
  });

  it('an incomplete point (killed mid-run: no summary) is moved aside and measured afresh', async () => {
    const target = { baseUrl: server.url, model: 'scripted' };
    const dir = join(root, 'sweep', 'c1');
    const done = await measure(target, point({ name: 'c1' }));
    rmSync(join(done.dir, 'summary.json'));
    writeFileSync(join(done.dir, 'manifest.json'), JSON.stringify({ ...done.manifest, status: 'running' }));
    const redo = await measure(target, point({ name: 'c1' }));
    expect(redo.resumed).toBe(false);
    expect(existsSync(join(dir, 'summary.json'))).toBe(true);
    expect(readdirSync(join(root, 'sweep')).some((f) => f.startsWith('c1.incomplete-'))).toBe(true);
  });
});
