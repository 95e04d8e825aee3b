/**
 * Prompts from a JSON Lines file, one `{"prompt": "...", "output_len": 128}` per line: vLLM's
 * `CustomDataset` (`--dataset-name custom`, vllm/benchmarks/datasets/custom.py), which shuffles the
 * lines with the seed, takes the first `numPrompts` and oversamples when there are fewer.
 * vLLM asks every request for `--custom-output-len` tokens (default 256); a per-line `output_len`
 * overriding it is LoadLab's addition. vLLM applies the chat template itself and sends the text as
 * a completion; LoadLab sends the prompt as one chat user message (the server applies the template).
 */

import { seededRng } from '../../rng';
import { estimateTokens } from '../prompts';
import { DatasetError, readJsonLines } from './dataset-error';
import { type SampleRequest, shuffled, takeOrOversample } from './sample';

/** vLLM's `--custom-output-len` default, tokens. */
export const DEFAULT_CUSTOM_OUTPUT_LEN = 256;

const EXAMPLE = '{"prompt": "什么是 KV cache？", "output_len": 128}';

/** One line of the file. */
export interface JsonlPrompt {
  prompt: string;
  /** The line's own `output_len`, when it has one. */
  outputLen?: number;
  /** 1-based line in the file. */
  line: number;
}

/** Read and check a prompts JSONL file; a bad line throws DatasetError naming the file, the line and the fix. */
export function readJsonlPrompts(file: string): JsonlPrompt[] {
  return readJsonLines(file, 'JSONL prompts file', EXAMPLE).map(({ line, value }) => {
    if (typeof value.prompt !== 'string' || value.prompt === '') {
      throw new DatasetError(`"prompt" must be a non-empty string, got ${JSON.stringify(value.prompt)}; e.g. ${EXAMPLE}`, {
        file,
        line,
      });
    }
    const p: JsonlPrompt = { prompt: value.prompt, line };
    if (value.output_len !== undefined) {
      const n = value.output_len;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) {
        throw new DatasetError(`"output_len" must be an integer ≥ 1 (tokens), got ${JSON.stringify(n)}`, { file, line });
      }
      p.outputLen = n;
    }
    return p;
  });
}

/** Options of `sampleJsonl`. */
export interface JsonlOptions {
  numPrompts: number;
  /** Default 0. */
  seed?: number;
  /** Output tokens for lines without `output_len` (vLLM's `--custom-output-len`); default 256. */
  outputLen?: number;
}

/** `numPrompts` requests from the lines, shuffled with the seed and oversampled as vLLM's CustomDataset. */
export function sampleJsonl(lines: readonly JsonlPrompt[], opts: JsonlOptions): SampleRequest[] {
  const rng = seededRng(opts.seed ?? 0);
  const samples = shuffled(lines, rng).map(
    (l): SampleRequest => ({
      prompt: l.prompt,
      promptTokens: estimateTokens(l.prompt),
      outputTokens: l.outputLen ?? opts.outputLen ?? DEFAULT_CUSTOM_OUTPUT_LEN,
    }),
  );
  return takeOrOversample(samples, opts.numPrompts, rng);
}
