/**
 * A replayed trace: JSON Lines of `{"timestamp": ms, "input_length": tokens, "output_length": tokens}`,
 * the fields of the public Mooncake traces (timestamps in ms). This format is LoadLab's choice; it
 * has not been checked against the trace datasets of newer `vllm bench serve` versions. A line may carry its own
 * `"prompt"`; otherwise one of about `input_length` tokens is cut from real text (text.ts).
 * Request i is sent `timestamp_i − timestamp_0` ms after the run starts (timestamps must not
 * decrease). The first `numPrompts` lines are used; a trace is never oversampled.
 */

import { seededRng } from '../../rng';
import { estimateTokens } from '../prompts';
import { DatasetError, readJsonLines } from './dataset-error';
import type { SampleRequest } from './sample';
import { syntheticPrompt } from './text';

const EXAMPLE = '{"timestamp": 0, "input_length": 512, "output_length": 64}';

/** One line of a trace. */
export interface TraceEntry {
  /** ms, as in the file. */
  timestampMs: number;
  inputLength: number;
  outputLength: number;
  prompt?: string;
  /** 1-based line in the file. */
  line: number;
}

function intField(v: Record<string, unknown>, key: string, min: number, file: string, line: number): number {
  const n = v[key];
  if (typeof n !== 'number' || !Number.isFinite(n) || n < min || (key !== 'timestamp' && !Number.isInteger(n))) {
    throw new DatasetError(
      `"${key}" must be a number ≥ ${min}${key === 'timestamp' ? ' (ms)' : ' (integer tokens)'}, got ${JSON.stringify(n)}; e.g. ${EXAMPLE}`,
      {
        file,
        line,
      },
    );
  }
  return n;
}

/** Read and check a trace file; a bad line throws DatasetError naming the file, the line and the fix. */
export function readTrace(file: string): TraceEntry[] {
  let last = -Infinity;
  return readJsonLines(file, 'trace file', EXAMPLE).map(({ line, value }) => {
    const e: TraceEntry = {
      timestampMs: intField(value, 'timestamp', 0, file, line),
      inputLength: intField(value, 'input_length', 1, file, line),
      outputLength: intField(value, 'output_length', 1, file, line),
      line,
    };
    if (e.timestampMs < last) {
      throw new DatasetError(
        `"timestamp" ${e.timestampMs} is earlier than the line before (${last}); sort the trace by timestamp`,
        {
          file,
          line,
        },
      );
    }
    last = e.timestampMs;
    if (value.prompt !== undefined) {
      if (typeof value.prompt !== 'string' || value.prompt === '') {
        throw new DatasetError(`"prompt" must be a non-empty string when given`, { file, line });
      }
      e.prompt = value.prompt;
    }
    return e;
  });
}

/** Options of `sampleTrace`. */
export interface TraceOptions {
  /** Lines to replay; default all of them. */
  numPrompts?: number;
  /** Seed of the generated prompt texts; default 0. */
  seed?: number;
}

/** Requests and their send offsets (ms from the run's start) for the first `numPrompts` lines. */
export function sampleTrace(
  entries: readonly TraceEntry[],
  opts: TraceOptions = {},
): { samples: SampleRequest[]; atMs: number[] } {
  const n = opts.numPrompts ?? entries.length;
  if (n > entries.length) {
    throw new DatasetError(
      `the trace has ${entries.length} lines but --num-prompts is ${n}; a trace is replayed, not oversampled: lower --num-prompts`,
    );
  }
  const rng = seededRng(opts.seed ?? 0);
  const used = entries.slice(0, n);
  const t0 = used[0]?.timestampMs ?? 0;
  const samples = used.map((e): SampleRequest => {
    if (e.prompt !== undefined) return { prompt: e.prompt, promptTokens: estimateTokens(e.prompt), outputTokens: e.outputLength };
    return { prompt: syntheticPrompt(rng, e.inputLength), promptTokens: e.inputLength, outputTokens: e.outputLength };
  });
  return { samples, atMs: used.map((e) => e.timestampMs - t0) };
}
