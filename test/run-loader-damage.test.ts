import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listRuns, loadRun } from '../src/run/loader';
import type { ManifestInput } from '../src/run/manifest';
import { createRun } from '../src/run/store';
import { summarizeRun } from '../src/stats/summary';
import type { RequestRecord } from '../src/types';
import { recordsToDataFrame } from '../src/view/frame';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-damage-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const input: ManifestInput = {
  target: { baseUrl: 'http://127.0.0.1:8000', kind: 'sim', simulated: true, model: 'sim-model' },
  load: { shape: 'pool', options: { concurrency: 2 } },
};

function rec(i: number): RequestRecord {
  return {
    index: i,
    requestId: `r${i}`,
    warmup: false,
    ok: true,
    api: 'chat',
    status: 200,
    intendedStartMs: i,
    startMs: i,
    firstTokenMs: i + 10,
    chunkMs: [i + 10, i + 20, i + 30],
    chunkTokens: [1, 1, 1],
    endMs: i + 31,
    promptTokens: 12,
    outputTokens: 3,
    finishReason: 'length',
    ttftMs: 10,
    e2eMs: 30,
    tpotMs: 10,
    itlMs: [10, 10],
    queueMs: 0,
    ttftFromIntendedMs: 10,
  };
}

/** A complete run of `n` good records; `edit` rewrites requests.jsonl's lines before loading. */
function runWith(name: string, n: number, edit?: (lines: string[]) => string[]): string {
  const dir = path.join(tmp, name);
  const records = Array.from({ length: n }, (_, i) => rec(i));
  const w = createRun({ dir }, input);
  records.forEach((r) => w.append(r));
  w.finish(summarizeRun(records));
  if (edit) {
    const file = path.join(dir, 'requests.jsonl');
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    fs.writeFileSync(file, `${edit(lines).join('\n')}\n`);
  }
  return dir;
}

const patchLine = (i: number, patch: Record<string, unknown>) => (lines: string[]) =>
  lines.map((l, j) => (j === i ? JSON.stringify({ ...JSON.parse(l), ...patch }) : l));

describe('loadRun: a record with a wrong field type (issue #17 item 7)', () => {
  it.each([
    [{ itlMs: 5 }, "'itlMs' must be an array of numbers, got 5"],
    [{ chunkMs: 'oops' }, `'chunkMs' must be an array of numbers, got "oops"`],
    [{ ttftMs: '12' }, `'ttftMs' must be a number, got "12"`],
    [{ itlMs: [1, 'x'] }, "'itlMs' must be an array of numbers, got an array"],
    [{ error: 'boom' }, `'error' must be an object with a string 'code', got "boom"`],
    [{ warmup: 'no' }, `'warmup' must be true or false, got "no"`],
    [{ index: 1.5 }, "'index' must be an integer ≥ 0, got 1.5"],
  ])('%j: reported with its line, skipped, the rest kept and usable', (patch, why) => {
    const dir = runWith(`badfield-${Object.keys(patch)[0]}-${String(Object.values(patch)[0]).length}`, 20, patchLine(3, patch));
    const run = loadRun(dir);
    expect(run.records).toHaveLength(19);
    expect(run.records.map((r) => r.index)).not.toContain(3);
    expect(run.problems).toContain(`requests.jsonl line 4: ${why}; skipped`);
    expect(() => summarizeRun(run.records)).not.toThrow();
    expect(summarizeRun(run.records).ttftMs.n).toBe(19);
    expect(recordsToDataFrame(run.records).shape).toEqual([19, 23]);
  });

  it('null still means NaN (how JSON stores it) and is accepted', () => {
    const run = loadRun(runWith('nulls', 3, patchLine(1, { ttftMs: null, tpotMs: null, status: null })));
    expect(run.problems).toEqual([]);
    expect(run.records[1].ttftMs).toBeUndefined();
  });
});

describe('loadRun: duplicates, counts, summary shape, unreadable files (item 10f)', () => {
  it('reports a duplicated request once per extra line and keeps the first', () => {
    const run = loadRun(runWith('dup', 5, (l) => [...l, l[1], l[2], l[1]]));
    expect(run.records.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(run.problems).toEqual([
      "requests.jsonl line 6: duplicate of line 2 (request id 'r1'); the request is counted once; skipped",
      "requests.jsonl line 7: duplicate of line 3 (request id 'r2'); the request is counted once; skipped",
      "requests.jsonl line 8: duplicate of line 2 (request id 'r1'); the request is counted once; skipped",
    ]);
  });

  it('flags a summary that counts more requests than the file holds', () => {
    const run = loadRun(runWith('short', 5, (l) => l.slice(0, 3)));
    expect(run.problems).toEqual(['summary.json counts 5 measured requests but requests.jsonl holds 3 usable ones']);
  });

  it('calls a valid-JSON summary of the wrong shape what it is', () => {
    const dir = runWith('nullsummary', 2);
    fs.writeFileSync(path.join(dir, 'summary.json'), 'null');
    const run = loadRun(dir);
    expect(run.summary).toBeUndefined();
    expect(run.problems).toEqual(["summary.json is valid JSON but not a run summary (no numeric 'requests'); ignored"]);
  });

  it('reports a requests.jsonl that is a folder instead of throwing EISDIR', () => {
    const dir = runWith('dirreq', 2);
    fs.rmSync(path.join(dir, 'requests.jsonl'));
    fs.mkdirSync(path.join(dir, 'requests.jsonl'));
    const run = loadRun(dir);
    expect(run.records).toEqual([]);
    expect(run.problems[0]).toMatch(/^requests\.jsonl could not be read \(EISDIR: .*requests\.jsonl\)/);
  });
});

describe('loadRun / listRuns: a missing or broken manifest (item 8)', () => {
  const cases: Array<[string, (file: string) => void, RegExp]> = [
    ['halfmanifest', (f) => fs.writeFileSync(f, fs.readFileSync(f, 'utf8').slice(0, 200)), /^manifest\.json is not valid JSON/],
    ['nullmanifest', (f) => fs.writeFileSync(f, 'null'), /^manifest\.json is not a LoadLab run manifest: expected a JSON object/],
    [
      'notarget',
      (f) => {
        const m = JSON.parse(fs.readFileSync(f, 'utf8'));
        delete m.target;
        fs.writeFileSync(f, JSON.stringify(m));
      },
      /^manifest\.json is not a LoadLab run manifest: missing 'target'/,
    ],
    ['nomanifest', (f) => fs.rmSync(f), /^manifest\.json is missing/],
  ];
  const root = path.join(tmp, 'manifests');

  it.each(cases)('%s: the records load, the problem is reported, manifest access says why', (name, damage, why) => {
    const dir = runWith(path.join('manifests', name), 20);
    damage(path.join(dir, 'manifest.json'));
    const run = loadRun(dir);
    expect(run.records).toHaveLength(20);
    expect(run.damaged).toMatch(why);
    expect(run.problems[0]).toMatch(why);
    expect(run.problems[0]).toMatch(/the records are read without it$/);
    expect(run.summary?.requests).toBe(20);
    expect(() => run.manifest).toThrow(/has no usable manifest .*records are still readable/);
    expect(Object.keys(run)).not.toContain('manifest'); // printing the run does not throw
  });

  it('listRuns lists damaged folders as damaged, and still skips a foreign manifest.json', () => {
    runWith(path.join('manifests', 'healthy'), 2);
    fs.mkdirSync(path.join(root, 'webapp'), { recursive: true });
    fs.writeFileSync(path.join(root, 'webapp', 'manifest.json'), '{"name":"my app"}');
    const runs = listRuns(root);
    expect(runs.map((r) => [path.basename(r.dir), r.complete, r.damaged !== undefined])).toEqual([
      ['halfmanifest', false, true],
      ['healthy', true, false],
      ['nomanifest', false, true],
      ['notarget', false, true],
      ['nullmanifest', false, true],
    ]);
  });
});
