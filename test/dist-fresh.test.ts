import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromRoot } from '../src/paths';
import { builtEntry, distProblem } from '../src/proc/dist';

const tmp = mkdtempSync(join(tmpdir(), 'loadlab-dist-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A package root with src/sim/main.ts and a dist/ built at `builtAtMs`. */
function fakeRoot(name: string, builtAtMs: number): string {
  const root = join(tmp, name);
  mkdirSync(join(root, 'src', 'sim'), { recursive: true });
  mkdirSync(join(root, 'dist', 'sim'), { recursive: true });
  writeFileSync(join(root, 'src', 'sim', 'main.ts'), '');
  writeFileSync(join(root, 'dist', 'sim', 'main.js'), '');
  const old = new Date(builtAtMs - 60_000);
  utimesSync(join(root, 'src', 'sim', 'main.ts'), old, old);
  writeFileSync(join(root, 'dist', '.stamp'), JSON.stringify({ builtAtMs }));
  return root;
}

describe('dist/ is used only while fresh', () => {
  it('uses the built entry when no src/ file is newer than the build', () => {
    const root = fakeRoot('fresh', Date.now());
    expect(distProblem(root)).toBeUndefined();
    expect(builtEntry(join(root, 'src', 'sim', 'main.ts'), root)).toBe(join(root, 'dist', 'sim', 'main.js'));
  });

  it('names the src/ file that is newer than the build, and then runs the source', () => {
    const root = fakeRoot('stale', Date.now() - 3_600_000);
    mkdirSync(join(root, 'src', 'run'));
    writeFileSync(join(root, 'src', 'run', 'store.ts'), '// edited after the build');
    expect(distProblem(root)).toBe(`${join('src', 'run', 'store.ts')} is newer than dist/ (npm run build refreshes it)`);
    expect(builtEntry(join(root, 'src', 'sim', 'main.ts'), root)).toBeUndefined();
  });

  it('runs the source when dist/ is not built, lacks the entry, or LOADLAB_NO_DIST=1', () => {
    const root = fakeRoot('partial', Date.now());
    expect(builtEntry(join(root, 'src', 'sim', 'other.ts'), root)).toBeUndefined();
    expect(builtEntry(join(root, 'test', 'entry.ts'), root)).toBeUndefined(); // not under src/
    rmSync(join(root, 'dist', '.stamp'));
    expect(distProblem(root)).toMatch(/dist\/ is not built \(npm ci builds it; or run npm run build\)/);
    writeFileSync(join(root, 'dist', '.stamp'), JSON.stringify({ builtAtMs: Date.now() }));
    const before = process.env.LOADLAB_NO_DIST;
    process.env.LOADLAB_NO_DIST = '1';
    try {
      expect(builtEntry(join(root, 'src', 'sim', 'main.ts'), root)).toBeUndefined();
    } finally {
      if (before === undefined) delete process.env.LOADLAB_NO_DIST;
      else process.env.LOADLAB_NO_DIST = before;
    }
  });

  it('bin/loadlab.js answers the same from dist/ and from the sources, and says why it used tsx', () => {
    const run = (env: Record<string, string>) =>
      spawnSync(process.execPath, [fromRoot('bin', 'loadlab.js'), '--version'], {
        encoding: 'utf8',
        env: { ...process.env, LOADLAB_DEBUG: '1', ...env },
      });
    const viaTsx = run({ LOADLAB_NO_DIST: '1' });
    expect(viaTsx.status).toBe(0);
    expect(viaTsx.stderr).toContain('loadlab: running the TypeScript sources through tsx: LOADLAB_NO_DIST=1');
    const either = run({ LOADLAB_NO_DIST: '0' }); // dist/ when built and fresh, else tsx (saying why)
    expect(either.status).toBe(0);
    expect(either.stdout).toBe(viaTsx.stdout);
  });
});
