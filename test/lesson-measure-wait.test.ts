import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitForOwnRun } from '../src/lesson/measure';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function folder(): string {
  const d = mkdtempSync(join(tmpdir(), 'loadlab-wait-'));
  dirs.push(d);
  return d;
}

describe('measure waits for this kernel’s interrupted run of the same point', () => {
  it('returns only once a lock held by this process is released', async () => {
    const dir = folder();
    const lock = join(dir, '.lock');
    writeFileSync(lock, `${process.pid}\n`);
    setTimeout(() => rmSync(lock, { force: true }), 150);
    await waitForOwnRun(dir, 'p');
    expect(existsSync(lock)).toBe(false);
  });

  it('does not wait for a lock held by another process (the run store refuses that one, naming the fix)', async () => {
    const dir = folder();
    const lock = join(dir, '.lock');
    writeFileSync(lock, `${process.pid + 1}\n`);
    await waitForOwnRun(dir, 'p');
    expect(existsSync(lock)).toBe(true);
  });

  it('does nothing for a folder without a lock', async () => {
    await expect(waitForOwnRun(join(folder(), 'missing'), 'p')).resolves.toBeUndefined();
  });
});
