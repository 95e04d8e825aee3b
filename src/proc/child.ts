/**
 * One way to run a helper process (the simulator, the null server, benchmark and test servers):
 * `node --import tsx <entry> …args` (or `node dist/<entry>.js …args` when dist/ holds a fresh build
 * of an entry under src/, see ./dist), wait for its ready line, stop it later.
 *
 * Ready-line protocol: once it serves, the child prints ONE line `<marker> <payload>` on stdout
 * (e.g. `LOADLAB_SIM_LISTENING http://127.0.0.1:40123`); {@link spawnChild} resolves with the
 * payload. If the child exits first, or the line does not come within the start-up timeout, it
 * rejects with the child's last output lines (and the child is stopped).
 *
 * Kill policy (the same for every child):
 * - the child runs in its OWN process group (`detached: true`), so a signal to the parent's group
 *   does not reach it. JupyterLab's "interrupt kernel" sends SIGINT to the kernel's whole process
 *   group (jupyter_client `LocalProvisioner.send_signal` uses `os.killpg`): that interrupts the
 *   cell, and the simulator the cell talks to keeps running;
 * - it never outlives the parent: the parent keeps the write end of the child's stdin; when the
 *   parent goes away in ANY way (exit, an uncaught signal, SIGKILL, the OOM killer, a kernel
 *   restart or shutdown) the kernel closes that pipe, the child reads EOF and exits. The child
 *   arms this with {@link watchParent} (which also exits when it is re-parented, i.e. its parent
 *   pid changes). On a normal exit the parent's `exit` hook also SIGKILLs every live child group;
 * - `stop()`: SIGTERM to the child's group, wait; SIGKILL after `graceMs`; then wait until no
 *   process of the group is left and, with `portOf`, until the port can be bound again.
 *   Safe to call twice (the second call waits for the first).
 * The child is unref'd once ready: it does not keep the parent's event loop alive.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { packageRoot } from '../paths';
import { builtEntry, tsxLoaderUrl } from './dist';
import { waitPortFree } from './port';
import { signalGroup, waitGroupGone } from './process-group';

/** The environment variable that tells a child it was started by {@link spawnChild} (its stdin is the parent's pipe). */
export const PARENT_WATCH_ENV = 'LOADLAB_WATCH_PARENT';

/** Options of {@link spawnChild}. */
export interface SpawnChildOptions {
  /** The `.ts` (or `.js`) entry: absolute, or relative to the package root. */
  entry: string;
  /** Arguments after the entry; default none. */
  args?: string[];
  /**
   * Node's own options, before the entry (e.g. a V8 flag); default none. Any V8 flag given this way costs the child
   * Node's built-in code cache (bench/README.md §14).
   */
  nodeArgs?: readonly string[];
  /** Extra environment variables (added to `process.env`). */
  env?: Record<string, string | undefined>;
  /** The ready line's first word, e.g. `LOADLAB_SIM_LISTENING`. */
  marker: string;
  /** What the child is, for error messages, e.g. `the simulator`; default `the child process`. */
  name?: string;
  /** Give up when the ready line has not come after this long, ms; default 30 000. */
  startupTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL in `stop()`, ms; default 3000. */
  graceMs?: number;
  /** Append the child's stdout and stderr to this file. */
  logFile?: string;
  /** Where `stop()` waits for the port to be free again: from the ready payload; default none. */
  portOf?: (payload: string) => { port: number; host?: string } | undefined;
}

/** A running child (see the module comment for the kill policy). */
export interface ChildHandle {
  /** Pid of the child, which is also its process group id. */
  pid: number;
  /** What followed the marker on the ready line, trimmed. */
  payload: string;
  /** The Node handle (for `exitCode`, listeners). */
  proc: ChildProcess;
  /** True once the child has exited. */
  readonly exited: boolean;
  /** SIGTERM, SIGKILL after the grace period, wait until the group and the port are gone. Idempotent. */
  stop(): Promise<void>;
  /** The last `n` lines of the child's stdout and stderr (default 50). */
  logTail(n?: number): string;
}

/** Lines of output kept for `logTail`. */
const KEEP_LINES = 2000;
const live = new Set<number>();
let exitHook = false;

function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const pgid of live) signalGroup(pgid, 'SIGKILL');
  });
}

function collectLines(proc: ChildProcess, file: WriteStream | undefined, onLine: (l: string) => void): string[] {
  const lines: string[] = [];
  for (const stream of [proc.stdout, proc.stderr]) {
    let partial = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      file?.write(chunk);
      const parts = (partial + chunk).split('\n');
      partial = parts.pop()!;
      for (const l of parts) {
        lines.push(l);
        onLine(l);
      }
      if (lines.length > KEEP_LINES) lines.splice(0, lines.length - KEEP_LINES);
    });
  }
  return lines;
}

/**
 * Spawn `node --import tsx <entry> …args` in its own process group and resolve once it prints
 * `<marker> <payload>` (see the module comment). Rejects, after stopping the child, when it
 * exits first or the line does not come within `startupTimeoutMs` (default 30 000 ms).
 */
export function spawnChild(opts: SpawnChildOptions): Promise<ChildHandle> {
  const root = packageRoot();
  const name = opts.name ?? 'the child process';
  const entry = isAbsolute(opts.entry) ? opts.entry : join(root, opts.entry);
  // The bundled entry when dist/ is fresh (no TypeScript compiled at start, see ./dist), else the source through tsx.
  const built = builtEntry(entry, root);
  const head = built ? [built] : ['--import', tsxLoaderUrl(root), entry];
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...head, ...(opts.args ?? [])], {
    cwd: root,
    detached: true,
    env: { ...process.env, ...opts.env, [PARENT_WATCH_ENV]: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  proc.stdin?.on('error', () => undefined); // never written; the child's exit may still break it
  const file = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
  let onLine: ((l: string) => void) | undefined;
  const lines = collectLines(proc, file, (l) => onLine?.(l));
  const logTail = (n = 50) => lines.slice(-n).join('\n');
  const exitedP = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let exited = false;
  void exitedP.then(() => {
    exited = true;
    if (proc.pid) live.delete(proc.pid);
    file?.end();
  });
  if (proc.pid) live.add(proc.pid);
  installExitHook();
  let payload = '';
  let stopping: Promise<void> | undefined;
  const portOf = () => {
    try {
      return payload ? opts.portOf?.(payload) : undefined;
    } catch {
      return undefined; // a payload without a port: nothing to wait for
    }
  };
  const stop = () => (stopping ??= stopChild(proc, exitedP, opts.graceMs ?? 3000, portOf()));

  return new Promise<ChildHandle>((resolve, reject) => {
    const timeoutMs = opts.startupTimeoutMs ?? 30_000;
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      onLine = undefined;
      // Let the last output arrive before quoting it.
      void stop().then(() => setTimeout(() => reject(new Error(`${name} ${why}. Its output:\n${logTail()}`)), 50));
    };
    const timer = setTimeout(
      () => fail(`did not start within ${timeoutMs} ms (raise startupTimeoutMs on a slow machine)`),
      timeoutMs,
    );
    proc.once('error', (err) => fail(`could not be started (${err.message})`));
    proc.once('exit', (code, signal) => fail(`exited (${signal ?? `code ${code}`}) before listening`));
    onLine = (l) => {
      if (settled || !(l === opts.marker || l.startsWith(`${opts.marker} `))) return;
      settled = true;
      clearTimeout(timer);
      onLine = undefined;
      payload = l.slice(opts.marker.length).trim();
      proc.unref();
      for (const s of [proc.stdin, proc.stdout, proc.stderr]) (s as unknown as { unref?: () => void } | null)?.unref?.();
      resolve({
        pid: proc.pid!,
        payload,
        proc,
        get exited() {
          return exited;
        },
        stop,
        logTail,
      });
    };
  });
}

/** The policy of `stop()`: group SIGTERM, SIGKILL after `graceMs`, wait for the group and the port. */
async function stopChild(
  proc: ChildProcess,
  exitedP: Promise<void>,
  graceMs: number,
  port?: { port: number; host?: string },
): Promise<void> {
  const pgid = proc.pid;
  if (!pgid) return;
  if (proc.exitCode === null && proc.signalCode === null) signalGroup(pgid, 'SIGTERM');
  if (!(await waitGroupGone(pgid, graceMs, 20))) {
    signalGroup(pgid, 'SIGKILL');
    await waitGroupGone(pgid, 5000, 20);
  }
  // The group is gone; the 'exit' event may still be on its way (it ends the log file).
  // A plain (not unref'd) timer: the child is unref'd, so its exit event alone would not keep the loop alive.
  await Promise.race([exitedP, new Promise((r) => setTimeout(r, 1000))]);
  if (port) await waitPortFree(port.port, port.host ?? '127.0.0.1', 5000, 20);
}

/**
 * Child side: call once the child's entry runs (before its ready line). When this process was
 * started by {@link spawnChild} (`LOADLAB_WATCH_PARENT=1`), `onGone(why)` is called when the
 * parent goes away: stdin reaches EOF (the parent's end of the pipe closed), stdout breaks
 * (EPIPE), or the parent pid changes (re-parented), checked every `pollMs` (default 1000).
 * Returns false (and watches nothing) when started otherwise, e.g. from a terminal.
 */
export function watchParent(onGone: (why: string) => void, pollMs = 1000): boolean {
  if (process.env[PARENT_WATCH_ENV] !== '1') return false;
  delete process.env[PARENT_WATCH_ENV]; // not for this process's own children: their stdin is not our pipe
  let gone = false;
  const once = (why: string) => {
    if (gone) return;
    gone = true;
    onGone(why);
  };
  process.stdin.on('end', () => once('parent went away (stdin closed)'));
  process.stdin.on('error', () => once('parent went away (stdin error)'));
  process.stdin.resume();
  process.stdout.on('error', () => once('parent went away (stdout closed)'));
  const ppid = process.ppid;
  setInterval(() => {
    if (process.ppid !== ppid) once(`parent went away (re-parented from pid ${ppid} to ${process.ppid})`);
  }, pollMs).unref();
  return true;
}
