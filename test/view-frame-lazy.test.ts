import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../src/paths';

// Each probe prints which danfojs / TensorFlow.js files the child has loaded (require.cache holds
// every CommonJS module, also those reached from ESM), before and after the first DataFrame.
const ROOT = packageRoot();
const PROBE = `
const loaded = () => Object.keys(require.cache).filter((k) => /[\\\\/](danfojs|@tensorflow)[\\\\/]/.test(k)).length;
`;
const tmp = mkdtempSync(join(tmpdir(), 'loadlab-frame-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function node(args: string[]): string {
  return execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
}

describe('danfojs is loaded on first use only', () => {
  it('under tsx (ESM): importing the loader and the API loads no danfojs; recordsToDataFrame does', { timeout: 120_000 }, () => {
    const script = `${PROBE}
const { createRequire } = await import('node:module');
globalThis.require ??= createRequire(process.cwd() + '/');
await import('./src/run/loader.ts');
const ll = await import('./src/index.ts');
const before = loaded();
const df = ll.recordsToDataFrame([]);
console.log(JSON.stringify({ before, after: loaded(), cols: df.columns.length }));`;
    const out = JSON.parse(node(['--import', 'tsx', '--input-type=module', '-e', script]).trim().split('\n').pop()!);
    expect(out.before).toBe(0);
    expect(out.after).toBeGreaterThan(0); // the probe does see danfojs once it is loaded
    expect(out.cols).toBe(23);
  });

  it('compiled to CommonJS (as tslab loads src/): loader loads no danfojs; recordsToDataFrame works', {
    timeout: 120_000,
  }, () => {
    node([
      join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'),
      '--module',
      'commonjs',
      '--moduleResolution',
      'node10',
      '--target',
      'es2022',
      '--lib',
      'es2022',
      '--types',
      'node',
      '--skipLibCheck',
      '--esModuleInterop',
      '--rootDir',
      join(ROOT, 'src'),
      '--outDir',
      tmp,
      join(ROOT, 'src', 'run', 'loader.ts'),
      join(ROOT, 'src', 'view', 'frame.ts'),
    ]);
    const script = `${PROBE}
require(${JSON.stringify(join(tmp, 'run', 'loader.js'))});
const frame = require(${JSON.stringify(join(tmp, 'view', 'frame.js'))});
const before = loaded();
const df = frame.recordsToDataFrame([]);
console.log(JSON.stringify({ before, after: loaded(), cols: df.columns.length }));`;
    const out = JSON.parse(node(['-e', script]).trim().split('\n').pop()!);
    expect(out.before).toBe(0);
    expect(out.after).toBeGreaterThan(0);
    expect(out.cols).toBe(23);
  });
});
