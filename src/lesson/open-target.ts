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
import { assertFlagsMatch, assertRestartedForHidden, compareFlags, serveLine, unverifiedNote, type ReportedConfig } from '../vllm/flag-check';
import { launchVllm } from '../vllm/launcher';

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
  };
}

async function startFor(mode: TargetMode, flags: ServerFlags, opts: OpenTargetOptions, env: Record<string, string | undefined>): Promise<Running> {
  if (mode === 'sim') return startSim({ flags, ...(opts.logFile ? { logFile: opts.logFile } : {}) });
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

/**
 * Open the server a lesson measures (see the module comment for how it is chosen).
 * Throws, naming the fix, when an external `LOADLAB_BASE_URL` does not answer.
 */
export async function openTarget(opts: OpenTargetOptions = {}): Promise<LessonTarget> {
  const env = opts.env ?? process.env;
  const mode: TargetMode = env.LOADLAB_BASE_URL ? 'external' : env.LOADLAB_VLLM_MODEL ? 'launched' : 'sim';
  let flags: ServerFlags = { ...(opts.flags ?? {}) };
  let running: Running | undefined;
  let baseUrl: string;
  let model: string;
  const notes: string[] = [];

  if (mode === 'external') {
    baseUrl = (env.LOADLAB_BASE_URL as string).replace(/\/+$/, '').replace(/\/v1$/, '');
    model = env.LOADLAB_MODEL ?? '';
  } else {
    running = await startFor(mode, flags, opts, env);
    ({ baseUrl, model } = running);
  }

  const describe = async (): Promise<EffectiveConfig> => {
    const config = await recordEffectiveConfig(baseUrl, { apiKey: env.LOADLAB_API_KEY ?? env.OPENAI_API_KEY });
    if (mode === 'external') {
      if (!config.reachable) {
        throw new Error(
          `LOADLAB_BASE_URL=${baseUrl} does not answer. Start vLLM first (vllm serve <model> --port 8000), ` +
            'or unset LOADLAB_BASE_URL to use the simulator.',
        );
      }
      model ||= config.models[0]?.id ?? '';
    }
    return config;
  };
  let config = await describe();
  const externalNotes = (): string[] => {
    const check = compareFlags(flags, reported(config));
    const note = unverifiedNote(check);
    return [
      `This lesson expects vLLM started as: ${serveLine(model, flags)}. LoadLab did not start this server, so it cannot ` +
        'apply flags; restart it yourself, or set LOADLAB_VLLM_MODEL to let LoadLab launch it.',
      ...check.mismatches.map((m) => `${m[0].toUpperCase()}${m.slice(1)}: measure() will refuse this server until it is restarted.`),
      ...(note ? [note] : []),
    ];
  };
  if (mode === 'external') {
    const found = externalNotes();
    if (Object.keys(flags).length || found.length > 1) notes.push(...found);
  }

  return {
    mode,
    get baseUrl() {
      return baseUrl;
    },
    get model() {
      return model;
    },
    get simulated() {
      return config.simulated;
    },
    get flags() {
      return flags;
    },
    get config() {
      return config;
    },
    notes,
    async restart(next: ServerFlags) {
      if (mode === 'external') {
        // Stop "Run All" here rather than measure an unchanged server under the new flags' label.
        // The flags are accepted only once the server shows them (or, for hidden ones, was restarted).
        const now = await describe();
        assertFlagsMatch(next, reported(now), model);
        assertRestartedForHidden(flags, next, reported(now), config.startedAtS, model);
        config = now;
        flags = { ...next };
        notes.length = 0;
        notes.push(...externalNotes());
        return;
      }
      flags = { ...next };
      notes.length = 0;
      await running?.stop();
      running = await startFor(mode, flags, opts, env);
      ({ baseUrl, model } = running);
      config = await describe();
    },
    checkFits(requests: readonly RequestSpec[]) {
      return checkLessonFits({ baseUrl, model, flags }, requests, env.LOADLAB_API_KEY ? { apiKey: env.LOADLAB_API_KEY } : {});
    },
    async stop() {
      await running?.stop();
    },
    logTail(n?: number) {
      return running?.logTail(n) ?? '';
    },
  };
}
