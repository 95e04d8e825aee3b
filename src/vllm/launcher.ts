/**
 * Starting and stopping a real `vllm serve` from Node (a notebook), the way a careful person
 * would by hand: check the port first, start it in its own process group, keep its log,
 * wait for `GET /health` to answer 200, and on the way out kill the whole group and wait
 * until the process is gone and the port is free. The server is tied to this Node process
 * (`process-group.ts` on exit and signals; `src/proc/orphan-guard.ts` when Node is SIGKILLed).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, writeSync, closeSync } from 'node:fs';
import { homedir } from 'node:os';
import type { Socket } from 'node:net';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import type { ServerFlags } from './flag-types';
import { serveArgWarnings, toServeArgs } from './flags';
import { httpGet } from '../client/http-get';
import { guardedSpawn } from '../proc/orphan-guard';
import { diagnoseLaunchFailure, type LaunchFailureKind } from './launch-diagnosis';
import { checkPort, freePort, waitPortFree } from '../proc/port';
import { forgetGroup, groupAlive, killGroupOnExit, signalGroup, waitGroupGone } from '../proc/process-group';
import { which } from '../proc/which';

/** Options of `launchVllm`. */
export interface LaunchVllmOptions {
  /** Model path or Hugging Face id (the positional argument of `vllm serve`). */
  model: string;
  /** Engine flags, written out by `toServeArgs(flags, { target: 'vllm' })` (simulator-only flags dropped). */
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
  /** Kills the whole process group (SIGTERM, then SIGKILL after the grace period) and waits until it is gone and the port is free. Idempotent. */
  stop(): Promise<void>;
  /** The last `n` log lines (default 40), joined with newlines. */
  logTail(n?: number): string;
}

/** A launch that failed: `kind` says why (see `launch-diagnosis.ts`), the message says what to do. */
export class LaunchError extends Error {
  /**
   * @param logTail the server's last log lines ('' when it never ran)
   * @param pid the server's pid (= process group), when it was spawned
   */
  constructor(message: string, readonly kind: LaunchFailureKind | 'timeout' | 'config', readonly logTail: string = '', readonly pid?: number) {
    super(message);
    this.name = 'LaunchError';
  }
}

const RING = 400;

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
  const host = options.host ?? '127.0.0.1';
  const bin = options.bin ?? process.env.LOADLAB_VLLM_BIN ?? 'vllm';
  const graceMs = options.stopGraceMs ?? 10_000;
  const timeoutMs = options.startupTimeoutMs ?? 600_000;
  const pollMs = options.healthPollMs ?? 500;
  const port = options.port === 0 ? await freePort(host) : options.port ?? 8000;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new LaunchError(`port must be an integer in 1..65535 (or 0 for a free one), got ${options.port}`, 'config');
  const model = options.model.startsWith('~/') ? homedir() + options.model.slice(1) : options.model;
  if (/^(\/|\.\.?\/)/.test(model) && !existsSync(model)) {
    throw new LaunchError(`model path ${model} does not exist. Give the folder that holds config.json and the weights (on AutoDL often under /root/autodl-tmp/), or a Hugging Face id such as Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4.`, 'model_not_found');
  }
  const exe = which(bin);
  if (!exe) {
    throw new LaunchError(`'${bin}' was not found. Activate the Python environment that has vLLM (e.g. \`conda activate\` it before starting Jupyter) or set LOADLAB_VLLM_BIN=/path/to/vllm. Without an NVIDIA GPU, use the simulator (startSim) instead.`, 'not_found');
  }
  const taken = await checkPort(port, host);
  if (taken.inUse) {
    const what = taken.how === 'listening' ? 'something is already answering there, probably an earlier server' : 'a socket is bound to it';
    throw new LaunchError(`port ${port} on ${host} is already in use (${what}). Stop the old server (\`await server.stop()\` if this kernel started it, or \`pkill -f "vllm serve"\` in a terminal; \`ss -ltnp | grep :${port}\` shows who holds it), or choose another port, e.g. launchVllm({ …, port: ${port + 1} }).`, 'port_in_use');
  }

  const argv = [exe, 'serve', model, '--host', host, '--port', String(port), ...toServeArgs(options.flags ?? {}, { target: 'vllm' }), ...(options.extraArgs ?? [])];
  // Flags that start but slow the lessons down, e.g. --quantization gptq (src/vllm/flags.ts).
  for (const w of serveArgWarnings(argv)) console.warn(`LoadLab: ${w}`);
  const ring: string[] = [];
  let logFd: number | undefined;
  if (options.logFile) {
    mkdirSync(dirname(options.logFile), { recursive: true });
    logFd = openSync(options.logFile, 'a');
    writeSync(logFd, `# ${new Date().toISOString()} ${argv.join(' ')}\n`);
  }
  const addLine = (line: string) => {
    ring.push(line);
    if (ring.length > RING) ring.shift();
    if (logFd !== undefined) writeSync(logFd, `${line}\n`);
    options.onLog?.(line);
  };
  const logTail = (n = 40) => ring.slice(-n).join('\n');

  // Under the orphan guard: its own process group, and gone when this process dies, even of SIGKILL.
  const guarded = guardedSpawn(exe, argv.slice(1), graceMs);
  const child = spawn(guarded.command, guarded.args, {
    detached: true,
    stdio: guarded.stdio,
    env: { ...process.env, PYTHONUNBUFFERED: '1', ...options.env },
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const pid = child.pid;
  if (pid === undefined) {
    const err = await spawnError;
    if (logFd !== undefined) closeSync(logFd);
    throw new LaunchError(`could not start ${exe}: ${err.message}`, 'not_found');
  }
  killGroupOnExit(pid, graceMs);
  // Let Node exit while the server runs; the exit handler then takes the server down with it.
  child.unref();
  (child.stdio[3] as unknown as Socket | null)?.unref?.();
  for (const stream of [child.stdout, child.stderr]) {
    (stream as unknown as Socket).unref?.();
    createInterface({ input: stream! }).on('line', addLine);
  }
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<void>((resolve) => child.once('exit', (code, signal) => { exitInfo = { code, signal }; resolve(); }));
  // 'close' = its pipes are drained too (never, while a forked worker still holds them).
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= (async () => {
    signalGroup(pid, 'SIGTERM');
    if (!(await waitGroupGone(pid, graceMs))) {
      signalGroup(pid, 'SIGKILL');
      await waitGroupGone(pid, 5000);
    }
    forgetGroup(pid);
    // The pipes may still hold the last lines (the ones that say why it died): let them drain.
    await waitUntil(closed, 500);
    if (logFd !== undefined) closeSync(logFd);
    logFd = undefined;
    if (groupAlive(pid)) throw new LaunchError(`vLLM (process group ${pid}) survived SIGKILL; run \`kill -9 -- -${pid}\``, 'unknown', logTail(), pid);
    if (!(await waitPortFree(port, host, 10_000))) {
      throw new LaunchError(`vLLM stopped, but port ${port} is still in use after 10 s (another process holds it: \`ss -ltnp | grep :${port}\`)`, 'port_in_use', logTail(), pid);
    }
  })());

  const baseUrl = `http://${host === '0.0.0.0' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${port}`;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (exitInfo) {
      await stop().catch(() => undefined);
      const lines = ring.slice(-60);
      const d = diagnoseLaunchFailure(lines, { model, port, exitCode: exitInfo.code });
      throw new LaunchError(`vLLM exited before it became healthy: ${d.advice}\n--- last log lines ---\n${logTail(25)}`, d.kind, logTail(), pid);
    }
    const healthy = await httpGet(`${baseUrl}/health`, { timeoutMs: 2000 }).then((r) => r.status === 200, () => false);
    if (healthy && !exitInfo) break;
    if (performance.now() >= deadline) {
      await stop().catch(() => undefined);
      throw new LaunchError(`vLLM did not answer GET /health with 200 within ${Math.round(timeoutMs / 1000)} s, so it was stopped. Loading a 7B model takes 1–3 min on a 4090 (longer on a first download); raise startupTimeoutMs if the log shows progress.\n--- last log lines ---\n${logTail(25)}`, 'timeout', logTail(), pid);
    }
    await waitUntil(exited, pollMs);
  }
  return { baseUrl, model: options.flags?.servedModelName ?? model, pid, argv, stop, logTail };
}

/** Resolves when `p` settles or after `ms`, whichever is first, leaving no timer behind. */
async function waitUntil(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((r) => { timer = setTimeout(r, ms); })]);
  clearTimeout(timer);
}
