/**
 * Synthetic prompts of drawn lengths: vLLM's `RandomDataset` (vllm/benchmarks/datasets/random.py),
 * whose defaults are input 1024, output 128 tokens and range ratio 0, with lengths drawn as
 * `uniformAround(len, --random-range-ratio)`. Normal and lognormal lengths are LoadLab's addition
 * (library only). Deviation: vLLM decodes seeded random token ids; LoadLab cuts real Chinese
 * prose to the target by a per-character rate measured with Qwen's BPE (text.ts), with a seeded
 * marker first so no two prompts share a prefix-cache block. The true prompt length is the server's `usage`.
 */

import { seededRng } from '../../rng';
import { checkLengthDist, drawLength, type LengthDist, uniformAround } from './lengths';
import type { SampleRequest } from './sample';
import { syntheticPrompt } from './text';

/** vLLM RandomDataset defaults, tokens. */
export const RANDOM_DEFAULTS = { inputLen: 1024, outputLen: 128, rangeRatio: 0 } as const;

/** Options of `sampleRandom`. */
export interface RandomOptions {
  numPrompts: number;
  /** Default 0. */
  seed?: number;
  /** Prompt length distribution; default `uniformAround(inputLen ?? 1024, rangeRatio ?? 0)`. */
  input?: LengthDist;
  /** Output length distribution; default `uniformAround(outputLen ?? 128, rangeRatio ?? 0)`. */
  output?: LengthDist;
  /** vLLM's `--random-input-len`, tokens; default 1024. */
  inputLen?: number;
  /** vLLM's `--random-output-len`, tokens; default 128. */
  outputLen?: number;
  /** vLLM's `--random-range-ratio`, in [0, 1); default 0. */
  rangeRatio?: number;
}

/** `numPrompts` prompts with seeded lengths (see the module comment); the same seed gives the same prompts. */
export function sampleRandom(opts: RandomOptions): SampleRequest[] {
  const ratio = opts.rangeRatio ?? RANDOM_DEFAULTS.rangeRatio;
  const input = opts.input ?? uniformAround(opts.inputLen ?? RANDOM_DEFAULTS.inputLen, ratio);
  const output = opts.output ?? uniformAround(opts.outputLen ?? RANDOM_DEFAULTS.outputLen, ratio);
  checkLengthDist(input, 'input');
  checkLengthDist(output, 'output');
  const rng = seededRng(opts.seed ?? 0);
  return Array.from({ length: opts.numPrompts }, (): SampleRequest => {
    const inputTokens = drawLength(rng, input);
    const outputTokens = drawLength(rng, output);
    return { prompt: syntheticPrompt(rng, inputTokens), promptTokens: inputTokens, outputTokens };
  });
}
