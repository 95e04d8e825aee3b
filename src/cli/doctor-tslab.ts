/**
 * `loadlab doctor`, the tslab check: tslab is installed in this clone and its kernel is registered,
 * with a command Jupyter can start, for each `jupyter` this machine has (PATH first, then conda's).
 * Split out of `doctor-env.ts`, which re-exports these names. None throws.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { fromRoot, packageRoot } from '../paths';
import { which } from '../proc/which';
import type { Check } from './doctor-check';

/** Every distinct `jupyter` executable: each PATH folder, then conda's (`$CONDA_PREFIX`, `$CONDA_EXE`, ~/miniconda3). */
export function jupyterCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const dirs = (env.PATH ?? '').split(delimiter).filter(Boolean);
  if (env.CONDA_PREFIX) dirs.push(join(env.CONDA_PREFIX, 'bin'));
  if (env.CONDA_EXE) dirs.push(dirname(env.CONDA_EXE));
  if (env.HOME) dirs.push(join(env.HOME, 'miniconda3', 'bin'));
  const seen = new Set<string>();
  const out: string[] = [];
  for (const d of dirs) {
    const p = which(join(d, 'jupyter'));
    if (!p) continue;
    const real = realpathSync(p);
    if (seen.has(real)) continue;
    seen.add(real);
    out.push(p);
  }
  return out;
}

interface KernelView {
  jupyter: string;
  /** The tslab kernel's argv[0], when registered. */
  tslabBinary?: string;
  error?: string;
}

function kernelView(jupyter: string, env: NodeJS.ProcessEnv): KernelView {
  const r = spawnSync(jupyter, ['kernelspec', 'list', '--json'], { encoding: 'utf8', timeout: 30_000, env, maxBuffer: 8 << 20 });
  if (r.status !== 0) return { jupyter, error: (r.stderr || r.error?.message || `exit ${r.status}`).trim().split('\n').pop() };
  try {
    const specs = JSON.parse(r.stdout.slice(r.stdout.indexOf('{'))).kernelspecs as Record<string, { spec?: { argv?: string[] } }>;
    const argv = specs.tslab?.spec?.argv;
    return argv ? { jupyter, tslabBinary: argv[0] } : { jupyter };
  } catch {
    return { jupyter, error: 'kernelspec list --json printed no JSON' };
  }
}

/** The register command for the Python beside `jupyter`, pointing the kernel at this clone's tslab. */
export function tslabInstallCommand(jupyter?: string): string {
  const python = jupyter ? join(dirname(jupyter), 'python') : '"$(which python)"';
  const py = jupyter && !existsSync(python) ? join(dirname(jupyter), 'python3') : python;
  return `npx tslab install --python=${py} --binary=${fromRoot('node_modules', '.bin', 'tslab')}`;
}

/**
 * tslab is installed in this clone, and its kernel is registered for the first `jupyter` on PATH
 * (the one a terminal and, on AutoDL, JupyterLab use) with a kernel command Jupyter can start.
 * Other Jupyters without it are named in the detail. Inside a tslab kernel (`inKernel`, default:
 * detected) a failure is only a warning, since the running kernel was evidently started.
 */
export function checkTslab(
  env: NodeJS.ProcessEnv = process.env,
  inKernel = (globalThis as { __tslab__?: unknown }).__tslab__ !== undefined,
): Check {
  const c = tslabCheck(env);
  // Inside a running tslab kernel, some Jupyter evidently started it: what this PATH shows is only a warning.
  return inKernel && !c.ok
    ? { ...c, level: 'optional', detail: `this notebook runs in tslab, so its Jupyter has the kernel; but ${c.detail}` }
    : c;
}

function tslabCheck(env: NodeJS.ProcessEnv): Check {
  const name = 'tslab kernel';
  let version: string | undefined;
  try {
    version = createRequire(join(packageRoot(), 'package.json'))('tslab/package.json').version as string;
  } catch {
    return {
      name,
      level: 'required',
      ok: false,
      detail: 'tslab is not installed in this clone',
      fix: `cd ${packageRoot()} && npm ci`,
    };
  }
  const views = jupyterCandidates(env).map((j) => kernelView(j, env));
  if (!views.length) {
    const conda = which('conda', env.PATH);
    return {
      name,
      level: 'required',
      ok: false,
      detail: `tslab ${version} is installed, but no \`jupyter\` is on PATH`,
      fix: conda
        ? 'pip install jupyterlab'
        : 'apt-get install -y jupyter-client python3-ipykernel python3-nbclient python3-nbconvert  # prefix with sudo if not root',
    };
  }
  const [first, ...others] = views;
  const startable = first.tslabBinary !== undefined && which(first.tslabBinary, env.PATH) !== undefined;
  const missing = others.filter((v) => !v.tslabBinary).map((v) => v.jupyter);
  const also = missing.length ? `; not registered for ${missing.join(', ')}` : '';
  if (!first.tslabBinary || !startable) {
    const why = first.error
      ? `\`${first.jupyter} kernelspec list\` failed: ${first.error}`
      : !first.tslabBinary
        ? `the tslab kernel is not registered for ${first.jupyter}`
        : `the kernel command '${first.tslabBinary}' is not on PATH, so Jupyter cannot start the kernel`;
    return {
      name,
      level: 'required',
      ok: false,
      detail: `tslab ${version}; ${why}${also}`,
      fix: tslabInstallCommand(first.jupyter),
    };
  }
  return {
    name,
    level: 'required',
    ok: true,
    detail: `tslab ${version}, registered for ${first.jupyter} (starts ${first.tslabBinary})${also}`,
  };
}
