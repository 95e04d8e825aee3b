/**
 * The GPU and driver a calibration ran against, from `nvidia-smi` when it is on PATH
 * (`--query-gpu=name,driver_version,memory.total`). Never throws: without nvidia-smi it says so.
 */
import { spawnSync } from 'node:child_process';
import { which } from '../proc/which';

/** What nvidia-smi said about the first GPU, or why it could not. */
export interface GpuInfo {
  /** e.g. `NVIDIA GeForce RTX 4090`. */
  name?: string;
  /** e.g. `550.54.15`. */
  driver?: string;
  /** Total memory, MiB. */
  memoryMiB?: number;
  /** Why nothing is known, e.g. `no nvidia-smi on PATH`. */
  missing?: string;
}

/** Query the first GPU with `bin` (default `nvidia-smi`). */
export function readGpuInfo(bin = 'nvidia-smi', env: NodeJS.ProcessEnv = process.env): GpuInfo {
  const exe = which(bin, env.PATH);
  if (!exe) return { missing: `no ${bin} on PATH (no NVIDIA GPU on this machine, or the server runs elsewhere)` };
  const q = spawnSync(exe, ['--query-gpu=name,driver_version,memory.total', '--format=csv,noheader,nounits'], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  const line = (q.stdout ?? '').split('\n')[0]?.trim() ?? '';
  const [name, driver, mem] = line.split(',').map((s) => s.trim());
  if (q.status !== 0 || !name)
    return { missing: `${bin} failed: ${(q.stderr ?? '').trim().split('\n')[0] || `exit ${q.status}`}` };
  const memoryMiB = Number(mem);
  return { name, ...(driver ? { driver } : {}), ...(Number.isFinite(memoryMiB) ? { memoryMiB } : {}) };
}
