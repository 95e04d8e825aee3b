/**
 * Whole processes, start-up and exit included, for the client yardstick (issue #16, row 2):
 * - {@link childCpu}: run a command under bench/rusage.py (Python's `os.wait4`), so its CPU is the
 *   kernel's own account of the whole child, µs resolution; no /usr/bin/time needed;
 * - {@link loadlabRunReader}: one whole `loadlab run` (bin/loadlab.js: dist/ when built, as a learner
 *   runs it) against the null server, C streams × T tokens at once, as `vllm bench serve` runs;
 *   CPU from {@link childCpu}, ITL from the token-chunk stamps in its `requests.jsonl`, event-loop
 *   delay from its manifest's client health (10 ms timer, interval subtracted).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromRoot } from '../src/paths';
import { round } from './common';
import { PYTHON } from './aiohttp-reader';
import { gaps, type PassSpec, type ReaderPass } from './yard-readers';

/** What the kernel says one whole child process cost. */
export interface ChildCpu {
  /** User + system CPU, ms. */
  cpuMs: number;
  systemMs: number;
  wallMs: number;
  maxRssKiB: number;
  status: number;
  /** The child's stderr (last 2 KB), for error messages. */
  stderr: string;
}

/** Run `cmd args` to its end under bench/rusage.py; its stdout is discarded. */
export function childCpu(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<ChildCpu> {
  const child = spawn(PYTHON, [fromRoot('bench', 'rusage.py'), cmd, ...args], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    env,
  });
  let err = '';
  let ru = '';
  child.stderr?.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-2048)));
  child.stdio[3]?.on('data', (b: Buffer) => (ru += b.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', () => {
      try {
        const r = JSON.parse(ru) as { user_s: number; sys_s: number; wall_s: number; maxrss_kib: number; status: number };
        resolve({
          cpuMs: (r.user_s + r.sys_s) * 1000,
          systemMs: r.sys_s * 1000,
          wallMs: r.wall_s * 1000,
          maxRssKiB: r.maxrss_kib,
          status: r.status,
          stderr: err,
        });
      } catch {
        reject(new Error(`bench/rusage.py gave no figures for ${cmd}: ${err.slice(-600)}`));
      }
    });
  });
}

/** `node bin/loadlab.js …args` as a whole process. */
export function loadlabCpu(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<ChildCpu> {
  return childCpu(process.execPath, [fromRoot('bin', 'loadlab.js'), ...args], env);
}

/** The median (the upper middle when even). */
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Median CPU of `reps` runs of `loadlab …args` (e.g. `--help`), ms, and every figure. */
export async function cliCpuMs(args: string[], reps: number): Promise<{ medianMs: number; all: number[] }> {
  const all: number[] = [];
  for (let i = 0; i < reps; i++) all.push((await loadlabCpu(args)).cpuMs);
  return { medianMs: median(all), all };
}

/** One whole `loadlab run`: `streams` requests at once (closed loop of `streams`), `tokens` each; `env` adds to ours. */
export async function loadlabRunReader(p: PassSpec, env: NodeJS.ProcessEnv = {}): Promise<ReaderPass> {
  const out = mkdtempSync(join(tmpdir(), 'loadlab-yard-run-'));
  try {
    const args = ['run', '--base-url', p.baseUrl, '--out', out, '--num-prompts', String(p.streams)];
    args.push('--max-concurrency', String(p.streams), '--max-tokens', String(p.tokens), '--ignore-eos', '--quiet');
    args.push('--prompt', 'hi', '--extra-body', JSON.stringify({ null_gap_ms: p.gapMs }));
    const r = await loadlabCpu(args, { ...process.env, ...env });
    if (r.status !== 0) throw new Error(`loadlab run exited with ${r.status}: ${r.stderr.slice(-600)}`);
    const recs = readFileSync(join(out, 'requests.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { ok: boolean; chunkMs?: number[]; requestId?: string });
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
      client?: { eventLoopDelayP99Ms?: number };
    };
    return {
      cpuMs: r.cpuMs,
      systemMs: r.systemMs,
      wallMs: r.wallMs,
      itlMs: gaps(recs.map((rec) => rec.chunkMs ?? [])),
      loopDelayP99Ms: manifest.client?.eventLoopDelayP99Ms ?? NaN,
      ok: recs.filter((x) => x.ok).length,
      processCpuMs: r.cpuMs,
      idPrefix: recs[0]?.requestId?.replace(/-\d+$/, ''),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** What a whole process costs before it reads a single event, ms of CPU (medians): a bare Node and a one-request `loadlab run`. */
export interface FixedCosts {
  /** `node -e 0`: the least any Node reader's process costs. */
  nodeMs: number;
  /** One whole `loadlab run` of 1 request × 5 tokens: LoadLab's start-up, probes, files and exit. */
  oneRunMs: number;
  /** The same with `LOADLAB_HTTP_CLIENT=undici`: every request through undici, as to an `https:` target (bench/README.md §23). */
  oneRunUndiciMs: number;
  /**
   * `node -e 0` with NODE_EXTRA_CA_CERTS unset, when this machine sets it: Node 20 then parses the whole bundle
   * at every start, before any JavaScript runs. Python's aiohttp is not charged for it.
   */
  nodeWithoutCaMs?: number;
}

/** Median CPU of `reps` whole `node -e 0` processes, in `env`. */
async function nodeMs(reps: number, env: NodeJS.ProcessEnv): Promise<number> {
  const all: number[] = [];
  for (let i = 0; i < reps; i++) all.push((await childCpu(process.execPath, ['-e', '0'], env)).cpuMs);
  return median(all);
}

/** Measure {@link FixedCosts} against the null server at `baseUrl` (5 or 10 bare Nodes, 6 one-request runs). */
export async function fixedCosts(baseUrl: string, port: number): Promise<FixedCosts> {
  const one: number[] = [];
  const undici: number[] = [];
  for (let i = 0; i < 3; i++) {
    const spec = { baseUrl, port, streams: 1, tokens: 5, gapMs: 1 };
    one.push((await loadlabRunReader({ ...spec, prefix: `fixed-${i}` })).cpuMs);
    undici.push((await loadlabRunReader({ ...spec, prefix: `fixed-u-${i}` }, { LOADLAB_HTTP_CLIENT: 'undici' })).cpuMs);
  }
  const out: FixedCosts = { nodeMs: await nodeMs(5, process.env), oneRunMs: median(one), oneRunUndiciMs: median(undici) };
  if (process.env.NODE_EXTRA_CA_CERTS) {
    const { NODE_EXTRA_CA_CERTS: _, ...rest } = process.env;
    out.nodeWithoutCaMs = await nodeMs(5, rest);
  }
  return out;
}

/** The fixed costs, with what this machine's NODE_EXTRA_CA_CERTS and undici add. */
export function fixedLine(f: FixedCosts): string {
  const ca =
    f.nodeWithoutCaMs === undefined
      ? ''
      : ` (${round(f.nodeWithoutCaMs, 1)} ms without NODE_EXTRA_CA_CERTS, which this machine sets: every Node process parses that bundle at start)`;
  return (
    `fixed cost of a whole process, CPU median: node -e 0 ${round(f.nodeMs, 1)} ms${ca}; a one-request loadlab run ` +
    `${round(f.oneRunMs, 1)} ms (${round(f.oneRunUndiciMs, 1)} ms through undici, LOADLAB_HTTP_CLIENT=undici) [load ${round(loadavg()[0], 2)}]`
  );
}
