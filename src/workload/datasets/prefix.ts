/**
 * Groups of prompts that share a prefix: vLLM's `PrefixRepetitionRandomDataset`
 * (`--dataset-name prefix_repetition`, vllm/benchmarks/datasets/prefix_repetition.py). There are
 * `numPrefixes` prefixes of `prefixLen` tokens; each gets floor(numPrompts / numPrefixes) prompts
 * made of the prefix and a unique suffix of `suffixLen` tokens; the list is then shuffled. So the
 * shared fraction of every prompt is prefixLen / (prefixLen + suffixLen) (`sharedRatio` sets it
 * from a total `inputLen`). vLLM's defaults: prefix 256, suffix 256, 10 prefixes, output 128.
 * Deviation: real Chinese prose cut by estimate instead of random token ids (see text.ts).
 * Each prompt is tagged `prefix-<g>`.
 */

import { seededRng } from '../../rng';
import { DatasetError } from './dataset-error';
import { type SampleRequest, shuffled } from './sample';
import { marker, syntheticPrompt, textOfTokens } from './text';

/** vLLM PrefixRepetitionRandomDataset defaults. */
export const PREFIX_DEFAULTS = { prefixLen: 256, suffixLen: 256, numPrefixes: 10, outputLen: 128 } as const;

/** Options of `samplePrefixRepetition`. */
export interface PrefixRepetitionOptions {
  numPrompts: number;
  /** Default 0. */
  seed?: number;
  /** Shared prefix, tokens (vLLM's `--prefix-repetition-prefix-len`); default 256. */
  prefixLen?: number;
  /** Unique suffix, tokens (`--prefix-repetition-suffix-len`); default 256. */
  suffixLen?: number;
  /** Distinct prefixes (`--prefix-repetition-num-prefixes`); default 10. */
  numPrefixes?: number;
  /** Output tokens (`--prefix-repetition-output-len`); default 128. */
  outputLen?: number;
  /** Instead of prefixLen/suffixLen: the shared fraction in [0, 1] of a prompt of `inputLen` tokens. */
  sharedRatio?: number;
  /** Total prompt tokens with `sharedRatio`; default 512. */
  inputLen?: number;
}

function positiveInt(name: string, v: number, min = 1): number {
  if (!Number.isInteger(v) || v < min) throw new DatasetError(`${name} must be an integer ≥ ${min}, got ${v}`);
  return v;
}

/** Prefix and suffix lengths from the options (see `PrefixRepetitionOptions`). */
export function prefixLengths(opts: PrefixRepetitionOptions): { prefixLen: number; suffixLen: number } {
  if (opts.sharedRatio === undefined) {
    return {
      prefixLen: positiveInt('prefixLen', opts.prefixLen ?? PREFIX_DEFAULTS.prefixLen, 0),
      suffixLen: positiveInt('suffixLen', opts.suffixLen ?? PREFIX_DEFAULTS.suffixLen),
    };
  }
  if (opts.prefixLen !== undefined || opts.suffixLen !== undefined) {
    throw new DatasetError('give sharedRatio (with inputLen) or prefixLen/suffixLen, not both');
  }
  const r = opts.sharedRatio;
  if (!(r >= 0 && r < 1)) throw new DatasetError(`sharedRatio must be in [0, 1) (a suffix of ≥ 1 token stays unique), got ${r}`);
  const inputLen = positiveInt('inputLen', opts.inputLen ?? 512, 2);
  const prefixLen = Math.min(inputLen - 1, Math.round(inputLen * r));
  return { prefixLen, suffixLen: inputLen - prefixLen };
}

/** numPrefixes × floor(numPrompts/numPrefixes) prompts (see the module comment). Throws when numPrompts < numPrefixes, as vLLM. */
export function samplePrefixRepetition(opts: PrefixRepetitionOptions): SampleRequest[] {
  const { prefixLen, suffixLen } = prefixLengths(opts);
  const numPrefixes = positiveInt('numPrefixes', opts.numPrefixes ?? PREFIX_DEFAULTS.numPrefixes);
  const outputTokens = positiveInt('outputLen', opts.outputLen ?? PREFIX_DEFAULTS.outputLen);
  const perPrefix = Math.floor(opts.numPrompts / numPrefixes);
  if (perPrefix === 0) {
    throw new DatasetError(
      `num_requests (${opts.numPrompts}) must be greater than or equal to num_prefixes (${numPrefixes}); raise --num-prompts or lower --prefix-repetition-num-prefixes`,
    );
  }
  const rng = seededRng(opts.seed ?? 0);
  const out: SampleRequest[] = [];
  for (let g = 0; g < numPrefixes; g++) {
    const prefix = prefixLen > 0 ? textOfTokens(rng, prefixLen, marker(rng)) : '';
    for (let k = 0; k < perPrefix; k++) {
      // The suffix starts with its own marker, so two prompts share exactly the prefix.
      const prompt = prefix + syntheticPrompt(rng, suffixLen);
      out.push({ prompt, promptTokens: prefixLen + suffixLen, outputTokens, tag: `prefix-${g}` });
    }
  }
  return shuffled(out, rng);
}
