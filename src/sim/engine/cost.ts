/**
 * Roofline step-time model of one engine step (sim-calibration.md Part B). Pure and O(1)
 * once the batch is aggregated; the scheduler accumulates a `StepBatch` while it schedules.
 *
 * ```
 * T_linear  = smax( W_lin / (BW·η_w) ,  2·P_lin·N / F_marlin )     weights streamed once per step
 * T_lmhead  = smax( W_lm  / (BW·η_lm),  2·V·d·S / F_gemm )         only sampled positions
 * T_kv_dec  = Σ_i c_i · KVbytes/token / (BW·η_kv)                  decode attention = KV read
 * T_attn_pf = Σ_j L · 4·n_q·h · p_j·(k_j + p_j/2) / F_attn         causal prefill attention
 * T_ovh     = t0 + t_seq·S
 * T_swap    = n_copies·c0 + bytes / BW_pcie
 * smax(a,b) = (a⁴ + b⁴)^¼                                           soft roofline knee
 * ```
 * N = decodes + Σ prefill chunk tokens; S = scheduled requests (vLLM computes logits for
 * every scheduled request, partial prefill chunks included, and discards the unused ones).
 * CUDA-graph padding of decode batches (1, 2, 4, 8, 16, 24 …) is ignored.
 */
import { DEFAULT_PROFILE, kvBytesPerToken, type Profile } from './profile';

/** One step's work, aggregated. Build with `emptyBatch` + `addDecode` / `addPrefill`, or by hand. */
export interface StepBatch {
  /** Requests decoding one token. */
  decodes: number;
  /** Σ KV tokens the decodes read (their context including the new token), tokens. */
  decodeContextTokens: number;
  /** Σ prefill chunk tokens p_j. */
  prefillTokens: number;
  /** Σ p_j·(k_j + p_j/2): query×key pairs of causal prefill attention (k_j = tokens computed before the chunk). */
  prefillAttnPairs: number;
  /** Positions that go through lm_head (scheduled requests). */
  sampled: number;
  /** Bytes moved between host and device this step (swap out + swap in); default 0. */
  swapBytes?: number;
  /** Host↔device copies issued this step; default 0. */
  swapCopies?: number;
}

/** A zeroed batch. */
export function emptyBatch(): StepBatch {
  return { decodes: 0, decodeContextTokens: 0, prefillTokens: 0, prefillAttnPairs: 0, sampled: 0, swapBytes: 0, swapCopies: 0 };
}

/** Reset `b` to zero in place (lets the engine reuse one object per step). */
export function resetBatch(b: StepBatch): StepBatch {
  b.decodes = b.decodeContextTokens = b.prefillTokens = b.prefillAttnPairs = 0;
  b.sampled = b.swapBytes = b.swapCopies = 0;
  return b;
}

/** Add a decode that reads `contextTokens` KV tokens (its new token included). */
export function addDecode(b: StepBatch, contextTokens: number): void {
  b.decodes += 1;
  b.decodeContextTokens += contextTokens;
  b.sampled += 1;
}

/** Add a prefill chunk of `chunkTokens` on top of `computedBefore` tokens (earlier chunks or prefix-cache hits). */
export function addPrefill(b: StepBatch, chunkTokens: number, computedBefore: number): void {
  b.prefillTokens += chunkTokens;
  b.prefillAttnPairs += chunkTokens * (computedBefore + chunkTokens / 2);
  b.sampled += 1;
}

/** The step time split into its terms, ms. */
export interface StepBreakdown {
  linearMs: number;
  lmHeadMs: number;
  kvDecodeMs: number;
  attnPrefillMs: number;
  overheadMs: number;
  swapMs: number;
  totalMs: number;
}

function smax(a: number, b: number): number {
  const a2 = a * a;
  const b2 = b * b;
  return Math.sqrt(Math.sqrt(a2 * a2 + b2 * b2));
}

/** Each term of the step time for `batch` on `profile` (default RTX 4090 + Qwen2.5-7B GPTQ-Int4), ms. */
export function stepBreakdown(batch: StepBatch, profile: Profile = DEFAULT_PROFILE): StepBreakdown {
  const { gpu, model: m, perf: p } = profile;
  const bw = gpu.memoryBandwidthBytesPerSec;
  const n = batch.decodes + batch.prefillTokens;
  const s = batch.sampled;
  const linearMs = 1e3 * smax(m.linearWeightBytes / (bw * p.etaWeights), (2 * m.linearParams * n) / p.marlinFlops);
  const lmHeadMs = s > 0 ? 1e3 * smax(m.lmHeadBytes / (bw * p.etaLmHead), (2 * m.vocabSize * m.hiddenSize * s) / p.gemmFlops) : 0;
  const kvDecodeMs = (1e3 * batch.decodeContextTokens * kvBytesPerToken(profile)) / (bw * p.etaKv);
  const attnPrefillMs = (1e3 * m.numLayers * 4 * m.numQueryHeads * m.headDim * batch.prefillAttnPairs) / p.attnFlops;
  const overheadMs = p.stepOverheadMs + p.perSeqOverheadMs * s;
  const swapMs = (batch.swapCopies ?? 0) * gpu.pcieCopyOverheadMs + (1e3 * (batch.swapBytes ?? 0)) / gpu.pcieBytesPerSec;
  const totalMs = linearMs + lmHeadMs + kvDecodeMs + attnPrefillMs + overheadMs + swapMs;
  return { linearMs, lmHeadMs, kvDecodeMs, attnPrefillMs, overheadMs, swapMs, totalMs };
}

/**
 * Duration of one engine step, ms: the Part B roofline sum. Single stream at short context
 * ≈ 6.7 ms; a 2048-token chunk ≈ 207 ms; 256 decodes at 512 context ≈ 37 ms.
 */
export function stepTimeMs(batch: StepBatch, profile: Profile = DEFAULT_PROFILE): number {
  return stepBreakdown(batch, profile).totalMs;
}
