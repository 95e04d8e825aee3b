/**
 * `loadlab doctor`, the checks of this machine (no server needed): Node, the tslab kernel as
 * each Jupyter on PATH sees it (in `doctor-tslab.ts`, re-exported here), plotly's bundle and
 * render path, a writable `data/`, two AutoDL pitfalls (a Hugging Face id where a local
 * ModelScope path is meant, a running `vllm serve … --quantization gptq`), and a kernel monitor that
 * takes the cores in bursts (DAMON's `kdamond`). Each returns a `Check`; none throws.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { uptime } from 'node:os';
import { dirname, join } from 'node:path';
import { fromRoot, packageRoot } from '../paths';
import { DEFAULT_MODEL, serveArgWarnings } from '../vllm/flags';
import { type CpuReading, readCpuUsers } from '../proc/cpu-users';
import { which } from '../proc/which';
import { figureHtml, plotlyJsPath } from '../view/render';
import type { Check } from './doctor-check';

/** The tslab check (defined in `doctor-tslab.ts`, re-exported for existing imports). */
export { checkTslab, jupyterCandidates, tslabInstallCommand } from './doctor-tslab';

/** Oldest Node that loads `src/` in tslab (`require(esm)`), as [major, minor]. */
export const MIN_NODE: readonly [number, number] = [20, 19];

/** True when `version` (`20.19.0`, `v22.1.0`) is at least `MIN_NODE`. */
export function nodeVersionOk(version: string): boolean {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
}

/** The one command that installs a new enough Node: conda-forge where conda exists, else the official tarball. */
export function nodeFix(env: NodeJS.ProcessEnv = process.env): string {
  if (which('conda', env.PATH)) return 'conda install -y -c conda-forge nodejs=20';
  return 'curl -fsSL https://nodejs.org/dist/v20.19.5/node-v20.19.5-linux-x64.tar.xz | tar -xJ --strip-components=1 -C /usr/local';
}

/** Node running this code, and the `node` on PATH that tslab's `#!/usr/bin/env node` would start. */
export function checkNode(env: NodeJS.ProcessEnv = process.env): Check {
  const here = process.versions.node;
  const onPath = which('node', env.PATH);
  const pathVersion = onPath ? spawnSync(onPath, ['--version'], { encoding: 'utf8', timeout: 10_000 }).stdout?.trim() : undefined;
  const bad = [
    !nodeVersionOk(here) ? `this Node is v${here}` : '',
    pathVersion && !nodeVersionOk(pathVersion) ? `the node on PATH (${onPath}) is ${pathVersion}` : '',
  ].filter(Boolean);
  return {
    name: 'node',
    level: 'required',
    ok: bad.length === 0,
    detail: bad.length
      ? `${bad.join('; ')}: need ≥ ${MIN_NODE.join('.')} (tslab loads src/ through require(esm))`
      : `v${here}${onPath && pathVersion ? `; node on PATH ${pathVersion}` : ''} (need ≥ ${MIN_NODE.join('.')})`,
    ...(bad.length ? { fix: nodeFix(env) } : {}),
  };
}

/** The plotly.js bundle is installed and a chart renders to HTML (`figureHtml`, no display). */
export function checkPlotly(): Check {
  const name = 'plotly';
  try {
    const file = plotlyJsPath();
    const bytes = statSync(file).size;
    const html = figureHtml({ data: [{ type: 'bar', x: [1], y: [1] }], layout: {} }, { includePlotly: false, divId: 'doctor' });
    const ok = bytes > 1e6 && html.includes('id="doctor"') && html.includes('Plotly.newPlot');
    return {
      name,
      level: 'required',
      ok,
      detail: ok
        ? `${file.replace(`${packageRoot()}/`, '')} (${(bytes / 2 ** 20).toFixed(1)} MiB); a chart renders to HTML`
        : `plotly.js bundle at ${file} is ${bytes} bytes or the render path gave no chart`,
      ...(ok ? {} : { fix: `cd ${packageRoot()} && npm ci` }),
    };
  } catch (err) {
    return { name, level: 'required', ok: false, detail: (err as Error).message, fix: `cd ${packageRoot()} && npm ci` };
  }
}

/** `data/` exists (created if not) and a file can be written there and removed. */
export function checkDataWritable(dir: string = fromRoot('data')): Check {
  const probe = join(dir, `.doctor-${process.pid}`);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(probe, 'ok');
    rmSync(probe);
    return { name: 'data/ writable', level: 'required', ok: true, detail: dir };
  } catch (err) {
    return {
      name: 'data/ writable',
      level: 'required',
      ok: false,
      detail: `${dir}: ${(err as Error).message}`,
      fix: `mkdir -p ${dir} && chown -R "$(id -u)" ${dir}`,
    };
  }
}

/** Where a ModelScope download of `id` goes on AutoDL (the data disk). */
export function autodlModelDir(id: string): string {
  return `/root/autodl-tmp/${id}`;
}

/**
 * AutoDL pitfall: `LOADLAB_VLLM_MODEL=Qwen/…` (a Hugging Face id) with no such local folder makes
 * vLLM download from huggingface.co, which is slow or unreachable from mainland China. Undefined
 * when `LOADLAB_VLLM_MODEL` is unset.
 */
export function checkModelPath(env: NodeJS.ProcessEnv = process.env): Check | undefined {
  const model = env.LOADLAB_VLLM_MODEL;
  if (!model) return undefined;
  const looksLikeId = /^[\w.-]+\/[\w.-]+$/.test(model) && !model.startsWith('.');
  if (existsSync(model))
    return { name: 'model path', level: 'optional', ok: true, detail: `LOADLAB_VLLM_MODEL=${model} is a local folder` };
  if (!looksLikeId) {
    return {
      name: 'model path',
      level: 'required',
      ok: false,
      detail: `LOADLAB_VLLM_MODEL=${model} does not exist`,
      fix: `ls ${dirname(model)}  # then export LOADLAB_VLLM_MODEL=<the folder with config.json>`,
    };
  }
  const dir = autodlModelDir(model);
  return {
    name: 'model path',
    level: 'optional',
    ok: false,
    detail:
      `LOADLAB_VLLM_MODEL=${model} is a Hugging Face id and no such local folder exists: vLLM would download from huggingface.co. ` +
      `Download it from ModelScope and use the local path ${dir}`,
    fix: `modelscope download --model ${model === DEFAULT_MODEL ? DEFAULT_MODEL : model} --local_dir ${dir} && export LOADLAB_VLLM_MODEL=${dir}`,
  };
}

/** Command lines of running `vllm serve` processes (Linux `/proc`; `[]` elsewhere). */
export function runningVllmServes(): string[][] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  } catch {
    return [];
  }
  const out: string[][] = [];
  for (const pid of pids) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      continue;
    }
    const at = argv.findIndex((a, i) => /(^|\/)vllm[^/]*$/.test(a) && argv[i + 1] === 'serve');
    const api = argv.some((a) => a === 'vllm.entrypoints.openai.api_server');
    if (at >= 0 || api) out.push(argv);
  }
  return out;
}

/** Running `vllm serve` processes whose flags slow the lessons down (`serveArgWarnings`). */
export function checkServeFlags(serves: string[][] = runningVllmServes()): Check {
  const warnings = serves.flatMap((argv) => serveArgWarnings(argv).map((w) => ({ argv, w })));
  if (!warnings.length) {
    return {
      name: 'vllm serve flags',
      level: 'optional',
      ok: true,
      detail: serves.length
        ? `${serves.length} running vllm serve, no flag to warn about`
        : 'no running vllm serve on this machine',
    };
  }
  const argv = warnings[0].argv;
  const kept = argv.filter(
    (a, i) =>
      !/^(--quantization=gptq)$/.test(a) &&
      !(/^(--quantization|-q)$/.test(a) && argv[i + 1] === 'gptq') &&
      !(a === 'gptq' && /^(--quantization|-q)$/.test(argv[i - 1] ?? '')),
  );
  const from = Math.max(
    0,
    kept.findIndex((a) => /(^|\/)vllm[^/]*$/.test(a)),
  );
  return {
    name: 'vllm serve flags',
    level: 'optional',
    ok: false,
    detail: warnings.map((x) => x.w).join(' '),
    fix: `pkill -f "vllm serve"; ${kept.slice(from).join(' ')}`,
  };
}

/**
 * The kernel's DAMON memory monitors running here: kernel threads named `kdamond.N` (in `read()`, every
 * process's CPU so far), with their CPU since each started (`uptimeS`: seconds since boot). They run in bursts of a
 * few ms on any core; on LoadLab's 2-core test VM one made the simulator's steps wait for a core and the lessons
 * flag more points (bench/README.md §29). A warning, never a failure: the machine's memory settings may not be the
 * learner's.
 */
export function checkKernelMonitors(read: () => CpuReading | undefined = readCpuUsers, uptimeS = uptime()): Check {
  const name = 'kernel monitors';
  const reading = read();
  if (!reading) return { name, level: 'optional', ok: true, detail: 'no /proc to read (not Linux): nothing checked' };
  const damon = [...reading.values()].filter((t) => t.kernelThread && t.comm.startsWith('kdamond'));
  if (damon.length === 0) return { name, level: 'optional', ok: true, detail: 'no DAMON memory monitor (kdamond) running' };
  const cpuS = damon.reduce((a, t) => a + t.cpuMs, 0) / 1000;
  const livedS = damon.reduce((a, t) => a + Math.max(0, uptimeS - (t.startedS ?? 0)), 0); // summed like the CPU
  const since = damon.length === 1 ? `since it started ${duration(livedS)} ago` : 'since they started';
  const share = livedS > 0 ? ` (${((cpuS / livedS) * 100).toFixed(2)} % of one core on average)` : '';
  return {
    name,
    level: 'optional',
    ok: false,
    detail:
      `${damon.map((t) => t.comm).join(', ')}, the kernel's DAMON memory monitor, is running: ${cpuS.toFixed(1)} s of CPU ` +
      `${since}${share}, in bursts of a few ms on any core. While it runs, the simulator and the client wait for a ` +
      "core, and the lessons' health may flag points for it; `loadlab lessons` names it where it ran (bench/README.md §29).",
    fix: "echo off | tee /sys/kernel/mm/damon/admin/kdamonds/*/state  # as root, only if this machine's memory settings are yours to change; until the next boot",
  };
}

/** A duration in words: `42 s`, `17 min`, `3.2 h`. */
function duration(s: number): string {
  if (s < 120) return `${Math.round(s)} s`;
  return s < 7200 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`;
}
