/**
 * The measurement flags of `loadlab run`, which `vllm bench serve` does not have:
 * - `--duration S`: a stop rule. Issuing stops S seconds after the measured load starts (warm-up
 *   not counted); requests issued before then run to completion within `--timeout-s` and are all
 *   recorded, so nothing measured is lost and no latency is cut short (guidellm's `--max-seconds`
 *   instead stops processing too: src/guidellm/scheduler/constraints/request.py
 *   `MaxDurationConstraint`). `--num-prompts` becomes an upper bound; see `durationCount`.
 * - `--metrics-interval MS`: scrape the server's `/metrics` every MS ms (jittered, seeded) into
 *   `metrics.jsonl`.
 * - `--ci`: seeded bootstrap intervals (95 %) for the printed percentiles.
 * - `--workers N`: send the load from N worker threads (src/runner/worker-split.ts), for loads beyond one core.
 * - `--stamp turn|callback`: how token chunks are stamped (src/client/chunk-stamp.ts); `callback` stamps each
 *   message as `vllm bench serve` does.
 */

import type { LoadShape } from '../schedule/shapes';
import { MAX_WORKERS } from '../runner/worker-split';
import { CHUNK_STAMPS, type ChunkStamp } from '../client/chunk-stamp';
import { UsageError } from './usage-error';

/** parseArgs specs of these flags. */
export const MEASURE_OPTIONS = {
  duration: { type: 'string' },
  'metrics-interval': { type: 'string' },
  ci: { type: 'boolean' },
  workers: { type: 'string' },
  stamp: { type: 'string' },
} as const;

/** With `--duration` and no `--num-prompts`, a closed loop sends at most this many requests. */
export const DURATION_MAX_PROMPTS = 10_000;

/** Fastest `/metrics` scrape period `--metrics-interval` accepts, ms (a scrape itself takes ms). */
export const MIN_METRICS_INTERVAL_MS = 50;

/** Longest duration a run accepts, s (Node's longest timer, about 24 days, as `--timeout-s`). */
const MAX_DURATION_S = Math.floor((2 ** 31 - 1) / 1000);

type Flags = Partial<Record<keyof typeof MEASURE_OPTIONS, string | boolean>>;

/** `--duration` in s, or undefined. */
export function durationFlag(v: Flags): number | undefined {
  const raw = v.duration as string | undefined;
  if (raw === undefined) return undefined;
  const s = Number(raw);
  if (raw.trim() === '' || !(s > 0) || s > MAX_DURATION_S) {
    throw new UsageError(`--duration must be seconds > 0 (at most ${MAX_DURATION_S}), got '${raw}', e.g. --duration 60`);
  }
  return s;
}

/**
 * How many requests a run with `--duration S` may send. `--num-prompts N` given: N, an upper bound
 * (the run ends at whichever comes first). Left out: ceil(rate × S) for a finite rate,
 * DURATION_MAX_PROMPTS for a closed loop; a dataset needs N (it is drawn up front). A burst
 * (rate inf, no cap) sends everything at t=0, so a duration cannot stop it: refused.
 */
export function durationCount(shape: LoadShape, durationS: number, numPrompts: number | undefined, dataset: boolean): number {
  if (shape.kind === 'burst') {
    throw new UsageError(
      '--duration needs --max-concurrency C (a closed loop) or a finite --request-rate R: with rate inf every request is sent at t=0',
    );
  }
  if (numPrompts !== undefined) return numPrompts;
  if (dataset) throw new UsageError('--duration with --dataset-name needs --num-prompts N (the dataset is drawn up front)');
  if (shape.kind === 'open') return Math.max(1, Math.ceil(shape.rate * durationS));
  return DURATION_MAX_PROMPTS;
}

/** `--metrics-interval` in ms, or undefined. */
export function metricsIntervalFlag(v: Flags): number | undefined {
  const raw = v['metrics-interval'] as string | undefined;
  if (raw === undefined) return undefined;
  const ms = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(ms) || ms < MIN_METRICS_INTERVAL_MS) {
    throw new UsageError(`--metrics-interval must be ms ≥ ${MIN_METRICS_INTERVAL_MS}, got '${raw}', e.g. --metrics-interval 250`);
  }
  return ms;
}

/**
 * `--workers N` (1..MAX_WORKERS), or undefined. Refused with `--multi-turn` (turns wait for answers),
 * `--duration` (the stop rule is not shared across threads) and when a closed loop's or an open loop's cap leaves a worker without a slot.
 */
export function workersFlag(v: Flags, shape: LoadShape | undefined, durationS: number | undefined): number | undefined {
  const raw = v.workers as string | undefined;
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(n) || n < 1 || n > MAX_WORKERS) {
    throw new UsageError(`--workers must be an integer from 1 to ${MAX_WORKERS}, got '${raw}', e.g. --workers 2`);
  }
  if (n > 1 && (v as Record<string, unknown>)['multi-turn'] === true) {
    throw new UsageError(
      `--workers ${n} does not apply with --multi-turn: a conversation's turns wait for each other's answers and are not split across threads; drop --workers`,
    );
  }
  if (n > 1 && durationS !== undefined) {
    throw new UsageError(
      `--workers ${n} does not apply with --duration: the stop rule is not shared across threads; give --num-prompts N instead`,
    );
  }
  const slots = shape?.kind === 'closed' ? shape.concurrency : shape?.kind === 'open' ? shape.maxConcurrency : undefined;
  if (slots !== undefined && slots < n) {
    throw new UsageError(
      `--workers ${n} is more than --max-concurrency ${slots}: a worker would have no slot; use --workers ≤ ${slots}`,
    );
  }
  return n;
}

/** `--metrics-interval`, `--workers` and `--stamp`, each only when given. */
export function measureFlags(
  v: Flags,
  shape: LoadShape | undefined,
  durationS: number | undefined,
): { metricsIntervalMs?: number; workers?: number; stamp?: ChunkStamp } {
  const metricsIntervalMs = metricsIntervalFlag(v);
  const workers = workersFlag(v, shape, durationS);
  const stamp = v.stamp as string | undefined;
  if (stamp !== undefined && !(CHUNK_STAMPS as readonly string[]).includes(stamp)) {
    throw new UsageError(
      `--stamp must be turn (one stamp per event-loop turn, the default) or callback (one per message, as vllm bench serve), got '${stamp}'`,
    );
  }
  return {
    ...(metricsIntervalMs !== undefined ? { metricsIntervalMs } : {}),
    ...(workers !== undefined ? { workers } : {}),
    ...(stamp !== undefined ? { stamp: stamp as ChunkStamp } : {}),
  };
}
