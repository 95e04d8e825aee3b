/**
 * What every dataset yields before it becomes a request (vLLM's `SampleRequest`,
 * vllm/benchmarks/datasets/abstractions.py), and the seeded shuffle and oversampling that vLLM's
 * file datasets apply. The seeds repeat exactly here, but not Python's `random` numbers.
 */

import { randInt, type Rng } from '../../rng';
import type { ChatMessage } from '../../types';

/** One request drawn from a dataset. */
export interface SampleRequest {
  /** The user's text (for a multi-turn conversation: the last user turn). */
  prompt: string;
  /** Earlier messages sent before `prompt`, oldest first (chat history). */
  history?: ChatMessage[];
  /** Expected prompt tokens: the target of a generated prompt, else `estimateTokens` (src/workload/prompts.ts); never the server's count. */
  promptTokens: number;
  /** Output tokens to ask for (`max_tokens`). */
  outputTokens: number;
  /** Label carried into the request's record, e.g. `'prefix-3'`. */
  tag?: string;
}

/** A copy of `items` in seeded random order (Fisher–Yates). */
export function shuffled<T>(items: readonly T[], rng: Rng): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = randInt(rng, 0, i);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * `items` cut or grown to `n`: the first `n`, or all of them plus seeded random picks until there
 * are `n`, as vLLM's `maybe_oversample_requests` (vllm/benchmarks/datasets/abstractions.py).
 */
export function takeOrOversample<T>(items: readonly T[], n: number, rng: Rng): T[] {
  if (items.length === 0) return [];
  const out = items.slice(0, n);
  while (out.length < n) out.push(items[randInt(rng, 0, items.length - 1)]);
  return out;
}
