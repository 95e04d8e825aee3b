/**
 * One line of the `loadlab run` report: what the server's `/metrics` said during the run
 * (`--metrics-interval`), from the samples in `metrics.jsonl`. Peaks are the highest scraped value
 * (a peak between two scrapes is not seen); preemptions are the counter's increase over the
 * samples (`counterIncrease`, resets counted). Pure: samples in, text out.
 */

import { counterIncrease } from '../stats/counters';
import type { MetricsSample } from '../types';

function peak(samples: readonly MetricsSample[], field: 'running' | 'waiting' | 'swapped' | 'kvUsage'): number | undefined {
  const xs = samples.map((s) => s[field]).filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return xs.length > 0 ? Math.max(...xs) : undefined;
}

/**
 * `N /metrics samples (simulated server, warm-up included): peak running 8, peak waiting 3,
 * peak KV cache usage 41.0%, preemptions 0`, or undefined without samples. Fields the server did
 * not report are left out, never filled in. `simulated` says whose numbers they are.
 */
export function formatServerLine(samples: readonly MetricsSample[], simulated: boolean): string | undefined {
  if (samples.length === 0) return undefined;
  const parts: string[] = [];
  const running = peak(samples, 'running');
  const waiting = peak(samples, 'waiting');
  const swapped = peak(samples, 'swapped');
  const kv = peak(samples, 'kvUsage');
  if (running !== undefined) parts.push(`peak running ${running}`);
  if (waiting !== undefined) parts.push(`peak waiting ${waiting}`);
  if (swapped !== undefined) parts.push(`peak swapped ${swapped}`);
  if (kv !== undefined) parts.push(`peak KV cache usage ${(kv * 100).toFixed(1)}%`);
  if (samples.filter((s) => s.preemptionsTotal !== undefined).length >= 2) {
    parts.push(`preemptions ${counterIncrease(samples, 'preemptionsTotal')}`);
  }
  const whose = simulated ? 'simulated server' : 'server';
  const what = parts.length > 0 ? parts.join(', ') : 'none of running, waiting, KV usage or preemptions reported';
  return `${samples.length} /metrics samples (${whose}, warm-up included): ${what}`;
}
