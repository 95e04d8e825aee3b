/**
 * The server a lesson measures, chosen from the environment, so the same notebook runs on a
 * laptop and on a GPU box:
 * - `LOADLAB_BASE_URL` set → an **external** server the user started (real vLLM, usually).
 *   LoadLab cannot change its flags; `restart(flags)` checks the ones the server shows
 *   (`/metrics`, `/v1/models`) and throws with the `vllm serve` line to restart with when they differ.
 * - `LOADLAB_VLLM_MODEL` set → LoadLab **launches** `vllm serve <model>` itself (the launcher
 *   in `launcher.ts`), and restarts it with new flags when a lesson needs them.
 * - neither → LoadLab's **simulated** vLLM server, a separate process (`startSim`).
 */
import { checkLessonFits, type LessonFit } from './lesson-check';
import { startSim } from '../sim/start';
import type { ServerFlags } from '../vllm/flag-types';
import type { RequestSpec } from '../types';
import { recordEffectiveConfig, type EffectiveConfig } from '../observe/effective-config';
import {
  assertFlagsMatch,
  assertRestartedForHidden,
  compareFlags,
  serveLine,
  unverifiedNote,
  type ReportedConfig,
} from '../vllm/flag-check';
import { launchVllm } from '../vllm/launcher';
import { resolveApiKey, serverRoot } from '../client/url';

/** Which kind of server a lesson talks to. */
export type TargetMode = 'sim' | 'launched' | 'external';

/** A server a lesson measures. */
export interface LessonTarget {
  readonly mode: TargetMode;
  /** Server root, e.g. `http://127.0.0.1:8000`. */
  readonly baseUrl: string;
  /** Model name to request. */
  readonly model: string;
  /** True when the numbers come from LoadLab's simulator (label them so). */
  readonly simulated: boolean;
  /** Flags this lesson asked for (what the server runs with, unless `mode` is `external`). */
  readonly flags: ServerFlags;
  /** What the server reported at the last (re)start: version, models, cache config. */
  readonly config: EffectiveConfig;
  /** Plain-language notes for the reader, e.g. flags that could not be applied or checked. */
  readonly notes: string[];
  /**
   * Restart with other flags (a new simulator or vLLM process). For `external`, LoadLab cannot
   * restart the server: this re-reads what it reports and throws, with the `vllm serve` line, when
   * a visible flag differs, or when flags it cannot see changed but the server process did not
   * (same start time in `/metrics`); those flags are named in `notes` as unverified. On a throw
   * the previous flags stay in effect.
   */
  restart(flags: ServerFlags): Promise<void>;
  /**
   * Before a lesson's first point: throw, naming the `vllm serve --max-model-len` fix, when any of
   * `requests` (prompt with the chat template + max_tokens) exceeds the server's `max_model_len`
   * (see `checkLessonFits`). Sends no load.
   */
  checkFits(requests: readonly RequestSpec[]): Promise<LessonFit>;
  /** Stop what LoadLab started. Safe to call twice; a no-op for `external`. */
  stop(): Promise<void>;
  /** The server's last log lines (empty for `external`). */
  logTail(n?: number): string;
}

/** Options of `openTarget`. */
export interface OpenTargetOptions {
  /** Flags the lesson needs; default none (the server's defaults). */
  flags?: ServerFlags;
  /** Where to append the server's log (launched or simulated). */
  logFile?: string;
  /** Environment to read (default `process.env`); tests pass their own. */
  env?: Record<string, string | undefined>;
  /** Simulator profile (name under `profiles/` or file); default `LOADLAB_SIM_PROFILE`, else the 4090 one. Sim only. */
  profile?: string;
}

interface Running {
  baseUrl: string;
  model: string;
  stop(): Promise<void>;
  logTail(n?: number): string;
}

/**
 * Compare requested flags with what an external server's `/metrics` shows; one note per finding
 * (see `compareFlags` in `flag-check.ts`, which also reads `max_model_len` and the served names).
 */
export function checkVisibleFlags(flags: ServerFlags, cacheConfig: Record<string, string> | undefined): string[] {
  const check = compareFlags(flags, cacheConfig ? { cacheConfig } : {});
  const notes = check.mismatches.map((m) => `${m[0].toUpperCase()}${m.slice(1)}. Restart vLLM with the flags above.`);
  const note = unverifiedNote(check);
  return note ? [...notes, note] : notes;
}

function reported(config: EffectiveConfig): ReportedConfig {
  return {
    ...(config.cacheConfig ? { cacheConfig: config.cacheConfig } : {}),
    ...(config.models[0]?.maxModelLen !== undefined ? { maxModelLen: config.models[0].maxModelLen } : {}),
    models: config.models.map((m) => m.id),
    simulated: config.simulated,
    ...(config.startedAtS !== undefined ? { startedAtS: config.startedAtS } : {}),
    engine: config.engine,
  };
}

async function startFor(
  mode: TargetMode,
  flags: ServerFlags,
  opts: OpenTargetOptions,
  env: Record<string, string | undefined>,
): Promise<Running> {
  const profile = opts.profile ?? env.LOADLAB_SIM_PROFILE;
  if (mode === 'sim')
    return startSim({ flags, ...(opts.logFile ? { logFile: opts.logFile } : {}), ...(profile ? { profile } : {}) });
  const model = env.LOADLAB_VLLM_MODEL as string;
  const port = env.LOADLAB_VLLM_PORT ? Number(env.LOADLAB_VLLM_PORT) : 8000;
  return launchVllm({
    model,
    flags,
    port,
    ...(env.LOADLAB_VLLM_BIN ? { bin: env.LOADLAB_VLLM_BIN } : {}),
    ...(opts.logFile ? { logFile: opts.logFile } : {}),
  });
}

/** What an open target knows, changed in place by `restart`. */
interface TargetState {
  readonly mode: TargetMode;
  readonly opts: OpenTargetOptions;
  readonly env: Record<string, string | undefined>;
  flags: ServerFlags;
  running: Running | undefined;
  baseUrl: string;
  model: string;
  config: EffectiveConfig;
  readonly notes: string[];
}

/** Read what the server reports; an external one that does not answer throws, naming the fix. */
async function describe(st: Omit<TargetState, 'config'>): Promise<EffectiveConfig> {
  const config = await recordEffectiveConfig(st.baseUrl, { apiKey: resolveApiKey(undefined, st.env) });
  if (st.mode === 'external') {
    if (!config.reachable) {
      throw new Error(
        `LOADLAB_BASE_URL=${st.baseUrl} does not answer. Start vLLM first (vllm serve <model> --port 8000), ` +
          'or unset LOADLAB_BASE_URL to use the simulator.',
      );
    }
    st.model ||= config.models[0]?.id ?? '';
  }
  return config;
}

/** Notes for an external server: the `vllm serve` line expected, flags that differ, flags unverified. */
function externalNotes(st: TargetState): string[] {
  const check = compareFlags(st.flags, reported(st.config));
  const note = unverifiedNote(check);
  return [
    `This lesson expects vLLM started as: ${serveLine(st.model, st.flags, st.config.engine)}. LoadLab did not start this server, so it cannot ` +
      'apply flags; restart it yourself, or set LOADLAB_VLLM_MODEL to let LoadLab launch it.',
    ...check.mismatches.map(
      (m) => `${m[0].toUpperCase()}${m.slice(1)}: measure() will refuse this server until it is restarted.`,
    ),
    ...(note ? [note] : []),
  ];
}

/** `LessonTarget.restart`: check an external server's flags, or start a new process with `next`. */
async function restartTarget(st: TargetState, next: ServerFlags): Promise<void> {
  if (st.mode === 'external') {
    // Stop "Run All" here rather than measure an unchanged server under the new flags' label.
    // The flags are accepted only once the server shows them (or, for hidden ones, was restarted).
    const now = await describe(st);
    assertFlagsMatch(next, reported(now), st.model);
    assertRestartedForHidden(st.flags, next, reported(now), st.config.startedAtS, st.model);
    st.config = now;
    st.flags = { ...next };
    st.notes.length = 0;
    st.notes.push(...externalNotes(st));
    return;
  }
  st.flags = { ...next };
  st.notes.length = 0;
  await st.running?.stop();
  st.running = await startFor(st.mode, st.flags, st.opts, st.env);
  ({ baseUrl: st.baseUrl, model: st.model } = st.running);
  st.config = await describe(st);
}

/**
 * Open the server a lesson measures (see the module comment for how it is chosen).
 * Throws, naming the fix, when an external `LOADLAB_BASE_URL` does not answer.
 */
export async function openTarget(opts: OpenTargetOptions = {}): Promise<LessonTarget> {
  const env = opts.env ?? process.env;
  const mode: TargetMode = env.LOADLAB_BASE_URL ? 'external' : env.LOADLAB_VLLM_MODEL ? 'launched' : 'sim';
  const flags: ServerFlags = { ...(opts.flags ?? {}) };
  let running: Running | undefined;
  let baseUrl = '';
  let model = '';
  if (mode === 'external') {
    baseUrl = serverRoot(env.LOADLAB_BASE_URL as string);
    model = env.LOADLAB_MODEL ?? '';
  } else {
    running = await startFor(mode, flags, opts, env);
    ({ baseUrl, model } = running);
  }
  const started = { mode, opts, env, flags, running, baseUrl, model, notes: [] as string[] };
  const st: TargetState = Object.assign(started, { config: await describe(started) });
  if (mode === 'external') {
    const found = externalNotes(st);
    if (Object.keys(flags).length || found.length > 1) st.notes.push(...found);
  }
  const profile = opts.profile ?? env.LOADLAB_SIM_PROFILE;
  if (mode !== 'sim' && profile) st.notes.push(`Profile ${profile} is for the simulator only; ignored for this real server.`);

  return {
    mode,
    get baseUrl() {
      return st.baseUrl;
    },
    get model() {
      return st.model;
    },
    get simulated() {
      return st.config.simulated;
    },
    get flags() {
      return st.flags;
    },
    get config() {
      return st.config;
    },
    notes: st.notes,
    restart: (next: ServerFlags) => restartTarget(st, next),
    checkFits(requests: readonly RequestSpec[]) {
      return checkLessonFits(
        { baseUrl: st.baseUrl, model: st.model, flags: st.flags },
        requests,
        env.LOADLAB_API_KEY ? { apiKey: env.LOADLAB_API_KEY } : {},
      );
    },
    async stop() {
      await st.running?.stop();
    },
    logTail(n?: number) {
      return st.running?.logTail(n) ?? '';
    },
  };
}
