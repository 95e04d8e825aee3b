/**
 * Process groups for launched servers, and tying them to the life of this Node process.
 *
 * A server launched `detached` leads its own process group, so one signal to `-pgid` reaches
 * it and every worker it forked (vLLM's EngineCore, tokenizer workers). Registered groups are
 * killed when Node goes down, as far as Node allows:
 * - normal exit (`process.exit`, end of the event loop, kernel shutdown): on `exit` the group
 *   gets SIGTERM, and a small detached `sh` sends SIGKILL after the grace period (the exit
 *   handler cannot wait);
 * - SIGINT / SIGTERM / SIGHUP: if nobody else listens for the signal (so it would have killed
 *   Node), the groups are killed the same way and the signal is re-raised. If someone else
 *   does listen (the tslab kernel turns SIGINT into "interrupt the cell"), the server is left
 *   running: an interrupted cell must not take the model server down;
 * - SIGKILL (`kill -9`, the OOM killer, a kernel restart that times out) cannot be caught here.
 *   `launchVllm` covers it with the orphan guard of `src/proc/orphan-guard.ts`: a watcher in the
 *   server's group sees the pipe from Node close and kills the group (SIGTERM, then SIGKILL).
 *   Should even that fail, stop it with `kill -- -<pgid>` (the pgid is the launch's `pid`).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { statFields } from './cpu-times';

const groups = new Map<number, number>(); // pgid → grace ms
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
let installed = false;

/** Sends `signal` to every process of group `pgid` (0: only check it exists); false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  // kill(-0) would hit our own group and kill(-1) every process we may signal.
  if (!Number.isInteger(pgid) || pgid <= 1) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether any process of group `pgid` is still running. Zombies do not count: a container's
 * PID 1 may never reap orphans, and a zombie holds no port and no GPU memory. (On Linux this
 * reads /proc; elsewhere any member counts.)
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    const f = statFields(stat); // state ppid pgrp …
    if (Number(f[2]) === pgid && f[0] !== 'Z' && f[0] !== 'X') return true;
  }
  return false;
}

/** Polls until group `pgid` is gone; false if `timeoutMs` passes first. */
export async function waitGroupGone(pgid: number, timeoutMs: number, pollMs = 50): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (groupAlive(pgid)) {
    if (performance.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, pollMs));
  }
  return true;
}

/** SIGTERM now, and SIGKILL after `graceMs` from a detached shell that survives this process. */
function killOnExit(pgid: number, graceMs: number): void {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  try {
    const s = Math.max(1, Math.ceil(graceMs / 1000));
    spawn('sh', ['-c', `sleep ${s}; kill -KILL -- -${pgid} 2>/dev/null`], { detached: true, stdio: 'ignore' }).unref();
  } catch {
    signalGroup(pgid, 'SIGKILL');
  }
}

function onExit(): void {
  for (const [pgid, grace] of groups) killOnExit(pgid, grace);
  groups.clear();
}

function onSignal(signal: NodeJS.Signals): void {
  // Only act where the signal would have ended Node: we are its only listener.
  if (process.listenerCount(signal) > 1) return;
  onExit();
  uninstall();
  process.kill(process.pid, signal);
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', onExit);
  for (const s of SIGNALS) process.on(s, onSignal);
}

function uninstall(): void {
  if (!installed) return;
  installed = false;
  process.off('exit', onExit);
  for (const s of SIGNALS) process.off(s, onSignal);
}

/**
 * Kill group `pgid` when this Node process goes down (see the module comment for what that
 * covers). `graceMs` is how long it gets between SIGTERM and SIGKILL then.
 */
export function killGroupOnExit(pgid: number, graceMs: number): void {
  groups.set(pgid, graceMs);
  install();
}

/** Undo `killGroupOnExit` (after the group was stopped). Handlers go away with the last group. */
export function forgetGroup(pgid: number): void {
  groups.delete(pgid);
  if (groups.size === 0) uninstall();
}

/** Process groups that will be killed when Node goes down. */
export function registeredGroups(): number[] {
  return [...groups.keys()];
}
