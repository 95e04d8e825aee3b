/**
 * Where LoadLab's own files are, from any way of loading it: tsx (ESM), vitest, or the
 * tslab notebook kernel. tslab compiles `src/` to CommonJS and loads it through
 * `require(esm)`, where `import.meta` breaks the module, so `src/` never uses `import.meta`;
 * this module finds the package root from `__dirname` (CommonJS), from its own stack frame
 * (ESM), or from the working directory, in that order.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

function isLoadlabRoot(dir: string): boolean {
  const pkg = join(dir, 'package.json');
  if (!existsSync(pkg)) return false;
  try {
    return JSON.parse(readFileSync(pkg, 'utf8')).name === 'loadlab';
  } catch {
    return false;
  }
}

function searchUp(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    if (isLoadlabRoot(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function ownDirFromStack(): string | undefined {
  const frame = (new Error().stack ?? '').split('\n').find((l) => /paths\.(ts|js|mjs|cjs)/.test(l));
  const m = frame && /\(?((?:file:\/\/)?\/[^():]+):\d+:\d+\)?\s*$/.exec(frame);
  if (!m) return undefined;
  const file = m[1].startsWith('file://') ? fileURLToPath(m[1]) : m[1];
  return dirname(file);
}

/**
 * The LoadLab package root (the folder with its package.json). `LOADLAB_ROOT` overrides.
 * Throws, naming the fix, when it cannot be found.
 */
export function packageRoot(): string {
  if (cached) return cached;
  const candidates = [
    process.env.LOADLAB_ROOT,
    typeof __dirname !== 'undefined' ? __dirname : undefined,
    ownDirFromStack(),
    process.cwd(),
  ];
  for (const c of candidates) {
    const found = c ? searchUp(c) : undefined;
    if (found) return (cached = found);
  }
  throw new Error('Cannot find the LoadLab package root; set LOADLAB_ROOT to the folder that holds its package.json.');
}

/** A path inside the package, e.g. `fromRoot('src', 'sim', 'main.ts')`. */
export function fromRoot(...parts: string[]): string {
  return join(packageRoot(), ...parts);
}

/** The simulator's default profile: its file stem under `profiles/` (RTX 4090 + Qwen2.5-7B-Instruct-GPTQ-Int4). */
export const DEFAULT_SIM_PROFILE_ID = 'rtx4090-qwen2.5-7b-instruct-gptq-int4';
