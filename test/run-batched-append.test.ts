import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBatchedAppender } from '../src/run/batched-appender';
import { loadRun } from '../src/run/loader';
import { abortOpenRuns, createRun } from '../src/run/store';
import { summarizeRun } from '../src/stats/summary';
import { input, record } from './helpers/run-fixtures';

const tmp = fs.mkdtempSync(path.join(tmpdir(), 'loadlab-batched-'));
afterAll(() => {
  abortOpenRuns();
  fs.rmSync(tmp, { recursive: true, force: true });
});
let seq = 0;
const file = () => path.join(tmp, `f${seq++}.jsonl`);
const lines = (f: string) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean);
const turn = () => new Promise<void>((r) => setImmediate(r));

describe('openBatchedAppender', () => {
  it('queues without writing, then writes one batch per event-loop turn, in order, and tells each line', async () => {
    const f = file();
    const a = openBatchedAppender(f, { now: () => 0 }); // a clock that never moves: the whole queue fits the budget
    const told: number[] = [];
    for (let i = 0; i < 50; i++) a.append({ i }, () => told.push(i));
    expect(lines(f)).toHaveLength(0);
    expect(a.pending).toBe(50);
    await turn();
    expect(a.writes).toBe(1);
    expect(lines(f).map((l) => JSON.parse(l).i)).toEqual(told);
    expect(told).toEqual(Array.from({ length: 50 }, (_, i) => i));
    a.close();
  });

  it('spreads a large queue over several turns when stringifying exceeds the budget; flush writes the rest', async () => {
    let t = 0;
    const f = file();
    const a = openBatchedAppender(f, { budgetMs: 1, now: () => (t += 0.4) }); // every line "costs" 0.4 ms
    for (let i = 0; i < 10; i++) a.append({ i });
    await turn();
    expect(a.lines).toBeGreaterThanOrEqual(1);
    expect(a.lines).toBeLessThan(10);
    a.flush();
    expect(a.pending).toBe(0);
    expect(lines(f).map((l) => JSON.parse(l).i)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    a.close();
    expect(() => a.append({})).toThrow(/is closed; open a new appender/);
  });

  it('throws a failed write to the next caller instead of crashing the loop', async () => {
    const f = file();
    const a = openBatchedAppender(f);
    a.append({ bad: 1n }); // BigInt cannot be stringified: stands in for a failed write
    expect(() => a.flush()).toThrow(/BigInt/);
    expect(() => a.append({ ok: 1 })).toThrow(/BigInt/);
    expect(() => a.close()).toThrow(/BigInt/);
  });
});

describe('RunWriter.appendSoon', () => {
  it('finish and abort flush every queued record before the manifest is written', () => {
    const w = createRun({ dir: path.join(tmp, 'finish') }, input);
    const recs = [0, 1, 2].map(record);
    for (const r of recs) w.appendSoon(r);
    expect(lines(w.path('requests.jsonl'))).toHaveLength(0);
    w.append(record(3)); // the synchronous append keeps the order of everything queued before it
    expect(lines(w.path('requests.jsonl')).map((l) => JSON.parse(l).index)).toEqual([0, 1, 2, 3]);
    w.appendSoon(record(4));
    w.finish(summarizeRun([...recs, record(3), record(4)]));
    expect(loadRun(w.dir).records.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);

    const v = createRun({ dir: path.join(tmp, 'abort') }, input);
    v.appendSoon(record(7));
    v.abort('interrupted');
    expect(lines(v.path('requests.jsonl'))).toHaveLength(1);
  });

  it('a process that exits with records still queued writes them on its way out', () => {
    const dir = path.join(tmp, 'exit');
    const store = path.resolve('src/run/store').replace(/\\/g, '/');
    const script = path.join(tmp, 'exit-child.ts');
    fs.writeFileSync(
      script,
      `import { createRun } from '${store}';
      const w = createRun({ dir: ${JSON.stringify(dir)} }, ${JSON.stringify(input)});
      for (let i = 0; i < 5; i++) w.appendSoon({ index: i, requestId: 'r' + i } as never);
      process.exit(0);`,
    );
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8' });
    expect(child.status, child.stderr).toBe(0);
    expect(lines(path.join(dir, 'requests.jsonl')).map((l) => JSON.parse(l).index)).toEqual([0, 1, 2, 3, 4]);
  });
});
