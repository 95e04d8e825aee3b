/**
 * Cumulative counters (tokens, preemptions, prefix-cache lookups) turned into per-interval
 * amounts and rates, for plotting a timeline of `MetricsSample`s. Pure functions.
 *
 * Definitions. For consecutive samples a, b that both have the field:
 * `delta = b − a`, over the interval (a.tMs, b.tMs]. A counter that went down means the server
 * restarted and counted again from 0 (a counter reset), so then `delta = b` and `reset = true`,
 * as PromQL's `increase()` assumes. `perSec = delta / ((b.tMs − a.tMs)/1000)`.
 */
import type { MetricsSample } from '../types';

/** The cumulative (`…Total`) fields of a `MetricsSample`. */
export type CounterField =
  | 'preemptionsTotal'
  | 'promptTokensTotal'
  | 'generationTokensTotal'
  | 'prefixQueriesTotal'
  | 'prefixHitsTotal';

/** What a counter did during one scrape interval. */
export interface CounterDelta {
  /** Interval start and end, ms on the run clock. */
  startMs: number;
  endMs: number;
  /** Increase during the interval (≥ 0). */
  delta: number;
  /** The counter went down: the server restarted, `delta` counts from 0. */
  reset: boolean;
}

/** A counter's rate during one scrape interval. */
export interface CounterRate {
  startMs: number;
  endMs: number;
  /** Interval midpoint, ms: where to plot the point. */
  tMs: number;
  /** Increase per second of the interval. */
  perSec: number;
}

/**
 * Per-interval increases of `field`, one per pair of consecutive samples that both have it
 * (samples without it are skipped, so an interval may span a failed scrape). Samples must be
 * in time order; pairs with no time between them are dropped.
 */
export function counterDeltas(samples: readonly MetricsSample[], field: CounterField): CounterDelta[] {
  const out: CounterDelta[] = [];
  let prev: MetricsSample | undefined;
  for (const s of samples) {
    const v = s[field];
    if (v === undefined || !Number.isFinite(v)) continue;
    if (prev !== undefined && s.tMs > prev.tMs) {
      const before = prev[field]!;
      const reset = v < before;
      out.push({ startMs: prev.tMs, endMs: s.tMs, delta: reset ? v : v - before, reset });
    }
    if (prev === undefined || s.tMs > prev.tMs) prev = s;
  }
  return out;
}

/** Per-interval rates of `field` (per second), from `counterDeltas`. */
export function counterRates(samples: readonly MetricsSample[], field: CounterField): CounterRate[] {
  return counterDeltas(samples, field).map((d) => ({
    startMs: d.startMs,
    endMs: d.endMs,
    tMs: (d.startMs + d.endMs) / 2,
    perSec: d.delta / ((d.endMs - d.startMs) / 1000),
  }));
}

/** Increase of `field` from the first to the last sample that has it, resets included (0 with < 2 samples). */
export function counterIncrease(samples: readonly MetricsSample[], field: CounterField): number {
  return counterDeltas(samples, field).reduce((a, d) => a + d.delta, 0);
}

/**
 * Prefix-cache hit rate per interval: Δhits/Δqueries (tokens), NaN for an interval with no
 * lookups. Intervals are those where both counters are present.
 */
export function prefixHitRates(samples: readonly MetricsSample[]): { startMs: number; endMs: number; hitRate: number }[] {
  const both = samples.filter((s) => s.prefixHitsTotal !== undefined && s.prefixQueriesTotal !== undefined);
  const hits = counterDeltas(both, 'prefixHitsTotal');
  const queries = counterDeltas(both, 'prefixQueriesTotal');
  return queries.map((q, i) => ({
    startMs: q.startMs,
    endMs: q.endMs,
    hitRate: q.delta > 0 ? hits[i].delta / q.delta : NaN,
  }));
}
