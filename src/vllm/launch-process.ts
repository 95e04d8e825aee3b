/**
 * The `vllm serve` process that `launchVllm` (launcher.ts) starts: its log (a ring of the last
 * lines, optionally appended to a file), the spawn under the orphan guard in its own process
 * group, and the stop that kills the whole group and waits until it is gone and the port is free.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import type { Socket } from 'node:net';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { guardedSpawn } from '../proc/orphan-guard';
import { waitPortFree } from '../proc/port';
import { forgetGroup, groupAlive, killGroupOnExit, signalGroup, waitGroupGone } from '../proc/process-group';
import { LaunchError } from './launch-error';

/** Log lines kept in memory. */
const RING = 400;

/** The server's log: the last lines in memory, and the file they are appended to. */
export interface ServerLog {
  addLine(line: string): void;
  /** The last `n` lines (default 40), joined with newlines. */
  logTail(n?: number): string;
  /** The last `n` lines. */
  lastLines(n: number): string[];
  /** Close the log file (idempotent); lines after it stay in memory only. */
  close(): void;
}

/** Open the log: `logFile` (folders created) gets a `# <ISO time> <argv>` header, then every line. */
export function openServerLog(argv: string[], logFile?: string, onLog?: (line: string) => void): ServerLog {
  const ring: string[] = [];
  let logFd: number | undefined;
  if (logFile) {
    mkdirSync(dirname(logFile), { recursive: true });
    logFd = openSync(logFile, 'a');
    writeSync(logFd, `# ${new Date().toISOString()} ${argv.join(' ')}\n`);
  }
  return {
    addLine(line) {
      ring.push(line);
      if (ring.length > RING) ring.shift();
      if (logFd !== undefined) writeSync(logFd, `${line}\n`);
      onLog?.(line);
    },
    logTail: (n = 40) => ring.slice(-n).join('\n'),
    lastLines: (n) => ring.slice(-n),
    close() {
      if (logFd !== undefined) closeSync(logFd);
      logFd = undefined;
    },
  };
}

/** A spawned server. */
export interface ServerProcess {
  /** Pid of `vllm serve`, also its process group id. */
  pid: number;
  /** How it exited, once it has. */
  exitInfo(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Resolves when the process exits. */
  exited: Promise<void>;
  /** Kill the group (SIGTERM, SIGKILL after `graceMs`), wait until it and the port are free. Idempotent. */
  stop(): Promise<void>;
}

/** Where and how the server runs. */
export interface SpawnSettings {
  host: string;
  port: number;
  /** ms between SIGTERM and SIGKILL. */
  graceMs: number;
  /** Extra environment variables. */
  env?: Record<string, string | undefined>;
}

/**
 * Spawn `argv` (argv[0] the executable) under the orphan guard, in its own process group that
 * dies with this process, its output lines into `log`. Throws a `LaunchError` when it cannot start.
 */
export async function spawnServer(argv: string[], s: SpawnSettings, log: ServerLog): Promise<ServerProcess> {
  const exe = argv[0]!;
  // Under the orphan guard: its own process group, and gone when this process dies, even of SIGKILL.
  const guarded = guardedSpawn(exe, argv.slice(1), s.graceMs);
  const child = spawn(guarded.command, guarded.args, {
    detached: true,
    stdio: guarded.stdio,
    env: { ...process.env, PYTHONUNBUFFERED: '1', ...s.env },
  });
  const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
  const pid = child.pid;
  if (pid === undefined) {
    const err = await spawnError;
    log.close();
    throw new LaunchError(`could not start ${exe}: ${err.message}`, 'not_found');
  }
  killGroupOnExit(pid, s.graceMs);
  // Let Node exit while the server runs; the exit handler then takes the server down with it.
  child.unref();
  (child.stdio[3] as unknown as Socket | null)?.unref?.();
  for (const stream of [child.stdout, child.stderr]) {
    (stream as unknown as Socket).unref?.();
    createInterface({ input: stream! }).on('line', log.addLine);
  }
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolve();
    }),
  );
  // 'close' = its pipes are drained too (never, while a forked worker still holds them).
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= stopGroup(pid, s, log, closed));
  return { pid, exitInfo: () => exitInfo, exited, stop };
}

/** Kill the server's process group, let its pipes drain, close the log, wait for the port. */
async function stopGroup(pid: number, s: SpawnSettings, log: ServerLog, closed: Promise<void>): Promise<void> {
  const { port, host } = s;
  signalGroup(pid, 'SIGTERM');
  if (!(await waitGroupGone(pid, s.graceMs))) {
    signalGroup(pid, 'SIGKILL');
    await waitGroupGone(pid, 5000);
  }
  forgetGroup(pid);
  // The pipes may still hold the last lines (the ones that say why it died): let them drain.
  await waitUntil(closed, 500);
  log.close();
  if (groupAlive(pid))
    throw new LaunchError(
      `vLLM (process group ${pid}) survived SIGKILL; run \`kill -9 -- -${pid}\``,
      'unknown',
      log.logTail(),
      pid,
    );
  if (!(await waitPortFree(port, host, 10_000))) {
    throw new LaunchError(
      `vLLM stopped, but port ${port} is still in use after 10 s (another process holds it: \`ss -ltnp | grep :${port}\`)`,
      'port_in_use',
      log.logTail(),
      pid,
    );
  }
}

/** Resolves when `p` settles or after `ms`, whichever is first, leaving no timer behind. */
export async function waitUntil(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    p,
    new Promise<void>((r) => {
      timer = setTimeout(r, ms);
    }),
  ]);
  clearTimeout(timer);
}
