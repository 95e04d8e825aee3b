import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { checkRunDir } from '../src/run/folder';
import { loadRun } from '../src/run/loader';
import type { ManifestInput } from '../src/run/manifest';
import { createRun } from '../src/run/store';
import { summarizeRun } from '../src/stats/summary';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-folder-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const input: ManifestInput = {
  target: { baseUrl: 'http://127.0.0.1:8000', kind: 'sim', simulated: true, model: 'sim-model' },
  load: { shape: 'pool', options: { concurrency: 1 } },
};

function complete(dir: string): void {
  const w = createRun({ dir }, input);
  w.appendLine('metrics.jsonl', { tMs: 1 });
  w.finish(summarizeRun([]));
}

/** Every file under `dir`, relative, sorted. */
function tree(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).map(String).sort();
}

describe("a user's files in a run folder are never deleted or moved (issue #17 items 5, 6)", () => {
  it("replace: true deletes only the run's own files of a complete run", () => {
    const dir = path.join(tmp, 'replace-clean');
    complete(dir);
    expect(tree(dir)).toEqual(['manifest.json', 'metrics.jsonl', 'requests.jsonl', 'summary.json']);
    const w = createRun({ dir, replace: true }, input);
    w.finish(summarizeRun([]));
    expect(tree(dir)).toEqual(['manifest.json', 'requests.jsonl', 'summary.json']);
  });

  it("replace: true deletes a complete run's files but keeps the user's notes and plots in place", () => {
    const dir = path.join(tmp, 'replace-user');
    complete(dir);
    fs.writeFileSync(path.join(dir, 'server.log'), 'old log');
    fs.writeFileSync(path.join(dir, 'analysis.md'), '# my notes');
    fs.mkdirSync(path.join(dir, 'plots'));
    fs.writeFileSync(path.join(dir, 'plots', 'p1.png'), 'png');
    const w = createRun({ dir, replace: true }, input);
    w.finish(summarizeRun([]));
    expect(tree(dir)).toEqual([
      'analysis.md',
      'manifest.json',
      'plots',
      path.join('plots', 'p1.png'),
      'requests.jsonl',
      'summary.json',
    ]);
    expect(fs.readFileSync(path.join(dir, 'analysis.md'), 'utf8')).toBe('# my notes');
  });

  it("refuses a folder that merely contains requests.jsonl among the user's files, touching nothing", () => {
    const dir = path.join(tmp, 'project');
    fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'thesis.tex'), 'x');
    fs.writeFileSync(path.join(dir, 'src', 'main.py'), 'x');
    fs.writeFileSync(path.join(dir, 'requests.jsonl'), '{}\n');
    expect(() => createRun({ dir, replace: true }, input)).toThrow(
      /project is not empty and holds no LoadLab run \(requests\.jsonl, src, thesis\.tex\); LoadLab never deletes or moves such files\. Choose a new or empty folder/,
    );
    expect(tree(dir)).toEqual(['requests.jsonl', 'src', path.join('src', 'main.py'), 'thesis.tex']);
    expect(fs.readdirSync(tmp).filter((n) => n.startsWith('project.incomplete-'))).toEqual([]);
  });

  it("moves only an incomplete run's files aside, says where (console.warn, writer, manifest), keeps the rest", () => {
    const dir = path.join(tmp, 'resume');
    createRun({ dir }, input).abort('interrupted');
    fs.writeFileSync(path.join(dir, 'stream-timeline.html'), '<html>');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const w = createRun({ dir }, input);
      expect(w.movedAside).toMatch(/resume\.incomplete-\d{8}-\d{6}$/);
      expect(warn).toHaveBeenCalledWith(
        `loadlab: ${dir} held an incomplete run; moved its files to ${w.movedAside} (nothing deleted)`,
      );
      expect(w.manifest.notes).toEqual([`the files of an incomplete run found in this folder were moved to ${w.movedAside}`]);
      expect(tree(w.movedAside!)).toEqual(['manifest.json', 'requests.jsonl']);
      expect(loadRun(w.movedAside!).manifest.status).toBe('interrupted');
      expect(tree(dir)).toEqual(['.lock', 'manifest.json', 'requests.jsonl', 'stream-timeline.html']);
      w.abort('failed');
    } finally {
      warn.mockRestore();
    }
  });
});

describe('checkRunDir: what a new run would do to --out, checked before any request (item 10)', () => {
  it("says new / empty / incomplete / complete, and names the caller's replace flag", () => {
    expect(checkRunDir(path.join(tmp, 'nothing-here', 'deep'), false)).toBe('new');
    fs.mkdirSync(path.join(tmp, 'empty'));
    expect(checkRunDir(path.join(tmp, 'empty'), false)).toBe('empty');
    const dir = path.join(tmp, 'done');
    complete(dir);
    expect(checkRunDir(dir, true)).toBe('complete');
    expect(() => checkRunDir(dir, false, '--replace')).toThrow(/already holds a complete run; pass --replace to overwrite it/);
  });

  it('names the fix for a file, a path through a file, and an unwritable parent', () => {
    const file = path.join(tmp, 'afile');
    fs.writeFileSync(file, 'x');
    expect(() => checkRunDir(file, false)).toThrow(`${file} is a file, not a folder; give the run a folder path`);
    expect(() => checkRunDir(path.join(file, 'sub'), false)).toThrow(
      /part of its path is a file, not a folder; choose another path/,
    );
    if (process.getuid?.() !== 0) {
      const locked = path.join(tmp, 'locked');
      fs.mkdirSync(locked, { mode: 0o500 });
      expect(() => checkRunDir(path.join(locked, 'run'), false)).toThrow(
        /no write permission in .*locked; choose a folder you can write to/,
      );
    }
  });
});
