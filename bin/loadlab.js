#!/usr/bin/env node
// The `loadlab` command. It runs dist/cli/main.js (built by `npm ci` through the `prepare` script, see
// bin/build-dist.js) when dist/ exists and no file under src/ is newer than the build; otherwise it
// runs src/cli/main.ts through tsx's loader (TypeScript compiled at start), so editing src/ never runs
// stale code. `LOADLAB_DEBUG=1` says on stderr why dist/ was not used; `LOADLAB_NO_DIST=1` forces tsx.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The first file under `dir` modified after `sinceMs`, or undefined. */
function newerFile(dir, sinceMs) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const f = newerFile(p, sinceMs);
      if (f) return f;
    } else if (statSync(p).mtimeMs > sinceMs) return p;
  }
  return undefined;
}

/** Why dist/ cannot be used, or undefined when it can (mirrors src/proc/dist.ts). */
function distProblem() {
  if (process.env.LOADLAB_NO_DIST === '1') return 'LOADLAB_NO_DIST=1';
  let builtAtMs;
  try {
    builtAtMs = JSON.parse(readFileSync(join(root, 'dist', '.stamp'), 'utf8')).builtAtMs;
    statSync(join(root, 'dist', 'cli', 'main.js'));
  } catch {
    return 'dist/ is not built (npm ci builds it; or run npm run build)';
  }
  const newer = newerFile(join(root, 'src'), builtAtMs);
  return newer ? `${newer.slice(root.length + 1)} is newer than dist/ (npm run build refreshes it)` : undefined;
}

const problem = distProblem();
let main;
if (problem === undefined) {
  ({ main } = await import(pathToFileURL(join(root, 'dist', 'cli', 'main.js')).href));
} else {
  if (process.env.LOADLAB_DEBUG) process.stderr.write(`loadlab: running the TypeScript sources through tsx: ${problem}\n`);
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
const code = await main(process.argv.slice(2));
if (typeof code === 'number') {
  process.exitCode = code;
  // A Ctrl-C while the finished command shuts down still ends it as an interrupt.
  process.on('SIGINT', () => process.exit(130));
  // Leave once output is flushed; a stray keep-alive handle must not keep a finished command alive.
  setTimeout(() => process.exit(code), 2000).unref();
}
