/**
 * The same promise as `child.ts` ("never outlives the parent, even on SIGKILL of the parent")
 * for a program we cannot change, such as `vllm serve` (Python): a small `sh` guard in the
 * program's own process group.
 *
 * The parent spawns `sh -c <GUARD> <exe> <args…>` with `detached: true` and a fourth stdio pipe
 * (fd 3) that it never writes to. The shell forks a watcher and then `exec`s the program, so
 * the program keeps the shell's pid, which is also the group id. The watcher (`cat` on fd 3)
 * waits for the parent's end of that pipe to close, which the kernel does when the parent dies
 * in any way, SIGKILL included. Then it sends SIGTERM to its group (the program and all its
 * workers), waits the grace period and sends SIGKILL. A `stop()` that signals the group ends
 * the watcher too (its `cat` dies of the SIGTERM, so it never reaches the kill branch).
 * While the parent lives the watcher costs one idle `sh` and one idle `cat`.
 */

/** The guard script: `$0` is the program, `$@` its arguments, fd 3 the parent's pipe, `GRACE` seconds. */
function guardScript(graceS: number): string {
  return [
    `( cat <&3 >/dev/null 2>&1 && { trap '' TERM; kill -s TERM 0; sleep ${graceS}; kill -s KILL 0; } ) &`,
    'exec 3<&-',
    'exec "$0" "$@"',
  ].join('\n');
}

/** How to spawn `exe args…` under the guard: `spawn(g.command, g.args, { detached: true, stdio: g.stdio })`. */
export interface GuardedSpawn {
  command: string;
  args: string[];
  /** stdin ignored, stdout and stderr piped, fd 3 the watch pipe (unref it, never write to it). */
  stdio: ['ignore', 'pipe', 'pipe', 'pipe'];
}

/**
 * The command line that runs `exe args…` under the orphan guard (see the module comment).
 * `graceMs` (default 10 000) is the time between SIGTERM and SIGKILL when the parent has died,
 * rounded up to whole seconds (at least 1).
 */
export function guardedSpawn(exe: string, args: string[], graceMs = 10_000): GuardedSpawn {
  const graceS = Math.max(1, Math.ceil(graceMs / 1000));
  return { command: 'sh', args: ['-c', guardScript(graceS), exe, ...args], stdio: ['ignore', 'pipe', 'pipe', 'pipe'] };
}
