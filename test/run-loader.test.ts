import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listRuns, loadRun } from '../src/run/loader';
import { recordsToDataFrame } from '../src/view/frame';
import type { ManifestInput } from '../src/run/manifest';
import { createRun } from '../src/run/store';
import { summarizeRun } from '../src/stats/summary';
import type { RequestRecord } from '../src/types';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-loader-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const input: ManifestInput = {
  target: { baseUrl: 'http://127.0.0.1:8000', kind: 'sim', simulated: true, model: 'sim-model' },
  load: { shape: 'pool', options: { concurrency: 2 } },
};

const ok: RequestRecord = {
  index: 0,
  requestId: 'r0',
  warmup: false,
  ok: true,
  api: 'chat',
  tag: 'short',
  status: 200,
  intendedStartMs: 0,
  startMs: 1.5,
  headersMs: 5,
  firstChunkMs: 9,
  firstTokenMs: 10.25,
  chunkMs: [10.25, 20.25, 40.25],
  chunkTokens: [1, 1, 1],
  endMs: 41,
  promptTokens: 12,
  outputTokens: 3,
  cachedTokens: 0,
  finishReason: 'length',
  ttftMs: 8.75,
  e2eMs: 38.75,
  tpotMs: 15,
  itlMs: [10, 20],
  queueMs: 1.5,
  ttftFromIntendedMs: 10.25,
};
const failed: RequestRecord = {
  index: 1,
  requestId: 'r1',
  warmup: false,
  ok: false,
  api: 'chat',
  status: 503,
  intendedStartMs: 5,
  startMs: 5,
  chunkMs: [],
  chunkTokens: [],
  endMs: 7,
  itlMs: [],
  queueMs: 0,
  error: { code: 'http_5xx', message: 'Service Unavailable' },
};

function finishedRun(dir: string, records: RequestRecord[]): string {
  const w = createRun({ dir }, input);
  records.forEach((r) => w.append(r));
  w.finish(summarizeRun(records));
  return dir;
}

describe('loadRun', () => {
  it('reads back the same records and summary, NaN restored', () => {
    const dir = finishedRun(path.join(tmp, 'round'), [ok, failed]);
    const run = loadRun(dir);
    expect(run.problems).toEqual([]);
    expect(run.records).toEqual([ok, failed]);
    expect(run.manifest.status).toBe('complete');
    expect(run.summary).toEqual(summarizeRun([ok, failed]));
    expect(run.summary!.tpotMs.n).toBe(1);
    const empty = loadRun(finishedRun(path.join(tmp, 'empty'), []));
    expect(empty.summary!.ttftMs.n).toBe(0);
    expect(empty.summary!.ttftMs.p99).toBeNaN(); // null on disk
    expect(empty.summary!.requestsPerSec).toBeNaN();
  });

  it('skips a garbage line and a truncated last line, reporting file and line', () => {
    const dir = finishedRun(path.join(tmp, 'damaged'), [ok]);
    const file = path.join(dir, 'requests.jsonl');
    fs.appendFileSync(file, 'garbage{\n');
    fs.appendFileSync(file, `${JSON.stringify({ ...failed, index: 2 })}\n`);
    fs.appendFileSync(file, '{"hello":1}\n');
    fs.appendFileSync(file, JSON.stringify(failed).slice(0, 40)); // torn final write
    const run = loadRun(dir);
    expect(run.records.map((r) => r.index)).toEqual([0, 2]);
    expect(run.problems).toEqual([
      'requests.jsonl line 2: not valid JSON; skipped: garbage{',
      "requests.jsonl line 4: missing number 'index'; skipped",
      'requests.jsonl line 5: truncated last line (the run was probably killed mid-write); skipped',
      'summary.json counts 1 measured requests but requests.jsonl holds 2 usable ones', // line 3 came after finish()
    ]);
  });

  it('throws a clear message for a folder that is not a run, or a newer manifest schema', () => {
    const dir = path.join(tmp, 'bad');
    fs.mkdirSync(dir);
    expect(() => loadRun(dir)).toThrow(/is not a LoadLab run: no .*manifest\.json/);
    const m = { schema: 1, runId: 'x', load: {}, startedAt: 'now', clock: {}, status: 'complete' };
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ ...m, target: {}, schema: 2 }));
    expect(() => loadRun(dir)).toThrow(
      /bad[\\/]manifest\.json uses manifest schema 2, newer than this LoadLab .* update LoadLab/,
    );
  });
});

describe('listRuns', () => {
  it('finds runs recursively, skips non-run folders, flags completeness', () => {
    const root = path.join(tmp, 'tree');
    finishedRun(path.join(root, 'lesson-a', 'c1'), [ok]);
    createRun({ dir: path.join(root, 'lesson-a', 'c8') }, input).abort('interrupted');
    finishedRun(path.join(root, 'lesson-b', 'deep', 'x'), [ok]);
    fs.mkdirSync(path.join(root, 'figures'), { recursive: true });
    fs.writeFileSync(path.join(root, 'figures', 'plot.svg'), '<svg/>');
    fs.mkdirSync(path.join(root, 'junk'));
    fs.writeFileSync(path.join(root, 'junk', 'manifest.json'), 'nope');
    const runs = listRuns(root);
    expect(runs.map((r) => [path.relative(root, r.dir), r.complete])).toEqual([
      [path.join('lesson-a', 'c1'), true],
      [path.join('lesson-a', 'c8'), false],
      [path.join('lesson-b', 'deep', 'x'), true],
    ]);
    expect(runs[0].manifest.target.model).toBe('sim-model');
    expect(listRuns(path.join(tmp, 'missing'))).toEqual([]);
  });
});

describe('recordsToDataFrame', () => {
  it('makes one row per record with numeric NaN and string null for missing values', () => {
    const df = recordsToDataFrame([ok, failed]);
    expect(df.shape).toEqual([2, 23]);
    expect(df.columns.slice(0, 5)).toEqual(['requestIndex', 'requestId', 'tag', 'warmup', 'ok']);
    expect(df.column('requestIndex').values).toEqual([0, 1]);
    expect(df.index).toEqual([0, 1]); // not shadowed by a column named 'index'
    expect(() => df.toString()).not.toThrow();
    expect(df.column('ttftMs').values).toEqual([8.75, NaN]);
    expect(df.column('errorCode').values).toEqual([null, 'http_5xx']);
    expect(df.column('tag').values).toEqual(['short', null]);
    expect(df.column('chunks').values).toEqual([3, 0]);
    expect(df.column('itlMeanMs').values).toEqual([15, NaN]);
    expect(df.column('itlMaxMs').values).toEqual([20, NaN]);
    expect(df.column('ttftMs').dtype).toBe('float32');
    expect(df.column('ttftMs').mean()).toBe(8.75); // NaN skipped, column numeric
  });

  it('keeps the columns with zero records', () => {
    const df = recordsToDataFrame([]);
    expect(df.shape).toEqual([0, 23]);
    expect(df.columns).toContain('ttftMs');
  });
});
