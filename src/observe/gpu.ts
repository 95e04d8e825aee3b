/**
 * GPU timeline from `nvidia-smi`, on the run's clock: utilisation, memory and power every
 * `intervalMs` (`--query-gpu … -lms N`), and PCIe rx/tx once a second (`dmon -s t`, whose
 * period cannot go below 1 s). Each output line becomes its own `GpuSample`: query rows carry
 * util/mem/power, dmon rows carry PCIe, and nothing is carried over or interpolated between them.
 *
 * Where `nvidia-smi` is missing (this dev machine, a laptop) or fails (no driver), the sampler
 * says so in ONE log line, reports `available: false` with the reason and records nothing:
 * GPU numbers are never made up. Children are plain (not detached) processes; if Node dies they
 * die on their next write to the closed pipe.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { openLineAppender, type LineAppender } from '../run/atomic';
import type { GpuSample } from '../types';
import { createDmonReader, GPU_QUERY_FIELDS, parseGpuQueryLine } from './gpu-parse';
import { which } from '../proc/which';

/** Options of `startGpuSampler`. */
export interface GpuSamplerOptions {
  /** Period of the util/mem/power query in ms (`-lms`); default 250. */
  intervalMs?: number;
  /** The run's clock, ms since the run origin; default `performance.now`. */
  now?: () => number;
  /** Append each sample as one JSON line to this file (e.g. `<run>/gpu.jsonl`); folders are created. */
  file?: string;
  /** The `nvidia-smi` executable (name on PATH or a path); default `'nvidia-smi'`. */
  bin?: string;
  /** Also run `nvidia-smi dmon -s t` for PCIe MB/s (1 s period); default true. */
  pcie?: boolean;
  /** Where the one "not available" / "failed" line goes; default `console.log`. */
  log?: (line: string) => void;
  onSample?: (sample: GpuSample) => void;
}

/** A running (or unavailable) GPU sampler. */
export interface GpuSampler {
  /** False when nvidia-smi is missing or failed before giving a sample; then nothing is recorded. */
  readonly available: boolean;
  /** Why it is not available (or what went wrong later), in words. */
  readonly reason: string | undefined;
  /** Samples so far (live array; empty when unavailable). */
  readonly samples: GpuSample[];
  /** Stops the nvidia-smi processes and closes the file; resolves with all samples. Idempotent. */
  stop(): Promise<GpuSample[]>;
}

/**
 * Starts sampling the GPU(s) with `nvidia-smi`. Never throws for a missing GPU: check
 * `available`. Throws only for a bad `intervalMs`.
 */
export function startGpuSampler(options: GpuSamplerOptions = {}): GpuSampler {
  const intervalMs = options.intervalMs ?? 250;
  if (!Number.isInteger(intervalMs) || intervalMs < 1)
    throw new Error(`intervalMs must be an integer ≥ 1 (ms), got ${intervalMs}`);
  const now = options.now ?? (() => performance.now());
  const bin = options.bin ?? 'nvidia-smi';
  const log = options.log ?? ((line: string) => console.log(line));
  const samples: GpuSample[] = [];
  let available = true;
  let reason: string | undefined;
  let said = false;
  /** Reports a problem once; `fatal` (the main query failed before any reading) makes the sampler unavailable. */
  const say = (why: string, fatal = true) => {
    reason ??= why;
    if (fatal && samples.length === 0) available = false;
    if (!said) log(`GPU metrics: ${why}`);
    said = true;
  };

  const path = which(bin);
  if (!path) {
    say(
      `'${bin}' was not found on PATH, so this machine has no NVIDIA driver to ask; no GPU metrics are recorded (none are made up).`,
    );
    return { available: false, reason, samples, stop: async () => samples };
  }

  let out: LineAppender | undefined;
  if (options.file) {
    mkdirSync(dirname(options.file), { recursive: true });
    out = openLineAppender(options.file);
  }
  let stopping = false;
  const record = (s: GpuSample | undefined) => {
    if (!s || stopping) return;
    samples.push(s);
    out?.append(s);
    options.onSample?.(s);
  };

  // nvidia-smi writes through C stdio, which buffers whole blocks into a pipe; stdbuf -oL makes
  // it hand over each line as printed, so stamps are taken when the reading was made.
  const stdbuf = which('stdbuf');
  const run = (args: string[], onLine: (line: string) => void, fatal: boolean): ChildProcess =>
    spawnSmi({ path, bin, stdbuf, args, onLine, problem: (why) => say(why, fatal), stopping: () => stopping });
  const query = [`--query-gpu=${GPU_QUERY_FIELDS.join(',')}`, '--format=csv,noheader,nounits', '-lms', String(intervalMs)];
  const children = [run(query, (l) => record(parseGpuQueryLine(l, now())), true)];
  if (options.pcie ?? true) {
    const dmon = createDmonReader();
    children.push(run(['dmon', '-s', 't'], (l) => record(dmon.line(l, now())), false));
  }

  let stopped: Promise<GpuSample[]> | undefined;
  return {
    get available() {
      return available;
    },
    get reason() {
      return reason;
    },
    samples,
    stop() {
      stopped ??= (async () => {
        stopping = true;
        await Promise.all(children.map(endChild));
        out?.close();
        return samples;
      })();
      return stopped;
    },
  };
}

/** How to run one `nvidia-smi` child: its output lines go to `onLine`, a failure in words to `problem`. */
interface SmiChild {
  /** Resolved executable, and the name the user gave (for messages). */
  path: string;
  bin: string;
  /** `stdbuf` on PATH, if any: line-buffers the child's stdout. */
  stdbuf: string | undefined;
  args: string[];
  onLine: (line: string) => void;
  problem: (why: string) => void;
  /** True once the sampler is stopping: an exit then is expected, not a problem. */
  stopping: () => boolean;
}

/** Spawn `nvidia-smi args` (through `stdbuf -oL` when present), keeping its last 5 lines for the failure message. */
function spawnSmi(o: SmiChild): ChildProcess {
  const child = o.stdbuf
    ? spawn(o.stdbuf, ['-oL', o.path, ...o.args], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(o.path, o.args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  const keep = (l: string) => {
    if (l.trim()) tail.push(l.trim());
    if (tail.length > 5) tail.shift();
  };
  createInterface({ input: child.stdout! }).on('line', (l) => {
    o.onLine(l);
    keep(l);
  });
  createInterface({ input: child.stderr! }).on('line', keep);
  const what = `${o.bin} ${o.args[0].startsWith('--') ? '--query-gpu' : o.args[0]}`;
  child.on('error', (err) => o.problem(`${what} could not run: ${err.message}`));
  // 'close', not 'exit': by then its stdout and stderr are read to the end, so the message has its last words.
  child.on('close', (code, signal) => {
    if (!o.stopping()) o.problem(`${what} stopped (${signal ?? `exit code ${code}`}): ${tail.join(' | ') || 'no output'}`);
  });
  return child;
}

/** SIGTERM, SIGKILL after 2 s, resolve once the process has exited. */
function endChild(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 2000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
