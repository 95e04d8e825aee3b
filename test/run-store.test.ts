import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadRun } from '../src/run/loader';
import { redact } from '../src/run/manifest';
import { abortOpenRuns, createRun, isRunComplete } from '../src/run/store';
import { summarizeRun } from '../src/stats/summary';
import { input, record } from './helpers/run-fixtures';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-store-'));
let seq = 0;
const freshDir = () => path.join(tmp, `run-${++seq}`);
afterEach(() => abortOpenRuns());
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
let dead: number | undefined;
/** Pid of a process that has exited (spawnSync returns after exit). */
const deadPid = () => (dead ??= spawnSync(process.execPath, ['-e', '']).pid);

describe('createRun', () => {
  it('names the folder <root>/<lesson>/<name>-<stamp>-<hex> and writes a running manifest', () => {
    const w = createRun({ root: tmp, lesson: '02-concurrency', name: 'c8' }, input);
    expect(path.relative(tmp, w.dir)).toMatch(/^02-concurrency[\\/]c8-\d{8}-\d{6}-[0-9a-f]{4}$/);
    const m = JSON.parse(fs.readFileSync(w.path('manifest.json'), 'utf8'));
    expect(m).toMatchObject({ schema: 1, lesson: '02-concurrency', name: 'c8', status: 'running', loadlabVersion: '0.1.0' });
    expect(m.runId).toBe(w.runId);
    expect(m.clock.source).toBe('performance.now');
    expect(m.nodeVersion).toBe(process.version);
    expect(fs.existsSync(w.path('.lock'))).toBe(true);
  });

  it('puts each record on disk as one line before finish', () => {
    const w = createRun({ dir: freshDir() }, input);
    w.append(record(0));
    expect(lines(w.path('requests.jsonl'))).toHaveLength(1);
    w.append(record(1));
    const got = lines(w.path('requests.jsonl')).map((l) => JSON.parse(l));
    expect(got).toEqual([record(0), record(1)]);
  });

  it('finish writes summary and manifest atomically, leaves no temp files and frees the lock', () => {
    const w = createRun({ dir: freshDir() }, input);
    const recs = [record(0), record(1)];
    recs.forEach((r) => w.append(r));
    w.finish(summarizeRun(recs), { client: { eventLoopDelayP99Ms: 3 } });
    expect(fs.readdirSync(w.dir).sort()).toEqual(['manifest.json', 'requests.jsonl', 'summary.json']);
    const m = JSON.parse(fs.readFileSync(w.path('manifest.json'), 'utf8'));
    expect(m.status).toBe('complete');
    expect(m.client).toEqual({ eventLoopDelayP99Ms: 3 });
    expect(Date.parse(m.endedAt)).toBeGreaterThanOrEqual(Date.parse(m.startedAt));
    expect(JSON.parse(fs.readFileSync(w.path('summary.json'), 'utf8')).completed).toBe(2);
    expect(isRunComplete(w.dir)).toBe(true);
    expect(() => w.append(record(2))).toThrow(/already complete; append\(\) needs a new createRun/);
  });

  it('lets only one writer hold a folder; a dead holder is taken over', () => {
    const dir = freshDir();
    const w = createRun({ dir }, input);
    expect(() => createRun({ dir }, input)).toThrow(/in use by this process/);
    fs.writeFileSync(w.path('.lock'), `${process.ppid}\n`); // a live process that is not us
    expect(() => createRun({ dir }, input)).toThrow(new RegExp(`in use by process ${process.ppid}`));
    fs.writeFileSync(w.path('.lock'), `${deadPid()}\n`);
    w.abort('interrupted'); // our writer's files closed; folder now holds an interrupted run
    fs.writeFileSync(path.join(dir, '.lock'), `${deadPid()}\n`); // as if a crashed process left it
    const again = createRun({ dir }, input);
    expect(lines(again.path('requests.jsonl'))).toHaveLength(0);
  });

  it('refuses a complete run unless replace: true', () => {
    const dir = freshDir();
    const w = createRun({ dir }, input);
    w.append(record(0));
    w.finish(summarizeRun([record(0)]));
    expect(() => createRun({ dir }, input)).toThrow(/already holds a complete run; pass replace: true .* another name/);
    expect(fs.existsSync(path.join(dir, '.lock'))).toBe(false);
    const w2 = createRun({ dir, replace: true }, input);
    expect(fs.readdirSync(dir).sort()).toEqual(['.lock', 'manifest.json', 'requests.jsonl']);
    expect(w2.runId).not.toBe(w.runId);
  });

  it('moves an incomplete run aside and starts fresh (sweep resume)', () => {
    const dir = freshDir();
    const w = createRun({ dir }, input);
    w.append(record(0));
    w.append(record(1));
    w.abort('interrupted', { notes: ['Ctrl-C'] });
    expect(isRunComplete(dir)).toBe(false);
    createRun({ dir }, input);
    const aside = fs.readdirSync(tmp).filter((n) => n.startsWith(`${path.basename(dir)}.incomplete-`));
    expect(aside).toHaveLength(1);
    const old = loadRun(path.join(tmp, aside[0]));
    expect(old.manifest).toMatchObject({ status: 'interrupted', notes: ['Ctrl-C'] });
    expect(old.records).toHaveLength(2);
    expect(lines(path.join(dir, 'requests.jsonl'))).toHaveLength(0);
  });

  it('refuses a non-empty folder that is not a run', () => {
    const dir = freshDir();
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    expect(() => createRun({ dir }, input)).toThrow(/is not empty and holds no LoadLab run \(notes\.txt\)/);
    expect(fs.readdirSync(dir)).toEqual(['notes.txt']);
  });

  it('never writes secrets: redacts manifest, extra JSON files and extra lines', () => {
    const w = createRun(
      { dir: freshDir() },
      {
        ...input,
        target: {
          ...input.target,
          flags: { 'api-key': 'sk-flag', 'max-num-seqs': 8 },
          probe: { headers: { Authorization: 'Bearer sk-h' } },
        },
        load: {
          shape: 'pool',
          options: { apiKey: 'sk-opt', maxTokens: 64, argv: ['--api-key', 'sk-argv', '--port', '8000', '--api-key=sk-eq'] },
        },
        client: { api_key: 'sk-client' },
      },
    );
    w.writeJson('extra.json', { nested: { x_api_key: 'sk-extra', outputTokens: 5 } });
    w.appendLine('metrics.jsonl', { token: 'sk-line', t: 1 });
    w.finish(summarizeRun([]), { notes: ['ok'], client: { apiKey: 'sk-patch' } } as never);
    const all = ['manifest.json', 'extra.json', 'metrics.jsonl'].map((f) => fs.readFileSync(w.path(f), 'utf8')).join('');
    expect(all).not.toMatch(/sk-|Bearer/);
    const m = JSON.parse(fs.readFileSync(w.path('manifest.json'), 'utf8'));
    expect(m.target.flags).toEqual({ 'max-num-seqs': 8 });
    expect(m.load.options.maxTokens).toBe(64);
    expect(m.load.options.argv).toEqual(['--api-key', '[redacted]', '--port', '8000', '--api-key=[redacted]']);
    expect(JSON.parse(fs.readFileSync(w.path('extra.json'), 'utf8'))).toEqual({ nested: { outputTokens: 5 } });
    expect(redact({ outputTokens: 1, maxTokens: 2, hfToken: 'x', password: 'y' })).toEqual({ outputTokens: 1, maxTokens: 2 });
  });

  it('guards file names of extra files', () => {
    const w = createRun({ dir: freshDir() }, input);
    expect(() => w.writeJson('summary.json', {})).toThrow(/written by the run itself/);
    expect(() => w.appendLine('../escape.jsonl', {})).toThrow(/plain file name/);
  });

  it('a killed writer loses nothing it appended, and the folder resumes', () => {
    const dir = freshDir();
    const script = path.join(tmp, 'child.ts');
    const store = path.resolve('src/run/store').replace(/\\/g, '/');
    fs.writeFileSync(
      script,
      `
      import * as fs from 'node:fs';
      import { createRun } from '${store}';
      const w = createRun({ dir: ${JSON.stringify(dir)} }, ${JSON.stringify(input)});
      for (const r of ${JSON.stringify([0, 1, 2].map(record))}) w.append(r as never);
      fs.appendFileSync(w.path('requests.jsonl'), '{"index":3,"requestId":"r3","war'); // torn write
      process.kill(process.pid, 'SIGKILL');
    `,
    );
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8' });
    expect(child.signal, child.stderr).toBe('SIGKILL');
    const run = loadRun(dir);
    expect(run.manifest.status).toBe('running');
    expect(run.records.map((r) => r.index)).toEqual([0, 1, 2]);
    expect(run.problems.join('\n')).toMatch(/line 4: truncated last line/);
    expect(run.problems.join('\n')).toMatch(/killed before it finished/);
    expect(isRunComplete(dir)).toBe(false);
    createRun({ dir }, input).abort('failed'); // stale lock taken over, old run moved aside
    expect(fs.readdirSync(tmp).some((n) => n.startsWith(`${path.basename(dir)}.incomplete-`))).toBe(true);
  });
});
