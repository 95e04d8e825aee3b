/**
 * `loadDataset`: one entry point for every dataset kind, as `vllm bench serve --dataset-name`
 * (vllm/benchmarks/datasets/): sharegpt, custom (JSONL), random, prefix_repetition, and LoadLab's
 * trace. It returns the requests to send (`RequestSpec[]`), send offsets for a trace, and what the
 * manifest should say about the dataset. Everything drawn is seeded: the same options give the
 * same requests. Errors are DatasetError naming the file, the line and the fix.
 */

import type { Api, RequestSpec } from '../../types';
import { makeRequest } from '../workload';
import { DatasetError } from './dataset-error';
import { sampleJsonl, readJsonlPrompts } from './jsonl';
import type { LengthDist } from './lengths';
import { samplePrefixRepetition, type PrefixRepetitionOptions } from './prefix';
import { sampleRandom } from './random';
import type { SampleRequest } from './sample';
import { readShareGpt, sampleShareGpt } from './sharegpt';
import { readTrace, sampleTrace } from './trace';

/** Dataset kinds, by vLLM's `--dataset-name` where vLLM has the kind. */
export const DATASET_NAMES = ['sharegpt', 'custom', 'random', 'prefix_repetition', 'trace'] as const;
/** A dataset kind. */
export type DatasetName = (typeof DATASET_NAMES)[number];
/** Other spellings accepted for a kind. */
const SPELLINGS: Record<string, DatasetName> = { jsonl: 'custom', 'prefix-repetition': 'prefix_repetition' };

/** Options of `loadDataset`. Lengths are tokens. */
export interface LoadDatasetOptions {
  /** `sharegpt`, `custom` (alias `jsonl`), `random`, `prefix_repetition` (alias `prefix-repetition`) or `trace`. */
  name: string;
  /** The file, for sharegpt, custom and trace. */
  path?: string;
  /** Requests wanted (vLLM's `--num-prompts`); a trace defaults to all its lines. */
  numPrompts?: number;
  /** Seed of shuffles, oversampling, lengths and generated texts; default 0. */
  seed?: number;
  /** Endpoint; default `'chat'`. */
  api?: Api;
  /** Force each request's output length (`ignore_eos` + `min_tokens`), vLLM's `--ignore-eos`; default false. */
  ignoreEos?: boolean;
  /** sharegpt `--sharegpt-output-len` / custom `--custom-output-len` / random / prefix output length. */
  outputLen?: number;
  /** random: `--random-input-len` (default 1024), `--random-range-ratio` (default 0), or whole distributions. */
  inputLen?: number;
  rangeRatio?: number;
  input?: LengthDist;
  output?: LengthDist;
  /** prefix_repetition options (vLLM's `--prefix-repetition-*`). */
  prefix?: Omit<PrefixRepetitionOptions, 'numPrompts' | 'seed' | 'outputLen'>;
}

/** What `loadDataset` returns. */
export interface LoadedDataset {
  /** The kind, by its vLLM name. */
  name: DatasetName;
  requests: RequestSpec[];
  /** Send offsets in ms from the run's start, one per request (trace only). */
  atMs?: number[];
  /** For the manifest: name, path, seed, counts, and that prompt lengths are estimates. */
  info: Record<string, unknown>;
}

/** The kind for `name`, or a DatasetError listing the kinds. */
export function datasetName(name: string): DatasetName {
  const n = SPELLINGS[name] ?? name;
  if (!(DATASET_NAMES as readonly string[]).includes(n)) {
    throw new DatasetError(`unknown dataset '${name}'; use one of ${DATASET_NAMES.join(', ')}`);
  }
  return n as DatasetName;
}

function needPath(o: LoadDatasetOptions, kind: string): string {
  if (!o.path) throw new DatasetError(`the ${kind} dataset needs a file: pass --dataset-path (path)`);
  return o.path;
}

function needCount(o: LoadDatasetOptions): number {
  const n = o.numPrompts;
  if (n === undefined) throw new DatasetError('numPrompts is required (--num-prompts N): how many requests to draw');
  if (!Number.isInteger(n) || n < 1) throw new DatasetError(`numPrompts must be an integer ≥ 1, got ${n}`);
  return n;
}

/** The requests of one kind, plus offsets and notes. */
function samplesOf(
  name: DatasetName,
  o: LoadDatasetOptions,
): { samples: SampleRequest[]; atMs?: number[]; notes: Record<string, unknown> } {
  const seed = o.seed ?? 0;
  switch (name) {
    case 'sharegpt': {
      const convs = readShareGpt(needPath(o, 'sharegpt'));
      const r = sampleShareGpt(convs, {
        numPrompts: needCount(o),
        seed,
        ...(o.outputLen !== undefined ? { outputLen: o.outputLen } : {}),
      });
      if (r.samples.length === 0) {
        throw new DatasetError(
          'no usable conversation: each needs ≥ 2 turns, a prompt and an answer of ≥ 4 tokens, prompt ≤ 1024 tokens',
          {
            file: o.path!,
          },
        );
      }
      return { samples: r.samples, notes: { conversations: convs.length, dropped: r.dropped } };
    }
    case 'custom': {
      const lines = readJsonlPrompts(needPath(o, 'custom (JSONL)'));
      return {
        samples: sampleJsonl(lines, {
          numPrompts: needCount(o),
          seed,
          ...(o.outputLen !== undefined ? { outputLen: o.outputLen } : {}),
        }),
        notes: { lines: lines.length },
      };
    }
    case 'random': {
      const opts = { numPrompts: needCount(o), seed, ...pick(o, ['inputLen', 'outputLen', 'rangeRatio', 'input', 'output']) };
      return { samples: sampleRandom(opts), notes: pick(o, ['inputLen', 'outputLen', 'rangeRatio', 'input', 'output']) };
    }
    case 'prefix_repetition': {
      const opts = {
        ...o.prefix,
        numPrompts: needCount(o),
        seed,
        ...(o.outputLen !== undefined ? { outputLen: o.outputLen } : {}),
      };
      return { samples: samplePrefixRepetition(opts), notes: { ...o.prefix } };
    }
    case 'trace': {
      const entries = readTrace(needPath(o, 'trace'));
      const r = sampleTrace(entries, { seed, ...(o.numPrompts !== undefined ? { numPrompts: o.numPrompts } : {}) });
      return { samples: r.samples, atMs: r.atMs, notes: { lines: entries.length } };
    }
  }
}

function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/** A sample as a request: a chat user message after its history, or (completions) history and prompt joined by blank lines. */
export function requestOf(s: SampleRequest, api: Api, ignoreEos: boolean): RequestSpec {
  const spec = makeRequest(s.prompt, {
    api,
    maxTokens: s.outputTokens,
    fixedOutput: ignoreEos,
    ...(s.tag ? { tag: s.tag } : {}),
  });
  if (s.history && s.history.length > 0) {
    if (api === 'chat') spec.messages = [...s.history, ...(spec.messages ?? [])];
    else spec.prompt = [...s.history.map((m) => m.content), s.prompt].join('\n\n');
  }
  return spec;
}

/** Load a dataset (see the module comment). @throws DatasetError naming the file, line and fix. */
export function loadDataset(opts: LoadDatasetOptions): LoadedDataset {
  const name = datasetName(opts.name);
  if (opts.path !== undefined && (name === 'random' || name === 'prefix_repetition')) {
    throw new DatasetError(`the ${name} dataset is generated and reads no file; drop --dataset-path`);
  }
  const { samples, atMs, notes } = samplesOf(name, opts);
  const api = opts.api ?? 'chat';
  const requests = samples.map((s) => requestOf(s, api, opts.ignoreEos ?? false));
  const promptTokens = samples.reduce((sum, s) => sum + s.promptTokens, 0);
  const info: Record<string, unknown> = {
    dataset: name,
    ...(opts.path !== undefined ? { path: opts.path } : {}),
    seed: opts.seed ?? 0,
    requests: requests.length,
    estimatedPromptTokens: promptTokens,
    ...notes,
  };
  return { name, requests, ...(atMs ? { atMs } : {}), info };
}

export { DatasetError } from './dataset-error';
