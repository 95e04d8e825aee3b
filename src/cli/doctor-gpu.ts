/**
 * `loadlab doctor`, the checks of what a `vllm serve` on this machine needs: the GPU through
 * `nvidia-smi` (its free memory, and who holds it) and whether port 8000 is already taken.
 * Split out of `doctor-target.ts`, which re-exports these names. None throws.
 */
import { spawnSync } from 'node:child_process';
import { parseGpuQueryLine, GPU_QUERY_FIELDS } from '../observe/gpu-parse';
import type { TargetMode } from '../lesson/open-target';
import { checkPort } from '../proc/port';
import { which } from '../proc/which';
import type { Check } from './doctor-check';

/**
 * Fraction of GPU memory vLLM asks to be free at start: `--gpu-memory-utilization`, default 0.92
 * (vllm/config/cache.py; 0.9 in older releases), checked in `Worker.init_device` (vllm/v1/worker/gpu_worker.py).
 */
export const VLLM_DEFAULT_GPU_UTIL = 0.92;

/** `nvidia-smi`: the GPU(s), their free memory, and whether something already holds them. Optional unless LoadLab is to launch vLLM. */
export function checkGpu(mode: TargetMode, bin = 'nvidia-smi', env: NodeJS.ProcessEnv = process.env): Check {
  const name = 'GPU';
  const level = mode === 'launched' ? 'required' : 'optional';
  const exe = which(bin, env.PATH);
  if (!exe) {
    return {
      name,
      level,
      ok: false,
      detail: `no ${bin} on PATH: no NVIDIA GPU here; the lessons use the simulator`,
      fix: 'on AutoDL: start the instance with its GPU (not 无卡模式), then open a new terminal',
    };
  }
  const q = spawnSync(exe, [`--query-gpu=${GPU_QUERY_FIELDS.join(',')}`, '--format=csv,noheader,nounits'], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  const gpus = (q.stdout ?? '')
    .split('\n')
    .map((l) => parseGpuQueryLine(l, 0))
    .filter((s) => s?.memTotalMiB !== undefined && s.memUsedMiB !== undefined);
  if (q.status !== 0 || !gpus.length) {
    const why = ((q.stdout ?? '') + (q.stderr ?? '')).trim().split('\n')[0] || `exit ${q.status}`;
    return {
      name,
      level,
      ok: false,
      detail: `${bin} failed: ${why}`,
      fix: 'nvidia-smi  # read its message; on AutoDL restart the instance with its GPU',
    };
  }
  const apps = spawnSync(exe, ['--query-compute-apps=pid,process_name,used_memory', '--format=csv,noheader,nounits'], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  const procs = (apps.stdout ?? '')
    .split('\n')
    .map((l) => l.split(',').map((c) => c.trim()))
    .filter((c) => c.length === 3 && /^\d+$/.test(c[0]));
  const parts = gpus.map(
    (g) =>
      `GPU ${g!.gpu}: ${(g!.memTotalMiB! - g!.memUsedMiB!).toLocaleString('en-US')} MiB free of ${g!.memTotalMiB!.toLocaleString('en-US')} MiB`,
  );
  const held = gpus.filter((g) => g!.memTotalMiB! - g!.memUsedMiB! < VLLM_DEFAULT_GPU_UTIL * g!.memTotalMiB!);
  const who = procs.length ? `; processes: ${procs.map((c) => `${c[1]} (pid ${c[0]}, ${c[2]} MiB)`).join(', ')}` : '';
  if (!held.length) return { name, level, ok: true, detail: parts.join('; ') + who };
  const expected = mode === 'external';
  return {
    name,
    level,
    ok: expected,
    detail:
      `${parts.join('; ')}${who}: ${held.map((g) => `${g!.memUsedMiB!.toLocaleString('en-US')} MiB`).join(', ')} already in use` +
      (expected
        ? ' (expected while your vLLM at LOADLAB_BASE_URL runs)'
        : `, less free than vLLM's default --gpu-memory-utilization ${VLLM_DEFAULT_GPU_UTIL} needs: another process holds the GPU`),
    ...(expected ? {} : { fix: 'pkill -f "vllm serve"  # or stop what nvidia-smi lists, e.g. a kernel that still runs vLLM' }),
  };
}

/** Whether `port` (default `LOADLAB_VLLM_PORT` or 8000) on 127.0.0.1 is taken, and whether that matters for this mode. */
export async function checkVllmPort(mode: TargetMode, baseUrl?: string, env: NodeJS.ProcessEnv = process.env): Promise<Check> {
  const port = Number(env.LOADLAB_VLLM_PORT ?? 8000);
  const name = `port ${port}`;
  const taken = await checkPort(port, '127.0.0.1').catch(() => ({ inUse: false, how: undefined }));
  if (!taken.inUse) return { name, level: 'optional', ok: true, detail: `free (vllm serve --port ${port} can start)` };
  const how = taken.how === 'listening' ? 'something answers there' : 'a socket is bound to it';
  let ours = false;
  try {
    const u = baseUrl ? new URL(baseUrl) : undefined;
    ours =
      mode === 'external' &&
      !!u &&
      /^(127\.0\.0\.1|localhost|0\.0\.0\.0|\[::1\])$/.test(u.hostname) &&
      Number(u.port || 80) === port;
  } catch {
    /* not a URL */
  }
  if (ours) return { name, level: 'optional', ok: true, detail: `in use by the server at LOADLAB_BASE_URL (${baseUrl})` };
  return {
    name,
    level: mode === 'launched' ? 'required' : 'optional',
    ok: false,
    detail: `already in use (${how})${mode === 'sim' ? ': the simulator does not need it, but a vllm serve on this port would fail' : ''}`,
    fix: `ss -ltnp | grep :${port}  # shows who holds it; stop it, e.g. pkill -f "vllm serve"`,
  };
}
