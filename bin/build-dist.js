#!/usr/bin/env node
// Build dist/: LoadLab's process entries bundled to plain JavaScript with esbuild, so `loadlab` and the
// helper processes it starts (simulator, null server) run without compiling TypeScript at every start.
// Run by `npm ci` / `npm install` (the `prepare` script) and by `npm run build`.
//
// - Entries: the CLI (src/cli/main.ts), the simulator (src/sim/main.ts), the null server
//   (src/calibrate/null-server.ts), a run's worker thread (src/runner/worker-main.ts). ESM with code splitting, so the CLI's lazy subcommand imports
//   stay lazy: `loadlab --help` loads only the CLI's own chunk.
// - npm packages stay external (resolved from node_modules at run time), but for undici and eventsource-parser,
//   which every run loads: bundled, they start faster than undici's 130 CommonJS files.
// - src/ is written for tsx and tslab, where `__dirname` and `require` exist (src/paths.ts finds the
//   package root from `__dirname`; src/view resolves plotly.js and tslab with `require`). ESM has
//   neither, so every chunk defines both, from its own place inside the package.
// - dist/.stamp holds the build's start time: bin/loadlab.js and src/proc/dist.ts use dist/ only while
//   no file under src/ is newer, so editing src/ never runs stale code.
// - esbuild comes with tsx (a dependency; same version). Without it this prints why and builds
//   nothing: LoadLab then runs through tsx as before.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
/** Entry points, relative to the package root; dist/ mirrors their path under src/ with `.js`. */
export const ENTRIES = ['src/cli/main.ts', 'src/sim/main.ts', 'src/calibrate/null-server.ts', 'src/runner/worker-main.ts'];

/** Packages bundled into dist/ (the rest are external). */
const BUNDLED = new Set(['undici', 'eventsource-parser']);

/** esbuild plugin: every bare import (an npm package or a `node:` module) stays external but for {@link BUNDLED}. */
const externalPackages = {
  name: 'loadlab-external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      const parts = args.path.split('/');
      const name = args.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
      return BUNDLED.has(name) ? undefined : { path: args.path, external: true };
    });
  },
};

const BANNER = [
  "import { createRequire as __llCreateRequire } from 'node:module';",
  "import { dirname as __llDirname } from 'node:path';",
  "import { fileURLToPath as __llFileURLToPath } from 'node:url';",
  'const __dirname = __llDirname(__llFileURLToPath(import.meta.url));',
  'const require = __llCreateRequire(import.meta.url);',
].join('\n');

async function build() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch (err) {
    process.stderr.write(`loadlab build: esbuild is not installed (${err.message}); dist/ not built, loadlab runs through tsx.\n`);
    return 0;
  }
  const started = Date.now();
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: ENTRIES,
    outbase: 'src',
    outdir: 'dist',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // undici and eventsource-parser are bundled (undici's 130 CommonJS files cost ≈ 30 ms of loading at every start);
    // the other packages stay external: large (danfojs, plotly, the tokenizer's data) or only for development (tsx).
    plugins: [externalPackages],
    chunkNames: 'chunks/[name]-[hash]',
    banner: { js: BANNER },
    logLevel: 'warning',
  });
  writeFileSync(join(dist, '.stamp'), `${JSON.stringify({ builtAtMs: started, esbuild: esbuild.version })}\n`);
  if (process.env.LOADLAB_DEBUG) process.stderr.write(`loadlab build: dist/ built in ${Date.now() - started} ms\n`);
  return 0;
}

// A failed build never fails `npm ci` (LoadLab still runs through tsx); `--strict` makes it fail (CI, `npm run build`).
process.exitCode = await build().catch((err) => {
  process.stderr.write(`loadlab build failed, loadlab runs through tsx: ${err?.stack ?? err}\n`);
  rmSync(dist, { recursive: true, force: true }); // never leave a half-built dist/ behind
  return process.argv.includes('--strict') ? 1 : 0;
});
