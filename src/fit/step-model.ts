/**
 * What a calibration fits: the free perf parameters of the simulator's step-time model
 * (`src/sim/engine/cost.ts`), the observations a probe yields, and the model's prediction of one.
 * An observation is the mean duration of steps of a known shape (a `StepBatch`), read from the
 * server's histograms, or a client-side TTFT (then `apiOverheadMs` adds to it).
 */
import { stepTimeMs, type StepBatch } from '../sim/engine/cost';
import type { PerfProfile, Profile } from '../sim/engine/profile';

/** A perf field the fit may move. */
export type FitParam =
  | 'etaWeights'
  | 'etaLmHead'
  | 'etaKv'
  | 'gemmFlops'
  | 'marlinFlops'
  | 'attnFlops'
  | 'stepOverheadMs'
  | 'perSeqOverheadMs'
  | 'apiOverheadMs';

/** The free parameters, in table order, with the cost-model term each one scales. */
// biome-ignore format: a table
export const FIT_PARAMS: readonly { name: FitParam; unit: string; term: string }[] = [
  { name: 'etaWeights', unit: 'fraction', term: 'W_lin/(BW·η_w): linear weights streamed once per step' },
  { name: 'etaLmHead', unit: 'fraction', term: 'W_lm/(BW·η_lm): lm_head weights streamed once per step' },
  { name: 'etaKv', unit: 'fraction', term: 'Σ context·KV bytes/(BW·η_kv): decode attention' },
  { name: 'gemmFlops', unit: 'FLOP/s', term: '2·V·d·S/F_gemm: lm_head compute over sampled positions' },
  { name: 'marlinFlops', unit: 'FLOP/s', term: '2·P·N/F_marlin: linear-layer compute over batched tokens' },
  { name: 'attnFlops', unit: 'FLOP/s', term: '4·L·n_q·h·pairs/F_attn: causal prefill attention' },
  { name: 'stepOverheadMs', unit: 'ms', term: 't0 per step' },
  { name: 'perSeqOverheadMs', unit: 'ms', term: 't_seq per scheduled request' },
  { name: 'apiOverheadMs', unit: 'ms', term: 'per request before the engine (HTTP, tokenize)' },
];

/** Where an observation's number comes from. */
export type ObservationSource = 'metrics' | 'client';

/** One measured mean: steps of shape `batch` took `ms` on average (plus the API overhead when `includesApi`). */
export interface Observation {
  /** Probe name, e.g. `decode B=16 p=32 n=128`. */
  probe: string;
  /** What was averaged, e.g. `vllm:inter_token_latency_seconds` or `client TTFT`. */
  quantity: string;
  source: ObservationSource;
  /** The mean step shape. */
  batch: StepBatch;
  /** True for a TTFT measured outside the engine: the API overhead is part of it. */
  includesApi: boolean;
  /** Measured mean, ms. */
  ms: number;
  /** Samples averaged (histogram `_count` delta or records). */
  samples: number;
}

/** The profile with `values` put into its perf section (others unchanged). */
export function withPerf(profile: Profile, values: Partial<Record<FitParam, number>>): Profile {
  const perf: PerfProfile = { ...profile.perf };
  for (const [k, v] of Object.entries(values)) if (v !== undefined) perf[k as FitParam] = v;
  return { ...profile, perf };
}

/** The model's value of `obs` under `profile`, ms: the step time, plus `perf.apiOverheadMs` for a TTFT seen from outside. */
export function predictObservation(obs: Observation, profile: Profile): number {
  return stepTimeMs(obs.batch, profile) + (obs.includesApi ? profile.perf.apiOverheadMs : 0);
}

/** A decode-only step shape: `batch` requests each reading `meanContextTokens` KV tokens. */
export function decodeBatch(batch: number, meanContextTokens: number): StepBatch {
  return {
    decodes: batch,
    decodeContextTokens: batch * meanContextTokens,
    prefillTokens: 0,
    prefillAttnPairs: 0,
    sampled: batch,
    swapBytes: 0,
    swapCopies: 0,
  };
}

/** A single-request prefill step of `promptTokens` (mean) and `meanSquareTokens` (mean of p², for the causal pairs p²/2). */
export function prefillBatch(promptTokens: number, meanSquareTokens: number = promptTokens * promptTokens): StepBatch {
  return {
    decodes: 0,
    decodeContextTokens: 0,
    prefillTokens: promptTokens,
    prefillAttnPairs: meanSquareTokens / 2,
    sampled: 1,
    swapBytes: 0,
    swapCopies: 0,
  };
}
