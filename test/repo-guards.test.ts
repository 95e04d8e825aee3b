import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/paths';

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('src/ stays loadable by the tslab kernel', () => {
  const files = tsFiles(join(packageRoot(), 'src'));

  it('never uses import.meta (tslab loads src/ as CommonJS; use src/paths.ts)', () => {
    const offenders = files.filter((f) => /\bimport\.meta\.\w+/.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('uses extensionless relative imports (tslab has no allowImportingTsExtensions)', () => {
    const offenders = files.filter((f) => /from\s+['"]\.{1,2}\/[^'"]*\.ts['"]/.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });
});
