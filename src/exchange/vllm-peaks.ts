/**
 * `max_output_tokens_per_s` and `max_concurrent_requests` of a `vllm bench serve` result, computed
 * as `calculate_metrics` does (vllm/benchmarks/serve.py, commit 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1):
 * - token times of a successful request are `start + ttft`, then `+ itl` for each gap: one "token"
 *   per streamed chunk (vLLM counts chunks here, not usage tokens);
 * - they fall into one-second buckets `int(t − min_start)` over `ceil(max_end − min_start) + 1`
 *   buckets, `min_start`/`max_end` over successful requests (`end = start + latency`);
 *   `max_output_tokens_per_s` is the fullest bucket;
 * - `max_concurrent_requests` is the exact peak of the half-open intervals `[start, start + latency)`
 *   of successful requests (a departure at the same instant as an arrival counts first).
 * Pure; times in seconds, as vLLM's.
 */

/** One successful request, in seconds: send time, TTFT, chunk gaps, latency. */
export interface PeakInput {
  startS: number;
  ttftS: number;
  itlS: readonly number[];
  latencyS: number;
}

/** vLLM's `max_output_tokens_per_s` and `max_concurrent_requests`; both 0 without successful requests. */
export function vllmPeaks(ok: readonly PeakInput[]): { maxOutputTokensPerS: number; maxConcurrentRequests: number } {
  if (ok.length === 0) return { maxOutputTokensPerS: 0, maxConcurrentRequests: 0 };
  let minStart = Infinity;
  let maxEnd = -Infinity;
  for (const o of ok) {
    minStart = Math.min(minStart, o.startS);
    maxEnd = Math.max(maxEnd, o.startS + o.latencyS);
  }
  const buckets = new Array<number>(Math.ceil(maxEnd - minStart) + 1).fill(0);
  for (const o of ok) {
    let t = o.startS + o.ttftS;
    const times = [t];
    for (const gap of o.itlS) times.push((t += gap));
    for (const tt of times) {
      const b = Math.trunc(tt - minStart); // Python int(): toward zero
      if (b >= 0 && b < buckets.length) buckets[b] += 1;
    }
  }
  const events: Array<[number, number]> = [];
  for (const o of ok) events.push([o.startS, 1], [o.startS + o.latencyS, -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, d] of events) peak = Math.max(peak, (now += d));
  return { maxOutputTokensPerS: Math.max(...buckets), maxConcurrentRequests: peak };
}
