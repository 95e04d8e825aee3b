/**
 * Shared pieces of the benchmarks: the machine line every figure carries (load average!),
 * distributions, forced GC for memory figures, and the result file `bench/results/<name>.json`.
 * Servers run as their own processes: the null server (`spawnNullServer`) and the simulator (`startSim`).
 */

import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fromRoot } from '../src/paths';
import { describe } from '../src/stats/percentile';
import type { Verdict } from './verdict';
import type { Distribution } from '../src/types';

/** The machine as a figure was measured: the benchmarks share 2 cores with other work. */
export interface MachineInfo {
  /** 1, 5 and 15-minute load averages. */
  loadAverage: [number, number, number];
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
  /** ISO time of the reading. */
  at: string;
}

/** A reading of the machine now. */
export function machine(): MachineInfo {
  const c = cpus();
  const la = loadavg().map((x) => Math.round(x * 100) / 100) as [number, number, number];
  return {
    loadAverage: la,
    cores: c.length,
    cpuModel: c[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    at: new Date().toISOString(),
  };
}

/** `load 1.23/2.34/3.45 on 2 cores`. */
export function loadLine(m: MachineInfo = machine()): string {
  return `load ${m.loadAverage.map((x) => x.toFixed(2)).join('/')} on ${m.cores} cores`;
}

/** n, mean, p50, p99, max of a sample (ms in, ms out), rounded to µs. */
export interface Dist {
  n: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

const r3 = (x: number) => (Number.isFinite(x) ? Math.round(x * 1000) / 1000 : NaN);

/** The distribution of `values`, numpy-linear percentiles (src/stats). */
export function dist(values: ArrayLike<number>): Dist {
  const d: Distribution = describe(values);
  return { n: d.n, mean: r3(d.mean), p50: r3(d.p50), p90: r3(d.p90), p99: r3(d.p99), max: r3(d.max) };
}

/** `p50 0.081 / p99 0.412 / max 3.1 ms`. */
export function fmtDist(d: Pick<Dist, 'p50' | 'p99' | 'max'>, unit = 'ms', digits = 3): string {
  return `p50 ${d.p50.toFixed(digits)} / p99 ${d.p99.toFixed(digits)} / max ${d.max.toFixed(digits)} ${unit}`;
}

/** CPU ms (utime + stime) of a live process so far, from /proc/<pid>/stat (10 ms ticks, USER_HZ = 100; Linux only). */
export function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // fields 14 and 15 of stat(5)
}

/** Round to `digits` decimals (for JSON). */
export function round(x: number, digits = 3): number {
  const f = 10 ** digits;
  return Number.isFinite(x) ? Math.round(x * f) / f : x;
}

/**
 * What a system call that does nothing costs this machine, µs: `process.ppid`, which Node 20 does not cache (one
 * `getppid` per read, by strace), timed in 5 passes of `n` reads; the least pass, the best the machine gave. Every
 * socket write and read pays at least this much, so the floors the yardsticks divide by scale with it: 1.32–1.40 µs
 * on the paravirtualised VM of bench/README.md §24–§32 (0.98 µs for `getppid` in C there).
 */
export function nullSyscallUs(n = 100_000): number {
  let best = Number.POSITIVE_INFINITY;
  let sink = 0;
  for (let pass = 0; pass < 5; pass++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) sink += process.ppid;
    best = Math.min(best, ((performance.now() - t0) * 1000) / n);
  }
  return sink === 0 ? Number.NaN : round(best, 3);
}

/**
 * What every entry to this machine's kernel pays beyond the call itself, from the CPU flags in /proc/cpuinfo
 * (undefined where there is none): `pti`, the kernel switches page tables at each entry and exit (page-table
 * isolation), and `pcid`, the CPU can keep the other tables' TLB entries meanwhile. With `pti` and no `pcid` each call
 * empties the TLB. The VM of bench/README.md §24–§32 ran so, and its null system call cost 1.32–1.40 µs from Node; the
 * VM of §33 has `pcid` and no `pti`, and its call cost 0.62–0.63 µs.
 */
export function kernelEntryFlags(): { pti: boolean; pcid: boolean } | undefined {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1];
    if (line === undefined) return undefined;
    const flags = new Set(line.trim().split(/\s+/));
    return { pti: flags.has('pti'), pcid: flags.has('pcid') };
  } catch {
    return undefined;
  }
}

/** What {@link syscallCost} measured: the line a yardstick prints first, and the figures its results keep. */
export interface SyscallCost {
  /** `null system call (getppid, process.ppid): 1.35 µs; page-table isolation on, no pcid [load 0.4]`. */
  line: string;
  /** For a yardstick's `data`: {@link nullSyscallUs} and {@link kernelEntryFlags}. */
  data: { nullSyscallUs: number; kernelEntry: ReturnType<typeof kernelEntryFlags> };
}

/** This machine's null system call, measured once, and what its kernel entries pay: a yardstick's line and its figures. */
export function syscallCost(): SyscallCost {
  const us = nullSyscallUs();
  const flags = kernelEntryFlags();
  const entry = flags ? `; page-table isolation ${flags.pti ? 'on' : 'off'}, ${flags.pcid ? 'pcid' : 'no pcid'}` : '';
  return {
    line: `null system call (getppid, process.ppid): ${us} µs${entry} [load ${round(loadavg()[0], 2)}]`,
    data: { nullSyscallUs: us, kernelEntry: flags },
  };
}

let gcFn: (() => void) | undefined;

/** A full GC (exposed at run time through V8 flags), so memory figures count live objects only. */
export function fullGc(): void {
  if (!gcFn) {
    setFlagsFromString('--expose-gc');
    gcFn = runInNewContext('gc') as () => void;
  }
  gcFn();
  gcFn();
}

/** GET a JSON document (small helper for the benchmark servers). */
export async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** Options every benchmark's `run` takes. */
export interface BenchOptions {
  /** A short smoke run: every pass shorter, figures printed but not written to bench/results; default false. */
  quick?: boolean;
}

/** What every benchmark returns: its figures, its targets and the machine it ran on. */
export interface BenchResult {
  name: string;
  /** One line per figure, as printed. */
  lines: string[];
  /**
   * Target checks: what was asked, what we got, met or not. `verdict`, where a target is judged over rounds
   * (bench/verdict.ts): 'undecided' when the median's interval straddles the limit; `met` is then false.
   */
  targets: Array<{ target: string; measured: string; met: boolean; verdict?: Verdict }>;
  /** Everything measured, for the JSON file. */
  data: unknown;
  machineBefore: MachineInfo;
  machineAfter: MachineInfo;
  /** The host's CPU steal over the whole benchmark, % of the machine's CPU time (`npm run bench` sets it; Linux only). */
  stealPercent?: number;
}

/** Steal between two `/proc/stat` readings (src/proc/cpu-times.ts `hostCpu`), % of all CPU time; undefined when unknown. */
export function stealPercent(
  a: { totalMs: number; stealMs: number } | undefined,
  b: { totalMs: number; stealMs: number } | undefined,
): number | undefined {
  if (!a || !b || b.totalMs <= a.totalMs) return undefined;
  return Math.round(((b.stealMs - a.stealMs) / (b.totalMs - a.totalMs)) * 10000) / 100;
}

/**
 * Write `bench/results/<name>.json` (the latest run) and append one line to
 * `bench/results/history.jsonl` (name, time, load before/after, target checks), so figures taken
 * under different machine loads can be compared. Returns the JSON file's path.
 */
export function writeResult(r: BenchResult): string {
  const dir = fromRoot('bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = `${dir}/${r.name}.json`;
  writeFileSync(file, `${JSON.stringify(r, null, 2)}\n`);
  const line = {
    name: r.name,
    at: r.machineAfter.at,
    loadBefore: r.machineBefore.loadAverage,
    loadAfter: r.machineAfter.loadAverage,
    ...(r.stealPercent !== undefined ? { stealPercent: r.stealPercent } : {}),
    targets: r.targets,
  };
  appendFileSync(`${dir}/history.jsonl`, `${JSON.stringify(line)}\n`);
  return file;
}

/**
 * Wait until the 1-minute load average is at most `maxLoad` (checked every 5 s, at most
 * `timeoutS`); resolves with the load seen. For shared machines: `npm run bench -- --quiet=1.5`.
 */
export async function waitForQuiet(maxLoad: number, timeoutS = 300): Promise<number> {
  const end = performance.now() + timeoutS * 1000;
  while (loadavg()[0] > maxLoad && performance.now() < end) await pause(5000);
  return loadavg()[0];
}

/** Sleep `ms` (benchmark pacing only; never for measured timing). */
export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
