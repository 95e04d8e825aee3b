/**
 * Load shapes: HOW requests are sent (the workload says WHAT is sent).
 *
 * - `closed`: a closed loop of `concurrency` users. Each sends, waits for the whole answer,
 *   then sends again, so exactly `concurrency` requests are in flight until the tail.
 * - `burst`: every request at t = 0 (vLLM bench's default `--request-rate inf`).
 * - `open`: requests arrive on a schedule that does not wait for answers (vLLM bench's
 *   `--request-rate`, `--burstiness`, `--seed`, `--max-concurrency`).
 * - `timeline`: a scripted schedule, one intended send time per request.
 * - `sessions`: multi-turn conversations, each turn sent after the previous answer (./sessions.ts).
 */

import type { RequestSpec } from '../types';
import { checkSessionsShape, type SessionsShape } from './sessions';

/** Closed loop: `concurrency` requests in flight; a new one is sent when one finishes. */
export interface ClosedShape {
  kind: 'closed';
  /** Requests in flight, an integer ≥ 1. */
  concurrency: number;
}

/** Every request sent at t = 0. */
export interface BurstShape {
  kind: 'burst';
  /** Number of requests; the run's `requests` wins when both are given. */
  size?: number;
}

/** Open loop: arrivals on a (seeded) schedule, independent of how fast answers come back. */
export interface OpenShape {
  kind: 'open';
  /** Mean arrival rate in requests/s (> 0; `Infinity` = all at t = 0, as vLLM). */
  rate: number;
  /**
   * Gamma shape of the gaps, as vLLM's `--burstiness`. Default 1 (Poisson). < 1 is burstier,
   * `Infinity` gives constant gaps of 1/rate.
   */
  burstiness?: number;
  /** Seed of the arrival schedule; default 0 (vLLM's `--seed` default). */
  seed?: number;
  /**
   * Cap on requests in flight (vLLM's `--max-concurrency`): late arrivals wait in the client,
   * and that wait shows as `queueMs`. Default: no cap.
   */
  maxConcurrency?: number;
}

/** One scripted request: send `request` at `atMs` after the schedule starts. */
export interface TimelineEntry {
  atMs: number;
  request: RequestSpec;
}

/** A scripted schedule: request i is sent `atMs[i]` ms after the schedule starts. */
export interface TimelineShape {
  kind: 'timeline';
  /** Intended send offsets, ms, one per request (any order; each ≥ 0). */
  atMs: number[];
  /** The requests themselves, when the timeline was built from `{atMs, request}` entries. */
  requests?: RequestSpec[];
}

/** How requests are sent. Build one with `closedLoop`, `burst`, `openLoop`, `timeline` or `sessions`. */
export type LoadShape = ClosedShape | BurstShape | OpenShape | TimelineShape | SessionsShape;

function isIntAtLeast1(x: unknown): x is number {
  return typeof x === 'number' && Number.isInteger(x) && x >= 1;
}

/**
 * Throw a TypeError naming the fix when `shape` is not a valid load shape.
 * Returns the same shape, so it can wrap a literal.
 */
export function validateShape<S extends LoadShape>(shape: S): S {
  if (shape === null || typeof shape !== 'object') {
    throw new TypeError(
      `shape must be a load shape such as closedLoop(8), burst(), openLoop(4) or timeline([...]), got ${String(shape)}`,
    );
  }
  const s = shape as LoadShape;
  switch (s.kind) {
    case 'closed':
      if (!isIntAtLeast1(s.concurrency)) {
        throw new TypeError(`concurrency must be an integer ≥ 1, got ${String(s.concurrency)}`);
      }
      return shape;
    case 'burst':
      if (s.size !== undefined && !isIntAtLeast1(s.size)) {
        throw new TypeError(`burst size must be an integer ≥ 1, got ${String(s.size)}`);
      }
      return shape;
    case 'open':
      if (typeof s.rate !== 'number' || !(s.rate > 0)) {
        throw new TypeError(`rate must be a number of requests/s > 0 (Infinity sends all at t = 0), got ${String(s.rate)}`);
      }
      if (s.burstiness !== undefined && (typeof s.burstiness !== 'number' || !(s.burstiness > 0))) {
        throw new TypeError(
          `burstiness must be > 0 (1 = Poisson, < 1 burstier, Infinity = constant gaps), got ${String(s.burstiness)}`,
        );
      }
      if (s.seed !== undefined && !Number.isInteger(s.seed)) {
        throw new TypeError(`seed must be an integer, got ${String(s.seed)}`);
      }
      if (s.maxConcurrency !== undefined && !isIntAtLeast1(s.maxConcurrency)) {
        throw new TypeError(`maxConcurrency must be an integer ≥ 1 (or left out for no cap), got ${String(s.maxConcurrency)}`);
      }
      return shape;
    case 'timeline': {
      if (!Array.isArray(s.atMs) || s.atMs.length === 0) {
        throw new TypeError('timeline needs at least one entry: timeline([{ atMs: 0, request }, ...])');
      }
      const bad = s.atMs.findIndex((t) => typeof t !== 'number' || !Number.isFinite(t) || t < 0);
      if (bad >= 0) {
        throw new TypeError(`timeline atMs must be finite ms ≥ 0, got ${String(s.atMs[bad])} at entry ${bad}`);
      }
      if (s.requests !== undefined && s.requests.length !== s.atMs.length) {
        throw new TypeError(`timeline has ${s.atMs.length} times but ${s.requests.length} requests; give one request per time`);
      }
      return shape;
    }
    case 'sessions':
      checkSessionsShape(s);
      return shape;
    default:
      throw new TypeError(
        `unknown load shape kind ${JSON.stringify((s as { kind?: unknown }).kind)}; use 'closed', 'burst', 'open', 'timeline' or 'sessions'`,
      );
  }
}

/** Closed loop of `concurrency` users (the course's Promise pool). */
export function closedLoop(concurrency: number): ClosedShape {
  return validateShape({ kind: 'closed', concurrency });
}

/** All requests at t = 0 (the course's burst of 128). `size` defaults to the run's `requests`. */
export function burst(size?: number): BurstShape {
  return validateShape(size === undefined ? { kind: 'burst' } : { kind: 'burst', size });
}

/**
 * Open loop at `rate` requests/s. Defaults: burstiness 1 (Poisson), seed 0, no concurrency cap.
 * `openLoop(5, { burstiness: Infinity })` sends exactly every 200 ms.
 */
export function openLoop(rate: number, opts: { burstiness?: number; seed?: number; maxConcurrency?: number } = {}): OpenShape {
  const shape: OpenShape = { kind: 'open', rate };
  if (opts.burstiness !== undefined) shape.burstiness = opts.burstiness;
  if (opts.seed !== undefined) shape.seed = opts.seed;
  if (opts.maxConcurrency !== undefined) shape.maxConcurrency = opts.maxConcurrency;
  return validateShape(shape);
}

/**
 * A scripted timeline, from send offsets (ms) or from `{atMs, request}` entries.
 * With entries, the shape carries the requests and the run needs no separate workload.
 */
export function timeline(entries: number[] | TimelineEntry[]): TimelineShape {
  if (!Array.isArray(entries)) {
    throw new TypeError('timeline takes an array: timeline([0, 50, 50]) or timeline([{ atMs: 0, request }])');
  }
  if (entries.length > 0 && typeof entries[0] === 'object') {
    const es = entries as TimelineEntry[];
    return validateShape({ kind: 'timeline', atMs: es.map((e) => e.atMs), requests: es.map((e) => e.request) });
  }
  return validateShape({ kind: 'timeline', atMs: [...(entries as number[])] });
}

/** A short human label, e.g. `closed c=8`, `open 4/s γ=1 seed 0`, `burst`, `timeline 21`. */
export function describeShape(shape: LoadShape): string {
  switch (shape.kind) {
    case 'closed':
      return `closed c=${shape.concurrency}`;
    case 'burst':
      return shape.size === undefined ? 'burst' : `burst ${shape.size}`;
    case 'open': {
      const cap = shape.maxConcurrency === undefined ? '' : ` max ${shape.maxConcurrency}`;
      return `open ${shape.rate}/s burstiness ${shape.burstiness ?? 1} seed ${shape.seed ?? 0}${cap}`;
    }
    case 'timeline':
      return `timeline ${shape.atMs.length}`;
    case 'sessions':
      return `sessions ${shape.conversations.length} conversations, max ${shape.maxConcurrency} live, think ${shape.thinkTimeMs ?? 0} ms`;
  }
}
