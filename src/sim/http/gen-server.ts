/**
 * What one generation needs from the simulated server (engine, tokenizer, metrics, clock),
 * who the request is, and how long the "model" would answer before EOS.
 */
import { randNormal, type Rng } from '../../rng';
import type { SimMetrics } from './metrics';
import type { QueueTimes } from '../engine/queue-time';
import type { SimTokenizer } from './tokens';
import type { SimEngine } from '../engine/types';
import type { WireShape } from './wire-shapes';
import type { SendLog } from './send-log';

/** Median of the natural (EOS) output length when `ignore_eos` is off, tokens. */
export const NATURAL_LENGTH_MEDIAN = 200;
/** Log-space spread of the natural output length (lognormal σ). */
export const NATURAL_LENGTH_SIGMA = 0.7;

/** Draws how long the "model" would answer before EOS: lognormal, median 200 tokens, ≥ 1. */
export function drawNaturalLength(rng: Rng): number {
  return Math.max(1, Math.round(NATURAL_LENGTH_MEDIAN * Math.exp(NATURAL_LENGTH_SIGMA * randNormal(rng))));
}

/** Shared server state a generation needs. */
export interface GenServer {
  engine: SimEngine;
  tok: SimTokenizer;
  metrics: SimMetrics;
  /** Queue-time tracker (fed by the engine's steps). */
  queue?: QueueTimes;
  /** Served model name (`model` in responses). */
  model: string;
  /** Monotonic ms clock, the engine's. */
  now: () => number;
  /** Per-request seed source (seeded once per server: same order of requests → same outputs). */
  rng: Rng;
  /** Non-engine latency per request (HTTP, tokenize, detokenize): the engine sees a request no earlier than arrival + this, ms. */
  apiOverheadMs: number;
  /** `--enable-prompt-tokens-details`. */
  promptTokensDetails: boolean;
  /** `--stream-interval`: tokens gathered per streamed output after the first (integer ≥ 1; 1 = every step). */
  streamInterval: number;
  /** When each stream's token chunks were written (`POST /loadlab/send-log`); absent: not kept. */
  sendLog?: SendLog;
}

/** Identity of one HTTP request. */
export interface GenIdentity {
  /** Response id, e.g. `chatcmpl-<x-request-id>`. */
  id: string;
  /** Unique engine request id. */
  engineId: string;
  /** HTTP arrival on the server's clock, ms. */
  arrivalMs: number;
  /** The request's `x-request-id` header, when it had one (the send log's key). */
  requestId?: string;
  /** The emulated generation's chunk and response fields (wire-shapes.ts); default the newest. */
  wire?: WireShape;
}
