/**
 * Does a server we did not start run with the flags a lesson asked for? Compares requested
 * `vllm serve` flags with what the server itself reports, so an external vLLM that was not
 * restarted is caught before any load is sent, instead of being measured under the wrong label.
 *
 * What a server shows about its flags (nothing else is visible over HTTP):
 * - `vllm:cache_config_info` labels (`vllm/v1/metrics/loggers.py`: every `CacheConfig` field):
 *   `gpu_memory_utilization`, `enable_prefix_caching`, `block_size`, `num_gpu_blocks_override`,
 *   `kv_cache_memory_bytes`;
 * - `GET /v1/models` → `max_model_len` (`vllm/entrypoints/openai/serving_models.py`) and the
 *   served names (`--served-model-name`).
 * Scheduler flags (`--max-num-seqs`, `--max-num-batched-tokens`, `--enable-chunked-prefill`,
 * `--long-prefill-token-threshold`, `--scheduling-policy`, `--scheduler-reserve-full-isl`, `--performance-mode`)
 * are not exposed by vLLM, so they are reported as unverified; so is `--max-model-len auto`.
 *
 * Flags a lesson does not request are expected at vLLM's default only where that default does not
 * depend on the GPU or the version: prefix caching on (`--enable-prefix-caching` defaults to None,
 * resolved to `model_config.is_prefix_caching_supported`, in `vllm/engine/arg_utils.py`) and no
 * `num_gpu_blocks_override`. `gpu_memory_utilization` (0.9 in 0.19 → 0.92 from 2026-04, `vllm/config/cache.py`)
 * and `block_size` (some attention backends force another) are checked only when requested.
 * On a V0 server (`ReportedConfig.engine`) prefix caching defaults to off instead (0.6.x: `enable_prefix_caching`
 * None → `bool(envs.VLLM_USE_V1)` in `EngineArgs.__post_init__`, `vllm/engine/arg_utils.py`), and V0's
 * `--swap-space` / `--preemption-mode` are real flags (`vllm/core/scheduler.py` `_preempt`), hidden from HTTP.
 */
import type { ServerFlags } from './flag-types';
import { SERVE_FLAGS, toServeArgs } from './flags';

/** What a server reports about itself (a subset of `EffectiveConfig` / `TargetProbe`). */
export interface ReportedConfig {
  /** Labels of `vllm:cache_config_info`. */
  cacheConfig?: Record<string, string>;
  /** `max_model_len` of the served model, tokens. */
  maxModelLen?: number;
  /** Served model ids. */
  models?: string[];
  /** The server says it is LoadLab's simulator (which alone knows the simulator-only flags). */
  simulated?: boolean;
  /** When the serving process started, epoch s (`EffectiveConfig.startedAtS`): tells a restart. */
  startedAtS?: number;
  /** vLLM's engine (`EffectiveConfig.engine`); `V0` changes the expected defaults and allows V0's own flags. */
  engine?: 'V0' | 'V1' | 'unknown';
}

/** Result of `compareFlags`. */
export interface FlagCheck {
  /** One sentence per flag whose reported value differs from the requested one. */
  mismatches: string[];
  /** `vllm serve` arguments the server cannot show, e.g. `--max-num-seqs 32`. */
  unverified: string[];
  /** Flags whose reported value matched, e.g. `enable_prefix_caching=False`. */
  verified: string[];
}

/** Flags whose value `vllm:cache_config_info` shows, with their label. */
const CACHE_LABELS: Partial<Record<keyof ServerFlags, string>> = {
  gpuMemoryUtilization: 'gpu_memory_utilization',
  enablePrefixCaching: 'enable_prefix_caching',
  blockSize: 'block_size',
  numGpuBlocksOverride: 'num_gpu_blocks_override',
  kvCacheMemoryBytes: 'kv_cache_memory_bytes',
};

/** vLLM's value of a flag a lesson leaves unset, where it is fixed (see the module comment); V0 differs. */
function fixedDefaults(engine: ReportedConfig['engine']): Partial<Record<keyof ServerFlags, unknown>> {
  return { enablePrefixCaching: engine !== 'V0', numGpuBlocksOverride: null };
}

/** `vllm-v0` on a V0 server (keeps `--swap-space`, `--preemption-mode`), else `vllm`. */
function serveTarget(engine: ReportedConfig['engine']): 'vllm' | 'vllm-v0' {
  return engine === 'V0' ? 'vllm-v0' : 'vllm';
}

function asLabel(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return String(v);
}

function sameValue(seen: string, want: string): boolean {
  const a = Number(seen);
  const b = Number(want);
  return seen.trim() !== '' && want.trim() !== '' && Number.isFinite(a) && Number.isFinite(b) ? a === b : seen === want;
}

function argsOf(key: keyof ServerFlags, value: unknown, engine?: ReportedConfig['engine']): string {
  return toServeArgs({ [key]: value } as ServerFlags, { target: serveTarget(engine) }).join(' ') || String(key);
}

/**
 * Compare requested flags with what the server reports. Pure; never throws.
 * A simulator-only flag (e.g. `preemptionMode`) is a mismatch on any other server, and unverified
 * on the simulator; one vLLM V0 honours (`swapSpace`, `preemptionMode`) is unverified on a V0 server too.
 */
export function compareFlags(flags: ServerFlags, seen: ReportedConfig): FlagCheck {
  const out: FlagCheck = { mismatches: [], unverified: [], verified: [] };
  const wanted = new Map<keyof ServerFlags, unknown>();
  for (const [k, v] of Object.entries(fixedDefaults(seen.engine)) as Array<[keyof ServerFlags, unknown]>) wanted.set(k, v);
  for (const [k, v] of Object.entries(flags) as Array<[keyof ServerFlags, unknown]>) if (v !== undefined) wanted.set(k, v);
  for (const [key, value] of wanted) {
    const requested = Object.hasOwn(flags, key) && flags[key] !== undefined;
    let seenValue: string | undefined;
    let label: string = key;
    if (key === 'maxModelLen') {
      label = 'max_model_len';
      // -1 (`auto`) becomes whatever fits the server's KV memory: no reported value can contradict it.
      seenValue = seen.maxModelLen !== undefined && value !== -1 ? String(seen.maxModelLen) : undefined;
    } else if (key === 'servedModelName') {
      label = 'served model name';
      if (seen.models?.length) seenValue = seen.models.includes(String(value)) ? String(value) : seen.models.join(', ');
    } else if (CACHE_LABELS[key]) {
      label = CACHE_LABELS[key] as string;
      seenValue = seen.cacheConfig?.[label];
    }
    const want = asLabel(value);
    const spec = SERVE_FLAGS.find((f) => f.key === key);
    const simOnly = spec?.vllm === false && !(spec.v0 && seen.engine === 'V0');
    if (simOnly && !seen.simulated) {
      out.mismatches.push(
        spec?.v0
          ? `${String(key)}=${want} exists only in LoadLab's simulator and in vLLM V0 (this server's engine: ${seen.engine ?? 'unknown'}; V1 preempts by recompute only, vllm/v1/core/sched/scheduler.py), so this point cannot be measured on this server; skip it`
          : `${String(key)}=${want} exists only in LoadLab's simulator (vLLM has no such flag), so this point cannot be measured on this server; skip it`,
      );
    } else if (seenValue === undefined) {
      if (requested) out.unverified.push(argsOf(key, value, seen.engine));
    } else if (sameValue(seenValue, want)) {
      out.verified.push(`${label}=${seenValue}`);
    } else {
      const why = requested ? 'this lesson asks for' : "this lesson expects vLLM's default";
      out.mismatches.push(`the server runs with ${label}=${seenValue}, but ${why} ${want}`);
    }
  }
  return out;
}

/**
 * The `vllm serve` line for `flags` (vLLM flags only), e.g. `vllm serve <model> --max-num-seqs 32`.
 * With `engine` `V0` it keeps V0's `--swap-space` / `--preemption-mode`.
 */
export function serveLine(model: string, flags: ServerFlags, engine?: ReportedConfig['engine']): string {
  return `vllm serve ${model || '<model>'} ${toServeArgs(flags, { target: serveTarget(engine) }).join(' ')}`.trimEnd();
}

/**
 * Throw, with the `vllm serve` line to restart with, when the server reports a flag value other
 * than the requested one; else return the check (its `unverified` list names what could not be seen).
 * @param model shown in the `vllm serve` line (the served name or path).
 */
export function assertFlagsMatch(flags: ServerFlags, seen: ReportedConfig, model: string): FlagCheck {
  const check = compareFlags(flags, seen);
  if (check.mismatches.length) {
    throw new Error(
      `The server was not restarted with this lesson's flags: ${check.mismatches.join('; ')}. ` +
        `LoadLab did not start it, so it cannot change them and will not measure it. Stop vLLM and start it as:\n  ${serveLine(model, flags, seen.engine)}\n` +
        'then run this cell again (or set LOADLAB_VLLM_MODEL instead of LOADLAB_BASE_URL to let LoadLab restart vLLM itself).',
    );
  }
  return check;
}

/** The note for flags that cannot be verified, or '' when there are none. */
export function unverifiedNote(check: FlagCheck): string {
  return check.unverified.length
    ? `Not visible on the server (/metrics, /v1/models), so not verified: ${check.unverified.join(', ')}. ` +
        'The numbers are labelled with these flags on trust: make sure vLLM was started with them.'
    : '';
}

/**
 * Throw when flags the server cannot show differ from the last accepted ones (`prev`) while the
 * server is still the same process (its start time `startedAtS` did not change): it was not
 * restarted, so it still runs the old flags. Where the start time is unknown (no `/metrics`),
 * nothing is thrown and the flags stay named as unverified.
 * @param before the server's `startedAtS` when `prev` was accepted.
 */
export function assertRestartedForHidden(
  prev: ServerFlags,
  next: ServerFlags,
  seen: ReportedConfig,
  before: number | undefined,
  model: string,
): void {
  const hidden = (f: ServerFlags) => compareFlags(f, seen).unverified.sort().join(' ');
  const was = hidden(prev);
  const now = hidden(next);
  if (was === now || before === undefined || seen.startedAtS === undefined || seen.startedAtS !== before) return;
  throw new Error(
    `This lesson now needs ${now || "vLLM's defaults for"} flags the server cannot show (before: ${was || 'none'}), but it is the ` +
      `same server process as before (started ${new Date(before * 1000).toISOString()}), so it still runs the old ones. ` +
      `Stop vLLM and start it as:\n  ${serveLine(model, next, seen.engine)}\nthen run this cell again. (LoadLab can only tell a restart ` +
      'by the process start time in /metrics: if vLLM already ran with these flags, restart it anyway.)',
  );
}
