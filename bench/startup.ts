/**
 * Start-up cost of `loadlab` and of the simulator, from dist/ (bundled JavaScript, bin/build-dist.js)
 * and from the TypeScript sources through tsx (`LOADLAB_NO_DIST=1`, or the `.ts` entry):
 * - `loadlab --help`, `loadlab run --help`: CPU (user + system) of the whole process, from
 *   bench/rusage.py (`os.wait4`, µs resolution), and wall time;
 * - the simulator: wall time until its ready line, and its CPU at that moment (/proc/<pid>/stat);
 * - a one-request `loadlab run` against a local simulator, with the CPU split (src/proc/cpu-split.ts: its load
 *   threads pinned, its other threads on `SCHED_IDLE` through `taskset` and `chrt` processes, and back) and
 *   without (`LOADLAB_CPU_SPLIT=0`): what the split costs each run, children included.
 * Each case runs `--reps` times (default 5); the median and the minimum are printed with the load
 * average beside them. Target (issue #16): `loadlab --help` ≤ 150 ms CPU.
 *
 *   npx tsx bench/startup.ts [--reps 5]
 */

import { spawn } from 'node:child_process';
import { fromRoot } from '../src/paths';
import { distProblem } from '../src/proc/dist';
import { tsxLoaderUrl } from '../src/proc/dist';
import { loadLine, procCpuMs } from './common';
import { loadlabCpu } from './whole-process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSim } from '../src/sim/start';

interface Sample {
  cpuMs: number;
  wallMs: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** CPU and wall time of one whole `node bin/loadlab.js …args` process. */
async function timeCli(args: string[], noDist: boolean): Promise<Sample> {
  const r = await loadlabCpu(args, { ...process.env, LOADLAB_NO_DIST: noDist ? '1' : '0' });
  if (r.status !== 0) throw new Error(`loadlab ${args.join(' ')} exited with ${r.status}: ${r.stderr.slice(-300)}`);
  return { cpuMs: r.cpuMs, wallMs: r.wallMs };
}

/** Wall time until the simulator's ready line and its CPU then; the process is killed afterwards. */
function timeSim(fromDist: boolean): Promise<Sample> {
  const head = fromDist ? [fromRoot('dist', 'sim', 'main.js')] : ['--import', tsxLoaderUrl(), fromRoot('src', 'sim', 'main.ts')];
  const t0 = performance.now();
  const child = spawn(process.execPath, [...head, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      out += d;
      if (!out.includes('LOADLAB_SIM_LISTENING')) return;
      const wallMs = performance.now() - t0;
      const cpuMs = procCpuMs(child.pid!);
      child.kill('SIGKILL');
      child.once('exit', () => resolve({ cpuMs, wallMs }));
    });
    child.once('exit', (code) => (out.includes('LOADLAB_SIM_LISTENING') ? undefined : reject(new Error(`sim exited ${code}`))));
  });
}

async function row(label: string, reps: number, one: () => Sample | Promise<Sample>): Promise<void> {
  const xs: Sample[] = [];
  for (let i = 0; i < reps; i++) xs.push(await one());
  printRow(label, xs);
}

/** One line: the samples' CPU median and minimum, their wall median, and the load average now. */
function printRow(label: string, xs: readonly Sample[]): void {
  const cpu = xs.map((x) => x.cpuMs);
  const wall = xs.map((x) => x.wallMs);
  console.log(
    `  ${label.padEnd(38)} CPU median ${median(cpu).toFixed(0).padStart(4)} ms (min ${Math.min(...cpu).toFixed(0)})` +
      `  wall median ${median(wall).toFixed(0).padStart(4)} ms   (${loadLine()})`,
  );
}

/** One whole `loadlab run` of one short request against `baseUrl` (CPU with its children, from bench/rusage.py). */
async function timeOneRun(baseUrl: string, split: boolean): Promise<Sample> {
  const out = mkdtempSync(join(tmpdir(), 'loadlab-startup-run-'));
  try {
    const args = ['run', '--base-url', baseUrl, '--out', join(out, 'run'), '--num-prompts', '1', '--max-tokens', '8'];
    const r = await loadlabCpu([...args, '--prompt', 'hi', '--quiet'], { ...process.env, LOADLAB_CPU_SPLIT: split ? '1' : '0' });
    if (r.status !== 0) throw new Error(`loadlab run exited with ${r.status}: ${r.stderr.slice(-300)}`);
    return { cpuMs: r.cpuMs, wallMs: r.wallMs };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The one-request run against a simulator started here, with the CPU split and without, alternating. */
async function oneRunRows(reps: number): Promise<void> {
  const sim = await startSim();
  try {
    const xs = { on: [] as Sample[], off: [] as Sample[] };
    for (let i = 0; i < reps; i++) {
      xs.on.push(await timeOneRun(sim.baseUrl, true));
      xs.off.push(await timeOneRun(sim.baseUrl, false));
    }
    printRow('one-request run vs the simulator, split', xs.on);
    printRow('the same, LOADLAB_CPU_SPLIT=0', xs.off);
  } finally {
    await sim.stop();
  }
}

async function main(): Promise<void> {
  const repsAt = process.argv.indexOf('--reps');
  const reps = repsAt > 0 ? Number(process.argv[repsAt + 1]) : 5;
  if (!(Number.isInteger(reps) && reps >= 1)) throw new Error(`--reps must be an integer ≥ 1, got ${process.argv[repsAt + 1]}`);
  const problem = distProblem();
  console.log(`start-up, ${reps} runs each; dist/: ${problem ?? 'fresh'}`);
  for (const noDist of problem === undefined ? [false, true] : [true]) {
    const how = noDist ? 'tsx (sources)' : 'dist/';
    await row(`loadlab --help, ${how}`, reps, () => timeCli(['--help'], noDist));
    await row(`loadlab run --help, ${how}`, reps, () => timeCli(['run', '--help'], noDist));
    await row(`simulator ready, ${how}`, reps, () => timeSim(!noDist));
  }
  if (problem === undefined) await oneRunRows(reps);
  console.log(
    `  target: loadlab --help ≤ 150 ms CPU (issue #16). CPU from bench/rusage.py (os.wait4); sim CPU at its ready line (/proc, 10 ms ticks).`,
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
