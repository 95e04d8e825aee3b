/**
 * The server a lesson measures, chosen from the environment, so the same notebook runs on a
 * laptop and on a GPU box:
 * - `LOADLAB_BASE_URL` set → an **external** server the user started (real vLLM, usually).
 *   LoadLab cannot change its flags; `restart(flags)` explains which flags to start it with
 *   and checks the ones `/metrics` shows.
 * - `LOADLAB_VLLM_MODEL` set → LoadLab **launches** `vllm serve <model>` itself (the launcher
 *   in `launcher.ts`), and restarts it with new flags when a lesson needs them.
 * - neither → LoadLab's **simulated** vLLM server, a separate process (`startSim`).
 */
import { startSim } from '../sim/start';
import type { ServerFlags } from '../sim/types';
import { recordEffectiveConfig, type EffectiveConfig } from './effective-config';
import { toServeArgs } from './flags';
import { launchVllm } from './launcher';

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
  /** Restart with other flags (a new simulator or vLLM process; for `external`, instructions only). */
  restart(flags: ServerFlags): Promise<void>;
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

/** Flags whose effect `vllm:cache_config_info` shows, with the label that shows it. */
const VISIBLE: Array<[keyof ServerFlags, string]> = [
  ['gpuMemoryUtilization', 'gpu_memory_utilization'],
  ['enablePrefixCaching', 'enable_prefix_caching'],
  ['blockSize', 'block_size'],
  ['numGpuBlocksOverride', 'num_gpu_blocks_override'],
];

/** Compare requested flags with what an external server's `/metrics` shows; one note per finding. */
export function checkVisibleFlags(flags: ServerFlags, cacheConfig: Record<string, string> | undefined): string[] {
  const notes: string[] = [];
  const hidden: string[] = [];
  for (const [key, value] of Object.entries(flags) as Array<[keyof ServerFlags, unknown]>) {
    if (value === undefined) continue;
    const label = VISIBLE.find(([k]) => k === key)?.[1];
    if (!label || !cacheConfig || cacheConfig[label] === undefined) {
      hidden.push(toServeArgs({ [key]: value } as ServerFlags, { target: 'vllm' }).join(' ') || String(key));
      continue;
    }
    const seen = cacheConfig[label];
    const want = typeof value === 'boolean' ? (value ? 'True' : 'False') : String(value);
    if (Number.isFinite(Number(seen)) && Number.isFinite(Number(want)) ? Number(seen) !== Number(want) : seen !== want) {
      notes.push(`The server runs with ${label}=${seen}, but this lesson wants ${want}. Restart vLLM with the flags above.`);
    }
  }
  if (hidden.length) notes.push(`Not visible through /metrics, so not checked: ${hidden.join(', ')}.`);
  return notes;
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
    const args = toServeArgs(flags, { target: 'vllm' });
    return [
      `This lesson expects vLLM started as: vllm serve <model> ${args.join(' ')}`.trimEnd() +
        '. LoadLab did not start this server, so it cannot apply flags; restart it yourself, or set LOADLAB_VLLM_MODEL to let LoadLab launch it.',
      ...checkVisibleFlags(flags, config.cacheConfig),
    ];
  };
  if (mode === 'external' && Object.keys(flags).length) notes.push(...externalNotes());

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
      flags = { ...next };
      notes.length = 0;
      if (mode === 'external') {
        config = await describe();
        notes.push(...externalNotes());
        return;
      }
      await running?.stop();
      running = await startFor(mode, flags, opts, env);
      ({ baseUrl, model } = running);
      config = await describe();
    },
    async stop() {
      await running?.stop();
    },
    logTail(n?: number) {
      return running?.logTail(n) ?? '';
    },
  };
}
