/**
 * Derived per-request metrics, with `vllm bench serve`'s definitions (vLLM fact sheet §6).
 * Pure: raw stamps in, numbers out, all in ms on the run's clock.
 *
 * Deviations from `vllm bench serve`, on purpose:
 * - Chat TTFT: vLLM bench stamps TTFT on the first chunk that has `choices`, which for chat is
 *   the role-only chunk (`delta: {role, content: ""}`), and then adds a ≈0 ITL entry for the
 *   role→first-token gap. We stamp TTFT on the first chunk that carries a token and keep the
 *   role chunk's time as `firstChunkMs`, so both views are available. vLLM sends the two back to
 *   back when the first engine output arrives (§7), so they differ by well under a millisecond.
 * - E2E: vLLM bench's chat latency runs to the usage chunk; ours (and its completions latency)
 *   ends at the last token chunk. With `continuous_usage_stats` the final EOS chunk counts as a
 *   token chunk (its `completion_tokens` rises), as in vLLM bench.
 * - ITL is per chunk, as in vLLM bench; `chunkTokens` says how many tokens each chunk carried.
 */

import type { RequestRecord } from '../types';

/** The raw fields {@link deriveMetrics} reads. */
export type TimingFields = Pick<RequestRecord, 'intendedStartMs' | 'startMs' | 'firstTokenMs' | 'chunkMs' | 'outputTokens'>;

/** The derived fields of a {@link RequestRecord}. Undefined ones are left out of the object. */
export type DerivedMetrics = Pick<RequestRecord, 'ttftMs' | 'e2eMs' | 'tpotMs' | 'itlMs' | 'queueMs' | 'ttftFromIntendedMs'>;

/**
 * Derived metrics of one request:
 * - `ttftMs` = firstTokenMs − startMs (vLLM bench "TTFT", but stamped on the first token chunk);
 * - `e2eMs` = last token chunk − startMs (vLLM bench "latency"/E2EL);
 * - `tpotMs` = (e2eMs − ttftMs)/(outputTokens − 1), undefined below 2 output tokens (vLLM bench "TPOT");
 * - `itlMs` = gaps between consecutive token chunks, one per chunk after the first (vLLM bench "ITL");
 * - `queueMs` = startMs − intendedStartMs: time inside the client before the request was written
 *   to a socket (load-shape lag, waiting for a free connection, connecting); vLLM bench has no
 *   such field and counts connection waits in its TTFT;
 * - `ttftFromIntendedMs` = firstTokenMs − intendedStartMs (TTFT as seen from the intended send
 *   time, which counts client-side queueing: the coordinated-omission view).
 *
 * Computed for failed records too, from whatever was measured; statistics should use `ok` records.
 */
export function deriveMetrics(r: TimingFields): DerivedMetrics {
  const out: DerivedMetrics = { itlMs: [], queueMs: r.startMs - r.intendedStartMs };
  const chunks = r.chunkMs;
  for (let i = 1; i < chunks.length; i++) out.itlMs.push(chunks[i] - chunks[i - 1]);
  if (r.firstTokenMs !== undefined) {
    out.ttftMs = r.firstTokenMs - r.startMs;
    out.ttftFromIntendedMs = r.firstTokenMs - r.intendedStartMs;
  }
  if (chunks.length > 0) out.e2eMs = chunks[chunks.length - 1] - r.startMs;
  if (out.ttftMs !== undefined && out.e2eMs !== undefined && r.outputTokens !== undefined && r.outputTokens >= 2) {
    out.tpotMs = (out.e2eMs - out.ttftMs) / (r.outputTokens - 1);
  }
  return out;
}
