/**
 * Starts the simulated vLLM server as a separate process (`node --import tsx
 * src/sim/main.ts …`), so its real-time engine never shares an event loop with the
 * load generator. Works from notebooks, tests and scripts: paths come from the package
 * root, and tsx is resolved from the package's own node_modules.
 *
 * The child follows the kill policy of `src/proc/child.ts`: its own process group, so a
 * notebook's "interrupt kernel" (SIGINT to the kernel's process group) leaves it running, and it
 * exits when the kernel goes away in any way (restart, shutdown, SIGKILL).
 */
import { join } from 'node:path';
import { spawnChild } from '../proc/child';
import { parseServeArgs, toServeArgs } from '../vllm/flags';
import { defaultProfileName, loadProfileFile } from './engine/profile-file';
import type { ServerFlags } from './engine/types';

/** The line the child prints once it listens (`LISTENING_MARKER` of serve.ts, not imported: that would load the engine here). */
const LISTENING_MARKER = 'LOADLAB_SIM_LISTENING';

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
  /**
   * GPU + model profile (LoadLab only, `--profile`): a file stem under `profiles/` or a path to a profile
   * file; default `LOADLAB_SIM_PROFILE`, else `rtx4090-qwen2.5-7b-instruct-gptq-int4`. The served model name follows its model.
   */
  profile?: string;
}

/** Which profile a simulator runs (as `GET /version` reports it in `loadlab_profile`). */
export interface SimProfileInfo {
  /** Profile id, e.g. `l40s-qwen2.5-7b-instruct-awq`. */
  id: string;
  /** e.g. `spec-derived, not calibrated`. */
  status: string;
  /** Absolute path of the profile file. */
  file: string;
}

/** A running simulator process. */
export interface SimHandle {
  /** e.g. `http://127.0.0.1:40123` (no trailing slash, no `/v1`). */
  baseUrl: string;
  /** Served model name to send as `model`. */
  model: string;
  /** The profile it runs. */
  profile: SimProfileInfo;
  pid: number;
  /** SIGTERM, SIGKILL after 3 s, wait until the process and its port are gone. Safe to call twice. */
  stop(): Promise<void>;
  /** The last `n` lines of the child's output (default 50). */
  logTail(n?: number): string;
}

/**
 * Node options of every simulator this starts. `--no-memory-reducer`: V8's memory reducer collects a heap that looks
 * idle, and a simulator idles between a lesson's points (lesson 08 alternates two). Its full collections then landed
 * inside the simulator's next points: 7 and 8 pauses of 2.3–38.8 ms on the engine thread in two runs of lesson 08,
 * none in two runs with the reducer off (bench/README.md §21). V8 creates the reducer when it sets the heap up, so
 * only the command line turns it off. `loadlab sim` started by hand runs in its own process and keeps V8's default.
 */
export const SIM_NODE_ARGS: readonly string[] = ['--no-memory-reducer'];

/**
 * Spawns the simulator and resolves once it listens. Rejects with the child's log tail if it
 * exits first or does not listen within `startupTimeoutMs`.
 */
export function startSim(options: StartSimOptions = {}): Promise<SimHandle> {
  const serveArgs = [
    ...toServeArgs(options.flags ?? {}),
    ...(options.extraArgs ?? []),
    '--host',
    options.host ?? '127.0.0.1',
    '--port',
    String(options.port ?? 0),
  ];
  let model: string;
  let profile: SimProfileInfo;
  try {
    // Check the flags and the profile here too: a typo fails at once instead of after a process start.
    const parsed = parseServeArgs(serveArgs);
    const loaded = loadProfileFile(options.profile ?? defaultProfileName());
    profile = { id: loaded.profile.id, status: loaded.profile.status, file: loaded.file };
    model = parsed.flags.servedModelName ?? parsed.model ?? loaded.profile.model.name;
  } catch (err) {
    return Promise.reject(err);
  }
  return spawnChild({
    entry: join('src', 'sim', 'main.ts'),
    nodeArgs: SIM_NODE_ARGS,
    args: [...serveArgs, '--profile', profile.file],
    env: options.env ?? {},
    marker: LISTENING_MARKER,
    name: 'the simulator',
    startupTimeoutMs: options.startupTimeoutMs ?? 30_000,
    graceMs: 3000,
    ...(options.logFile ? { logFile: options.logFile } : {}),
    portOf: (url) => {
      const u = new URL(url);
      return { port: Number(u.port), host: u.hostname.replace(/^\[|\]$/g, '') };
    },
  }).then((c) => ({ baseUrl: c.payload, model, profile, pid: c.pid, stop: c.stop, logTail: c.logTail }));
}
