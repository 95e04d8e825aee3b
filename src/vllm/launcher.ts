/**
 * Starting and stopping a real `vllm serve` from Node (a notebook), the way a careful person
 * would by hand: check the port first, start it in its own process group, keep its log,
 * wait for `GET /health` to answer 200, and on the way out kill the whole group and wait
 * until the process is gone and the port is free. The server is tied to this Node process
 * (`process-group.ts` on exit and signals; `src/proc/orphan-guard.ts` when Node is SIGKILLed).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import type { ServerFlags } from './flag-types';
import { serveArgWarnings, toServeArgs } from './flags';
import { httpGet } from '../client/http-get';
import { diagnoseLaunchFailure } from './launch-diagnosis';
import { LaunchError } from './launch-error';
import { readServeHelp, ServeHelpInterrupted } from './serve-help';
import { unknownFlags, unknownFlagsMessage } from './serve-help-check';
import { openServerLog, spawnServer, waitUntil, type ServerLog, type ServerProcess } from './launch-process';
import { checkPort, freePort } from '../proc/port';
import { which } from '../proc/which';

/** A launch that failed (defined in `launch-error.ts`). */
export { LaunchError } from './launch-error';

/** Options of `launchVllm`. */
export interface LaunchVllmOptions {
  /** Model path or Hugging Face id (the positional argument of `vllm serve`). */
  model: string;
  /**
   * Engine flags, written out by `toServeArgs(flags, { target: 'vllm-v0' })`: simulator-only flags dropped, V0's
   * `--swap-space` / `--preemption-mode` kept when asked for (the help check refuses them on a vLLM without them).
   */
  flags?: ServerFlags;
  /** More `vllm serve` arguments as given, e.g. `['--enforce-eager']`. */
  extraArgs?: string[];
  /** TCP port; default 8000. 0 picks a free port. */
  port?: number;
  /** Bind address; default `127.0.0.1`. */
  host?: string;
  /** Append the server's stdout and stderr to this file (folders are created). */
  logFile?: string;
  /** Extra environment variables for the server (e.g. `HF_ENDPOINT`). */
  env?: Record<string, string | undefined>;
  /** Give up (and stop the server) when `/health` is not 200 after this many ms; default 600 000 (10 min). */
  startupTimeoutMs?: number;
  /** The vllm executable; default `$LOADLAB_VLLM_BIN` or `vllm`. */
  bin?: string;
  /** ms between SIGTERM and SIGKILL on stop; default 10 000. */
  stopGraceMs?: number;
  /** ms between health polls; default 500. */
  healthPollMs?: number;
  /** Called with every log line. */
  onLog?: (line: string) => void;
  /**
   * Check every flag against the installed `vllm serve --help=all` before spawning (cached per
   * `vllm --version`, see `serve-help.ts`); default true. A help that cannot be read is a note, not a refusal.
   */
  checkFlags?: boolean;
  /** Timeout of each `vllm --version` / `vllm serve --help=all` run, ms; default 120 000. */
  helpTimeoutMs?: number;
  /** Folder of the parsed-help cache; default `<os tmpdir>/loadlab-vllm-help`. */
  helpCacheDir?: string;
}

/** A running server started by `launchVllm`. */
export interface LaunchedVllm {
  /** `http://host:port` (0.0.0.0 becomes 127.0.0.1). */
  baseUrl: string;
  /** The name clients send as `model`: `servedModelName`, else the model argument. */
  model: string;
  /** Pid of `vllm serve`, which is also its process group id. */
  pid: number;
  /** The full command line. */
  argv: string[];
  /** `vllm --version` of the executable, when it answered. */
  version?: string;
  /** What the launch could not check, one sentence each (also printed with `console.warn`). */
  notes: string[];
  /** Kills the whole process group (SIGTERM, then SIGKILL after the grace period) and waits until it is gone and the port is free. Idempotent. */
  stop(): Promise<void>;
  /** The last `n` log lines (default 40), joined with newlines. */
  logTail(n?: number): string;
}

/**
 * Starts `<bin> serve <model> --host <host> --port <port> …flags` and resolves once it is healthy.
 * The server stops with this Node process (exit, SIGTERM, a kernel shutdown or restart, and even
 * SIGKILL or the OOM killer, through the orphan guard of `src/proc/orphan-guard.ts`: SIGTERM,
 * then SIGKILL after `stopGraceMs`), but not when a notebook cell is interrupted.
 * Rejects with a `LaunchError` when the port is taken (checked before spawning), the binary or a
 * local model path is missing, the process exits early (with the cause recognised from its log),
 * or `startupTimeoutMs` passes (the server is stopped first).
 */
export async function launchVllm(options: LaunchVllmOptions): Promise<LaunchedVllm> {
  const graceMs = options.stopGraceMs ?? 10_000;
  const timeoutMs = options.startupTimeoutMs ?? 600_000;
  const pollMs = options.healthPollMs ?? 500;
  const { host, port, model, exe } = await preflight(options);
  const argv = [
    exe,
    'serve',
    model,
    '--host',
    host,
    '--port',
    String(port),
    ...toServeArgs(options.flags ?? {}, { target: 'vllm-v0' }),
    ...(options.extraArgs ?? []),
  ];
  const help = await checkServeFlags(exe, argv.slice(3), options);
  // Flags that start but slow the lessons down, e.g. --quantization gptq (src/vllm/flags.ts).
  for (const w of serveArgWarnings(argv)) console.warn(`LoadLab: ${w}`);
  const log = openServerLog(argv, options.logFile, options.onLog);
  const proc = await spawnServer(argv, { host, port, graceMs, env: options.env }, log);
  const baseUrl = `http://${host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${port}`;
  await waitHealthy(proc, log, { baseUrl, model, port, timeoutMs, pollMs });
  const served = options.flags?.servedModelName ?? model;
  const version = help.version !== undefined ? { version: help.version } : {};
  return { baseUrl, model: served, pid: proc.pid, argv, ...version, notes: help.notes, stop: proc.stop, logTail: log.logTail };
}

/**
 * Refuse, before spawning, the flags of `args` that the installed `vllm serve --help=all` does not
 * list (with the alternative when the flag is a retired one). A help that cannot be read becomes a
 * note and the launch goes on; a help run stopped by a signal (a kernel interrupt) stops the launch.
 */
async function checkServeFlags(
  exe: string,
  args: string[],
  o: LaunchVllmOptions,
): Promise<{ version?: string; notes: string[] }> {
  if (o.checkFlags === false) return { notes: [] };
  let help: Awaited<ReturnType<typeof readServeHelp>>;
  try {
    help = await readServeHelp(exe, { timeoutMs: o.helpTimeoutMs, cacheDir: o.helpCacheDir, env: o.env });
  } catch (err) {
    if (err instanceof ServeHelpInterrupted)
      throw new LaunchError(`${err.message} while checking the flags; nothing was started, run the cell again`, 'config');
    throw err;
  }
  const notes = help.note ? [help.note] : [];
  for (const n of notes) console.warn(`LoadLab: ${n}`);
  const version = help.version !== undefined ? { version: help.version } : {};
  if (!help.flags) return { ...version, notes };
  const unknown = unknownFlags(args, help.flags);
  if (unknown.length) throw new LaunchError(unknownFlagsMessage(unknown, help.version), 'bad_flag');
  return { ...version, notes };
}

/** Check before spawning: the port, a local model path, the binary, and that the port is free. */
async function preflight(options: LaunchVllmOptions): Promise<{ host: string; port: number; model: string; exe: string }> {
  const host = options.host ?? '127.0.0.1';
  const bin = options.bin ?? process.env.LOADLAB_VLLM_BIN ?? 'vllm';
  const port = options.port === 0 ? await freePort(host) : (options.port ?? 8000);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new LaunchError(`port must be an integer in 1..65535 (or 0 for a free one), got ${options.port}`, 'config');
  const model = options.model.startsWith('~/') ? homedir() + options.model.slice(1) : options.model;
  if (/^(\/|\.\.?\/)/.test(model) && !existsSync(model)) {
    throw new LaunchError(
      `model path ${model} does not exist. Give the folder that holds config.json and the weights (on AutoDL often under /root/autodl-tmp/), or a Hugging Face id such as Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4.`,
      'model_not_found',
    );
  }
  const exe = which(bin);
  if (!exe) {
    throw new LaunchError(
      `'${bin}' was not found. Activate the Python environment that has vLLM (e.g. \`conda activate\` it before starting Jupyter) or set LOADLAB_VLLM_BIN=/path/to/vllm. Without an NVIDIA GPU, use the simulator (startSim) instead.`,
      'not_found',
    );
  }
  const taken = await checkPort(port, host);
  if (taken.inUse) {
    const what =
      taken.how === 'listening' ? 'something is already answering there, probably an earlier server' : 'a socket is bound to it';
    throw new LaunchError(
      `port ${port} on ${host} is already in use (${what}). Stop the old server (\`await server.stop()\` if this kernel started it, or \`pkill -f "vllm serve"\` in a terminal; \`ss -ltnp | grep :${port}\` shows who holds it), or choose another port, e.g. launchVllm({ …, port: ${port + 1} }).`,
      'port_in_use',
    );
  }
  return { host, port, model, exe };
}

/**
 * Poll `GET /health` until it answers 200. An early exit is diagnosed from the log; past
 * `timeoutMs` the server is stopped. Both reject with a `LaunchError`.
 */
async function waitHealthy(
  proc: ServerProcess,
  log: ServerLog,
  w: { baseUrl: string; model: string; port: number; timeoutMs: number; pollMs: number },
): Promise<void> {
  const deadline = performance.now() + w.timeoutMs;
  for (;;) {
    const exit = proc.exitInfo();
    if (exit) {
      await proc.stop().catch(() => undefined);
      const d = diagnoseLaunchFailure(log.lastLines(60), { model: w.model, port: w.port, exitCode: exit.code });
      throw new LaunchError(
        `vLLM exited before it became healthy: ${d.advice}\n--- last log lines ---\n${log.logTail(25)}`,
        d.kind,
        log.logTail(),
        proc.pid,
      );
    }
    const healthy = await httpGet(`${w.baseUrl}/health`, { timeoutMs: 2000 }).then(
      (r) => r.status === 200,
      () => false,
    );
    if (healthy && !proc.exitInfo()) return;
    if (performance.now() >= deadline) {
      await proc.stop().catch(() => undefined);
      throw new LaunchError(
        `vLLM did not answer GET /health with 200 within ${Math.round(w.timeoutMs / 1000)} s, so it was stopped. Loading a 7B model takes 1–3 min on a 4090 (longer on a first download); raise startupTimeoutMs if the log shows progress.\n--- last log lines ---\n${log.logTail(25)}`,
        'timeout',
        log.logTail(),
        proc.pid,
      );
    }
    await waitUntil(proc.exited, w.pollMs);
  }
}
