/**
 * What this machine charges the simulator's own JavaScript for starting each engine step cold: bench/serve-cost.ts
 * `idle=MS` in its own process on the server's CPU (no sockets, a virtual clock), each pass once back to back and once
 * asleep MS after every step, as real-time steps leave the simulator's thread idle (bench/README.md §34). On a VM
 * whose last-level cache is shared with busy neighbours, a step after a long sleep finds little of its working set
 * still cached; the difference between the two passes is that refill, per token. `yard-sim` prints it beside the
 * simulator's ratio to its bare writer, which holds a few objects per stream and pays less of it.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { tsxLoaderUrl } from '../src/proc/dist';
import { packageRoot } from '../src/paths';
import { percentile } from '../src/stats/percentile';
import { round } from './common';
import { pinServer } from './cpu-split';

/** The main thread's CPU per token, µs: medians over the passes after the first (a warm-up). */
export interface ColdStep {
  streams: number;
  idleMs: number;
  passes: number;
  backToBackUs: number;
  afterIdleUs: number;
  /** afterIdleUs − backToBackUs. */
  coldUs: number;
  loadAverage1m: number;
}

/** One pass as serve-cost reports it with `LOADLAB_SERVE_COST_JSON=1`: the main thread's µs per token each way. */
interface PassReport {
  alone: { mainUs: number };
  cold?: { mainUs: number };
}

/** Run serve-cost `streams` × `tokens`, `passes` passes, `idle=idleMs`, pinned where the servers run; its medians. */
export async function coldStep(streams = 128, tokens = 150, passes = 4, idleMs = 15): Promise<ColdStep> {
  const root = packageRoot();
  const args = ['--import', tsxLoaderUrl(root), join(root, 'bench', 'serve-cost.ts')];
  const child = spawn(process.execPath, [...args, String(streams), String(tokens), String(passes), `idle=${idleMs}`], {
    cwd: root,
    env: { ...process.env, LOADLAB_SERVE_COST_JSON: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid !== undefined) pinServer(child.pid); // before it starts work; the threads it makes later inherit the CPU
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const rows = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as PassReport)
    .slice(1)
    .map((r) => [r.alone.mainUs, r.cold?.mainUs ?? Number.NaN] as const);
  if (code !== 0 || rows.length === 0)
    throw new Error(`cold-step: serve-cost exited ${code} with ${rows.length} passes after its first: ${err.trim().slice(-500)}`);
  const median = (i: 0 | 1) => {
    const xs = rows.map((r) => r[i]);
    return round(percentile(xs, 50), 2);
  };
  const backToBackUs = median(0);
  const afterIdleUs = median(1);
  const coldUs = round(afterIdleUs - backToBackUs, 2);
  return { streams, idleMs, passes: rows.length, backToBackUs, afterIdleUs, coldUs, loadAverage1m: round(loadavg()[0], 2) };
}

/** The line `yard-sim` prints. */
export function coldStepLine(c: ColdStep): string {
  return (
    `the simulator's JavaScript alone (serve-cost, C=${c.streams}, no sockets), main thread: ${c.backToBackUs} µs/token ` +
    `back to back, ${c.afterIdleUs} asleep ${c.idleMs} ms after each step (medians of ${c.passes} passes): each step ` +
    `starting cold costs ${c.coldUs} µs/token here [load ${c.loadAverage1m}]`
  );
}
