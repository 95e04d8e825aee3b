// src/client/undici.ts keeps undici's llhttp parser (WebAssembly) on V8's baseline compiler: V8's TurboFan recompile of
// it costs 85–164 ms of CPU in every process and every worker thread (bench/README.md §13). V8's own trace says which
// compiler ran; a run with two worker threads covers the main thread's probes and each worker's connections. Against an
// http: target LoadLab does not load undici at all (the lean pool, src/client/h1-pool.ts; bench/README.md §23), so
// the trace shows no WebAssembly; LOADLAB_HTTP_CLIENT=undici brings undici back, as an https: target does.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromRoot } from '../src/paths';
import { spawnScriptedServer, type ScriptedServer } from './helpers/sse-server';

let tmp: string;
let server: ScriptedServer;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-liftoff-'));
  server = await spawnScriptedServer({ firstTokenDelayMs: 5, gapMs: 2, tokens: 50 });
}, 30_000);
afterAll(async () => {
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** `node --trace-wasm-compilation-times bin/loadlab.js run …` against the scripted server: exit code and stderr. */
function tracedRun(name: string, env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const args = ['--trace-wasm-compilation-times', fromRoot('bin', 'loadlab.js'), 'run', '--base-url', server.url];
  args.push('--out', join(tmp, name), '--num-prompts', '16', '--max-concurrency', '4', '--workers', '2', '--quiet');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stderr += d.toString())); // V8's trace goes to stdout
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe('loadlab compiles llhttp with Liftoff only', () => {
  it('runs the parser without a TurboFan compile in any thread; LOADLAB_WASM_TURBOFAN=1 leaves V8 its default', {
    timeout: 60_000,
  }, async () => {
    const lean = await tracedRun('lean', {});
    expect(lean.code, lean.stderr.slice(-800)).toBe(0);
    expect(lean.stderr).not.toMatch(/using (Liftoff|TurboFan)/); // no undici, so no llhttp, in any thread
    const ours = await tracedRun('liftoff', { LOADLAB_HTTP_CLIENT: 'undici' });
    expect(ours.code, ours.stderr.slice(-800)).toBe(0);
    expect(ours.stderr).toMatch(/using Liftoff/);
    expect(ours.stderr).not.toMatch(/using TurboFan/);
    const v8default = await tracedRun('default', { LOADLAB_HTTP_CLIENT: 'undici', LOADLAB_WASM_TURBOFAN: '1' });
    expect(v8default.code, v8default.stderr.slice(-800)).toBe(0);
    expect(v8default.stderr).toMatch(/using Liftoff/); // the same parser ran; whether V8 tiers it up is V8's call
  });
});
