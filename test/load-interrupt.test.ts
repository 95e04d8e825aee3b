import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRun } from '../src/run/loader';

describe('SIGINT during a run (Ctrl-C, or "interrupt kernel" in a notebook)', () => {
  it('stops sending, cancels in-flight requests as aborted, writes the summary and lets the process go on', () => {
    const root = mkdtempSync(join(tmpdir(), 'loadlab-sigint-'));
    const out = join(root, 'run');
    try {
      const child = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, 'fixtures', 'sigint-run.ts'), out], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(child.status, child.stderr).toBe(0); // not killed by the signal: the run caught it
      const result = JSON.parse(child.stdout.trim().split('\n').pop()!);
      expect(result.status).toBe('interrupted');
      expect(result.sigintListeners).toBe(0); // the run removed its listener
      expect(result.records).toBeLessThan(40); // it stopped sending
      expect(result.codes).toContain('aborted'); // in-flight ones were cancelled, not lost
      expect(result.codes).toContain('ok'); // what finished before the interrupt is kept
      const saved = loadRun(out);
      expect(saved.manifest.status).toBe('interrupted');
      expect(saved.records).toHaveLength(result.records); // every record on disk
      expect(existsSync(join(out, 'summary.json'))).toBe(true);
      expect(JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')).completed).toBe(
        result.codes.filter((c: string) => c === 'ok').length,
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
