/**
 * Bootstrap intervals for values that come in groups, such as the inter-token gaps (ITL) of each
 * request. The gaps of one request are not independent draws: one slow step, one preemption or
 * one prefill stalls every stream in the batch, and a long request gives many gaps. Resampling
 * single gaps then gives an interval that is too narrow. Here the unit of resampling is the
 * group: each iteration draws as many groups as there are, with replacement, and takes the
 * percentile of all the gaps of the groups drawn (a cluster bootstrap). Groups without values
 * are left out (a 1-token answer has no gap).
 *
 * Cost trick, as in bootstrap.ts: every value is sorted once with its group's index, and a resample
 * is fully described by how many times each group was drawn, so its order statistics are found by
 * walking the sorted values with those counts as weights. One iteration costs G draws plus one
 * O(n) pass over all n values.
 */

import type { RequestRecord } from '../types';
import { seededRng, type Rng } from '../rng';
import {
  bootstrapDiffCI,
  bootstrapPercentileCI,
  nanCI,
  resampledCI,
  resampledDiffCI,
  resolveBootstrap,
  type BootstrapCI,
  type BootstrapOptions,
} from './bootstrap';
import { checkPercentile, percentileOfSorted } from './percentile';

/** Values by group, e.g. each request's inter-token gaps (ms). */
export type Groups = readonly ArrayLike<number>[];

/** All values sorted, each with the index of its group among the non-empty ones. */
interface Pooled {
  sorted: Float64Array;
  group: Uint32Array;
  sizes: Uint32Array;
}

function pool(groups: Groups): Pooled | undefined {
  const kept = groups.filter((g) => g.length > 0);
  const n = kept.reduce((s, g) => s + g.length, 0);
  if (n === 0) return undefined;
  const vals = new Float64Array(n);
  const gid = new Uint32Array(n);
  let k = 0;
  kept.forEach((g, gi) => {
    for (let i = 0; i < g.length; i++, k++) {
      vals[k] = g[i];
      gid[k] = gi;
    }
  });
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => vals[a] - vals[b]);
  return {
    sorted: Float64Array.from(order, (i) => vals[i]),
    group: Uint32Array.from(order, (i) => gid[i]),
    sizes: Uint32Array.from(kept, (g) => g.length),
  };
}

/** Each call draws the groups with replacement and returns the numpy-linear percentile p of their values. */
function clusterResampler(pooled: Pooled, p: number, rng: Rng): () => number {
  const { sorted, group, sizes } = pooled;
  const g = sizes.length;
  const counts = new Uint32Array(g);
  return () => {
    counts.fill(0);
    let total = 0;
    for (let i = 0; i < g; i++) {
      const d = Math.floor(rng() * g);
      counts[d]++;
      total += sizes[d];
    }
    const h = (p / 100) * (total - 1);
    const kLo = Math.floor(h);
    const kHi = Math.min(kLo + 1, total - 1);
    const t = h - kLo;
    let a = Number.NaN;
    let seen = 0;
    for (let j = 0; j < sorted.length; j++) {
      seen += counts[group[j]];
      if (Number.isNaN(a) && seen > kLo) a = sorted[j];
      if (seen > kHi) {
        const b = sorted[j];
        const diff = b - a;
        return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
      }
    }
    return Number.NaN; // unreachable: the weights sum to total
  };
}

/**
 * Bootstrap CI of the p-th percentile (0..100) of all the values in `groups`, resampling groups.
 * Defaults as `bootstrapPercentileCI`. No value at all → NaN fields. Does not mutate its input.
 * @throws RangeError for p outside 0..100 or bad options.
 */
export function bootstrapClusterPercentileCI(groups: Groups, p: number, opts: BootstrapOptions = {}): BootstrapCI {
  checkPercentile(p);
  const o = resolveBootstrap(opts);
  const pooled = pool(groups);
  if (!pooled) return nanCI(o);
  return resampledCI(clusterResampler(pooled, p, seededRng(o.seed)), percentileOfSorted(pooled.sorted, p), o);
}

/**
 * Bootstrap CI of `percentile(b, p) − percentile(a, p)` over all the values of each side, resampling
 * each side's groups independently from one seeded stream (as `bootstrapDiffCI` does values).
 * Either side without values → NaN fields.
 */
export function bootstrapClusterDiffCI(a: Groups, b: Groups, p: number, opts: BootstrapOptions = {}): BootstrapCI {
  checkPercentile(p);
  const o = resolveBootstrap(opts);
  const pa = pool(a);
  const pb = pool(b);
  if (!pa || !pb) return nanCI(o);
  const rng = seededRng(o.seed);
  const estimate = percentileOfSorted(pb.sorted, p) - percentileOfSorted(pa.sorted, p);
  return resampledDiffCI(clusterResampler(pa, p, rng), clusterResampler(pb, p, rng), estimate, o);
}

/** One side of a comparison: its values, and optionally the same values by group. */
export interface GroupedSample {
  values: ArrayLike<number>;
  groups?: Groups;
}

/** The interval of `s`'s p-th percentile: resampling its groups when it has them, else its values. */
export function bootstrapSampleCI(s: GroupedSample, p: number, opts: BootstrapOptions = {}): BootstrapCI {
  return s.groups ? bootstrapClusterPercentileCI(s.groups, p, opts) : bootstrapPercentileCI(s.values, p, opts);
}

/** `b − a` at the p-th percentile: resampling groups when both sides have them, else values (`bootstrapDiffCI`). */
export function bootstrapSampleDiffCI(a: GroupedSample, b: GroupedSample, p: number, opts: BootstrapOptions = {}): BootstrapCI {
  return a.groups && b.groups
    ? bootstrapClusterDiffCI(a.groups, b.groups, p, opts)
    : bootstrapDiffCI(a.values, b.values, p, opts);
}

/**
 * Each measured, successful request's inter-token gaps, ms (non-finite gaps left out): the clusters an
 * ITL interval resamples ({@link bootstrapClusterPercentileCI}). Warm-up and failed requests are left out.
 */
export function itlByRequest(records: readonly Pick<RequestRecord, 'ok' | 'warmup' | 'itlMs'>[]): number[][] {
  return records.filter((r) => r.ok && !r.warmup).map((r) => (r.itlMs ?? []).filter((g) => Number.isFinite(g)));
}
