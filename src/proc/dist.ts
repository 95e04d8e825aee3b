/**
 * dist/: the process entries bundled to JavaScript by `bin/build-dist.js` (run by `npm ci` through the
 * `prepare` script), so a helper process starts without tsx compiling TypeScript. It is used only while
 * it is fresh: `dist/.stamp` holds the build's start time, and no file under `src/` may be newer.
 * Editing `src/` therefore never runs stale code: the entry runs from its sources through tsx again
 * until `npm run build`. `LOADLAB_NO_DIST=1` always uses the sources. bin/loadlab.js holds the same
 * rule in plain JavaScript (it must run before any TypeScript can). The sources run through tsx: a
 * process with its loader (`tsxLoaderUrl`), a worker thread with its API (`tsxImportExpr`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../paths';

/** The first file under `dir` modified after `sinceMs` (ms since the epoch), or undefined. */
function newerFile(dir: string, sinceMs: number): string | undefined {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const f = newerFile(p, sinceMs);
      if (f) return f;
    } else if (statSync(p).mtimeMs > sinceMs) return p;
  }
  return undefined;
}

/**
 * Why dist/ cannot be used now (not built, `LOADLAB_NO_DIST=1`, or a file under src/ newer than the
 * build, named), or undefined when it can. Walks src/ (a few ms).
 */
export function distProblem(root = packageRoot()): string | undefined {
  if (process.env.LOADLAB_NO_DIST === '1') return 'LOADLAB_NO_DIST=1';
  let builtAtMs: number;
  try {
    builtAtMs = Number(JSON.parse(readFileSync(join(root, 'dist', '.stamp'), 'utf8')).builtAtMs);
  } catch {
    return 'dist/ is not built (npm ci builds it; or run npm run build)';
  }
  const newer = newerFile(join(root, 'src'), builtAtMs);
  return newer ? `${relative(root, newer)} is newer than dist/ (npm run build refreshes it)` : undefined;
}

/**
 * The built JavaScript of a TypeScript entry under `src/` (`src/sim/main.ts` → `dist/sim/main.js`,
 * absolute), when dist/ is fresh and holds it; undefined otherwise (run the source through tsx; with
 * `LOADLAB_DEBUG` set, why is said once per process on stderr).
 * @param entry absolute path of the `.ts` entry.
 */
export function builtEntry(entry: string, root = packageRoot()): string | undefined {
  const rel = relative(join(root, 'src'), entry);
  if (!entry.endsWith('.ts') || rel.startsWith('..') || rel.startsWith(sep)) return undefined;
  const js = join(root, 'dist', rel.replace(/\.ts$/, '.js'));
  try {
    statSync(js);
  } catch {
    return undefined;
  }
  const problem = distProblem(root);
  if (problem !== undefined && process.env.LOADLAB_DEBUG && !said) {
    said = true;
    process.stderr.write(`loadlab: helper processes run their TypeScript sources through tsx: ${problem}\n`);
  }
  return problem === undefined ? js : undefined;
}

let said = false;

/** The absolute `file:` URL of tsx's ESM loader inside this package's node_modules. */
export function tsxLoaderUrl(root = packageRoot()): string {
  return pathToFileURL(createRequire(join(root, 'package.json')).resolve('tsx')).href;
}

/**
 * A JavaScript expression, for a worker thread's eval'd source, that registers tsx's ESM API in that thread and
 * imports the TypeScript file `entry` (absolute), giving its module namespace. Node 20 does not apply `--import tsx`
 * hooks to a worker's own entry, so a worker of the sources starts with this.
 */
export function tsxImportExpr(entry: string, root = packageRoot()): string {
  const api = pathToFileURL(join(dirname(new URL(tsxLoaderUrl(root)).pathname), 'esm', 'api', 'index.mjs')).href;
  return `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(pathToFileURL(entry).href)}); })`;
}
