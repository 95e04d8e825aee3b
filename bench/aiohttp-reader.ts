/**
 * The reference reader of the client yardstick (bench/client-yardstick.ts): bench/aiohttp_reader.py, an aiohttp
 * client timed like `vllm bench serve`, in its own Python process.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { NULL_SERVER_MODEL } from '../src/calibrate/null-server';
import { fromRoot } from '../src/paths';
import type { PassSpec, ReaderPass } from './yard-readers';

/** Debian's Python with aiohttp (pyenv's `python3` on PATH lacks it). */
export const PYTHON = '/usr/bin/python3';

/** Why the aiohttp reader cannot run here, or undefined when it can. */
export async function aiohttpMissing(): Promise<string | undefined> {
  if (!existsSync(PYTHON)) return `${PYTHON} not found`;
  const code = await new Promise<number | null>((resolve) => {
    const c = spawn(PYTHON, ['-c', 'import aiohttp'], { stdio: 'ignore' });
    c.on('exit', resolve);
    c.on('error', () => resolve(-1));
  });
  return code === 0 ? undefined : `${PYTHON} has no aiohttp (apt-get install python3-aiohttp)`;
}

/** The reference: bench/aiohttp_reader.py in its own process; CPU from its `getrusage`. */
export async function aiohttpReader(p: PassSpec): Promise<ReaderPass> {
  const cfg = {
    base_url: p.baseUrl,
    model: NULL_SERVER_MODEL,
    streams: p.streams,
    tokens: p.tokens,
    gap_ms: p.gapMs,
    prefix: p.prefix,
  };
  const child = spawn(PYTHON, [fromRoot('bench', 'aiohttp_reader.py'), JSON.stringify(cfg)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`aiohttp reader exited with ${code}: ${err.slice(-600)}`);
  const r = JSON.parse(out) as {
    cpu_s: number;
    sys_s: number;
    wall_s: number;
    itl_ms: number[];
    ok: number;
    process_cpu_s: number;
  };
  return {
    cpuMs: r.cpu_s * 1000,
    systemMs: r.sys_s * 1000,
    wallMs: r.wall_s * 1000,
    itlMs: r.itl_ms,
    loopDelayP99Ms: NaN,
    ok: r.ok,
    processCpuMs: r.process_cpu_s * 1000,
  };
}
