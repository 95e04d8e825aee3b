/**
 * Starts the simulated vLLM server as a separate process (`node --import tsx
 * src/sim/main.ts …`), so its real-time engine never shares an event loop with the
 * load generator. Works from notebooks, tests and scripts: paths come from the package
 * root, and tsx is resolved from the package's own node_modules.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRoot } from '../paths';
import { DEFAULT_MODEL, parseServeArgs, toServeArgs } from '../server/flags';
import type { ServerFlags } from './types';

/** The line the child prints once it listens (see serve.ts). */
const MARKER = 'LOADLAB_SIM_LISTENING';
/** Lines of output kept for `logTail`. */
const KEEP_LINES = 2000;

/** Options of `startSim`. */
export interface StartSimOptions {
  /** `vllm serve` flags for the simulator; default none (vLLM's defaults). */
  flags?: ServerFlags;
  /** Port; default 0 (an ephemeral port, read back from the child). */
  port?: number;
  /** Bind address; default 127.0.0.1. */
  host?: string;
  /** Extra raw arguments, e.g. `['--stats-interval-s', '2']`. */
  extraArgs?: string[];
  /** Extra environment variables for the child. */
  env?: Record<string, string>;
  /** Append the child's stdout and stderr to this file. */
  logFile?: string;
  /** Give up if the child is not listening after this long, ms; default 30000. */
  startupTimeoutMs?: number;
}

/** A running simulator process. */
export interface SimHandle {
  /** e.g. `http://127.0.0.1:40123` (no trailing slash, no `/v1`). */
  baseUrl: string;
  /** Served model name to send as `model`. */
  model: string;
  pid: number;
  /** SIGTERM, wait for exit (SIGKILL after 3 s). Safe to call twice. */
  stop(): Promise<void>;
  /** The last `n` lines of the child's output (default 50). */
  logTail(n?: number): string;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
}

/** The absolute `file:` URL of tsx's ESM loader inside this package's node_modules. */
function tsxLoaderUrl(root: string): string {
  return pathToFileURL(createRequire(join(root, 'package.json')).resolve('tsx')).href;
}

/**
 * Spawns the simulator and resolves once it listens. Rejects with the child's log tail if it
 * exits first or does not listen within `startupTimeoutMs`.
 */
export function startSim(options: StartSimOptions = {}): Promise<SimHandle> {
  const serveArgs = [
    ...toServeArgs(options.flags ?? {}), ...(options.extraArgs ?? []),
    '--host', options.host ?? '127.0.0.1', '--port', String(options.port ?? 0),
  ];
  let model: string;
  try {
    // Check the flags here too: a typo fails at once instead of after a process start.
    const parsed = parseServeArgs(serveArgs);
    model = parsed.flags.servedModelName ?? parsed.model ?? DEFAULT_MODEL;
  } catch (err) {
    return Promise.reject(err);
  }
  const root = packageRoot();
  const args = ['--import', tsxLoaderUrl(root), join(root, 'src', 'sim', 'main.ts'), ...serveArgs];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...options.env, LOADLAB_SIM_WATCH_STDIN: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  installExitHook();
  const lines: string[] = [];
  const file: WriteStream | undefined = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  let exited = child.exitCode !== null;
  const exitWaiters: Array<() => void> = [];
  let onLine: ((l: string) => void) | undefined;
  const collect = (stream: NodeJS.ReadableStream | null) => {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      file?.write(chunk);
      const parts = (partial + chunk).split('\n');
      partial = parts.pop()!;
      for (const l of parts) {
        lines.push(l);
        onLine?.(l);
      }
      if (lines.length > KEEP_LINES) lines.splice(0, lines.length - KEEP_LINES);
    });
  };
  collect(child.stdout);
  collect(child.stderr);
  const logTail = (n = 50) => lines.slice(-n).join('\n');
  child.on('exit', () => {
    exited = true;
    live.delete(child);
    file?.end();
    for (const w of exitWaiters.splice(0)) w();
  });
  const waitExit = (ms: number) => new Promise<boolean>((resolve) => {
    if (exited) return resolve(true);
    const t = setTimeout(() => resolve(false), ms);
    exitWaiters.push(() => { clearTimeout(t); resolve(true); });
  });
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    if (!(await waitExit(3000))) {
      child.kill('SIGKILL');
      await waitExit(5000);
    }
  };

  return new Promise<SimHandle>((resolve, reject) => {
    const timeoutMs = options.startupTimeoutMs ?? 30000;
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the simulator did not start within ${timeoutMs} ms (raise startupTimeoutMs on a slow machine). Its output:\n${logTail()}`));
    }, timeoutMs);
    const fail = (why: string) => {
      clearTimeout(timer);
      // Let the last output arrive before quoting it.
      setTimeout(() => reject(new Error(`the simulator ${why} before listening. Its output:\n${logTail()}`)), 50);
    };
    let started = false;
    child.on('error', (err) => { if (!started) fail(`could not be started (${err.message})`); });
    child.once('exit', (code, signal) => { if (!started) fail(`exited (${signal ?? `code ${code}`})`); });
    onLine = (l) => {
      if (!l.startsWith(MARKER)) return;
      started = true;
      clearTimeout(timer);
      onLine = undefined;
      child.unref();
      for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as { unref?: () => void } | null)?.unref?.();
      resolve({ baseUrl: l.slice(MARKER.length).trim(), model, pid: child.pid!, stop, logTail });
    };
  });
}
