/**
 * The dataset and report flags of `loadlab run`, named as `vllm bench serve`'s
 * (vllm/benchmarks/serve.py, vllm/benchmarks/datasets/): `--dataset-name`, `--dataset-path`,
 * `--random-*`, `--sharegpt-output-len`, `--custom-output-len`, `--prefix-repetition-*`,
 * `--goodput`, `--percentile-metrics`, `--metric-percentiles`. A flag that does not apply
 * throws a UsageError naming the fix.
 * Multi-turn (`--multi-turn`, `--think-time-ms`): vLLM's `vllm bench serve` has no such flags (its
 * multi-turn benchmark is a separate script, benchmarks/multi_turn/benchmark_serving_multi_turn.py,
 * whose pause is `--request-rate` per client); the names are LoadLab's. See `multiTurnFlags`.
 */

import { parseGoodput } from '../stats/goodput';
import { checkPercentile } from '../stats/percentile';
import type { Slo } from '../types';
import { datasetName, type LoadDatasetOptions } from '../workload/datasets/index';
import { UsageError } from './usage-error';

/** parseArgs specs of these flags. */
export const DATASET_OPTIONS = {
  'dataset-name': { type: 'string' },
  'dataset-path': { type: 'string' },
  'random-input-len': { type: 'string' },
  'random-output-len': { type: 'string' },
  'random-range-ratio': { type: 'string' },
  'sharegpt-output-len': { type: 'string' },
  'multi-turn': { type: 'boolean' },
  'think-time-ms': { type: 'string' },
  'custom-output-len': { type: 'string' },
  'prefix-repetition-prefix-len': { type: 'string' },
  'prefix-repetition-suffix-len': { type: 'string' },
  'prefix-repetition-num-prefixes': { type: 'string' },
  'prefix-repetition-output-len': { type: 'string' },
  goodput: { type: 'string', multiple: true },
  'percentile-metrics': { type: 'string' },
  'metric-percentiles': { type: 'string' },
  'result-json': { type: 'string' },
} as const;

type Flags = Partial<Record<keyof typeof DATASET_OPTIONS, string | string[] | boolean>>;

/** Flags that apply to one dataset kind only. */
const ONLY_FOR: Record<string, readonly string[]> = {
  random: ['random-input-len', 'random-output-len', 'random-range-ratio'],
  sharegpt: ['sharegpt-output-len', 'multi-turn', 'think-time-ms'],
  custom: ['custom-output-len'],
  prefix_repetition: [
    'prefix-repetition-prefix-len',
    'prefix-repetition-suffix-len',
    'prefix-repetition-num-prefixes',
    'prefix-repetition-output-len',
  ],
};

/**
 * vLLM's `--goodput` takes several values (`nargs="+"`): `--goodput ttft:200 tpot:50`. Node's
 * parseArgs takes one per flag, so the words after `--goodput` (up to the next `-…` flag) are
 * rewritten as `--goodput=ttft:200 --goodput=tpot:50`.
 */
export function spreadGoodput(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--goodput') {
      out.push(argv[i]);
      continue;
    }
    let k = i + 1;
    for (; k < argv.length && !argv[k].startsWith('-'); k++) out.push(`--goodput=${argv[k]}`);
    if (k === i + 1) throw new UsageError('--goodput needs KEY:VALUE pairs in ms, e.g. --goodput ttft:200 tpot:50 e2el:1000');
    i = k - 1;
  }
  return out;
}

function intFlag(name: string, v: string | undefined, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got '${v}'`);
  return n;
}

/** `--dataset-*` flags as `loadDataset` options (without numPrompts/seed/api), or undefined without `--dataset-name`. */
export function datasetFlags(v: Flags): Omit<LoadDatasetOptions, 'numPrompts' | 'seed' | 'api' | 'ignoreEos'> | undefined {
  const given = (Object.keys(ONLY_FOR) as string[]).flatMap((k) => ONLY_FOR[k]).filter((f) => v[f as keyof Flags] !== undefined);
  if (v['dataset-name'] === undefined) {
    const stray = v['dataset-path'] !== undefined ? 'dataset-path' : given[0];
    if (stray) throw new UsageError(`--${stray} needs --dataset-name (sharegpt, custom, random, prefix_repetition or trace)`);
    return undefined;
  }
  let name: string;
  try {
    name = datasetName(String(v['dataset-name']));
  } catch (err) {
    throw new UsageError(`--dataset-name: ${(err as Error).message}`);
  }
  const wrong = given.find((f) => !(ONLY_FOR[name] ?? []).includes(f));
  if (wrong) throw new UsageError(`--${wrong} does not apply to --dataset-name ${name}; drop it`);
  const s = (k: keyof Flags) => v[k] as string | undefined;
  const o: Omit<LoadDatasetOptions, 'numPrompts' | 'seed' | 'api' | 'ignoreEos'> = { name };
  if (s('dataset-path') !== undefined) o.path = s('dataset-path');
  const outputLen =
    intFlag('random-output-len', s('random-output-len'), 1) ??
    intFlag('sharegpt-output-len', s('sharegpt-output-len'), 1) ??
    intFlag('custom-output-len', s('custom-output-len'), 1) ??
    intFlag('prefix-repetition-output-len', s('prefix-repetition-output-len'), 1);
  if (outputLen !== undefined) o.outputLen = outputLen;
  const inputLen = intFlag('random-input-len', s('random-input-len'), 1);
  if (inputLen !== undefined) o.inputLen = inputLen;
  const ratio = s('random-range-ratio');
  if (ratio !== undefined) {
    const r = Number(ratio);
    if (ratio.trim() === '' || !(r >= 0 && r < 1)) throw new UsageError(`--random-range-ratio must be in [0, 1), got '${ratio}'`);
    o.rangeRatio = r;
  }
  const prefix: NonNullable<LoadDatasetOptions['prefix']> = {};
  const pl = intFlag('prefix-repetition-prefix-len', s('prefix-repetition-prefix-len'), 0);
  const sl = intFlag('prefix-repetition-suffix-len', s('prefix-repetition-suffix-len'), 1);
  const np = intFlag('prefix-repetition-num-prefixes', s('prefix-repetition-num-prefixes'), 1);
  if (pl !== undefined) prefix.prefixLen = pl;
  if (sl !== undefined) prefix.suffixLen = sl;
  if (np !== undefined) prefix.numPrefixes = np;
  if (Object.keys(prefix).length > 0) o.prefix = prefix;
  return o;
}

/** `--goodput` pairs as an Slo, or undefined. vLLM's errors become UsageErrors. */
export function goodputFlag(v: Flags): Slo | undefined {
  const pairs = v.goodput as string[] | undefined;
  if (pairs === undefined) return undefined;
  try {
    return parseGoodput(pairs);
  } catch (err) {
    throw new UsageError(`--goodput: ${(err as Error).message}`);
  }
}

/**
 * Metrics `--percentile-metrics` may name: vLLM's (vllm/benchmarks/serve.py `add_cli_args`,
 * `benchmark`). The two client-queue names are LoadLab's own measures under vLLM's names, with
 * deviations named in src/cli/percentile-table.ts `metricSamples`.
 */
export const PERCENTILE_METRICS = ['ttft', 'tpot', 'itl', 'e2el', 'client_queue_time', 'e2el_including_client_queue'] as const;
/** A metric name of `--percentile-metrics`. */
export type PercentileMetric = (typeof PERCENTILE_METRICS)[number];

/**
 * `--percentile-metrics` (default `ttft,tpot,itl`) and `--metric-percentiles` (default `99`), vLLM's
 * defaults; undefined when neither is given (LoadLab's table: p50, p95, p99 of TTFT, TPOT, ITL, E2E).
 */
export function percentileFlags(v: Flags): { metrics: PercentileMetric[]; percentiles: number[] } | undefined {
  const m = v['percentile-metrics'] as string | undefined;
  const p = v['metric-percentiles'] as string | undefined;
  if (m === undefined && p === undefined) return undefined;
  const metrics = (m ?? 'ttft,tpot,itl').split(',').map((x) => x.trim());
  const bad = metrics.find((x) => !(PERCENTILE_METRICS as readonly string[]).includes(x));
  if (bad !== undefined)
    throw new UsageError(`--percentile-metrics: unknown metric '${bad}'; use a comma list of ${PERCENTILE_METRICS.join(', ')}`);
  const percentiles = (p ?? '99').split(',').map((x) => {
    const n = Number(x);
    try {
      if (x.trim() === '') throw new RangeError('empty');
      checkPercentile(n);
    } catch {
      throw new UsageError(
        `--metric-percentiles: '${x}' is not a percentile; use a comma list of numbers in 0..100, e.g. 50,90,99`,
      );
    }
    return n;
  });
  return { metrics: metrics as PercentileMetric[], percentiles };
}

/** The load flags `--multi-turn` replaces, and why each does not apply. */
const NOT_WITH_MULTI_TURN: Record<string, string> = {
  'request-rate': 'each turn is sent after the previous answer plus --think-time-ms',
  burstiness: 'each turn is sent after the previous answer plus --think-time-ms',
  duration: 'conversations are replayed to their end; choose how many with --num-prompts',
  'num-warmups':
    'a warm-up would send first turns that the conversations send again, and the prefix cache would make them look faster',
};

/**
 * `--multi-turn` (sharegpt only: each conversation replayed turn by turn, each turn after the live
 * answer to the previous one; `--max-concurrency` = conversations in flight, default 1;
 * `--num-prompts` = conversations) and `--think-time-ms MS` (pause after each answer, default 0).
 * Undefined without `--multi-turn`. Throws UsageError for the chat-less API and the flags it replaces.
 */
export function multiTurnFlags(v: Flags & Record<string, unknown>): { thinkTimeMs: number } | undefined {
  const think = v['think-time-ms'] as string | undefined;
  if (!v['multi-turn']) {
    if (think !== undefined)
      throw new UsageError('--think-time-ms needs --multi-turn (the pause between turns of a conversation)');
    return undefined;
  }
  if (v.api === 'completions') throw new UsageError('--multi-turn sends chat conversations; drop --api completions');
  const stray = Object.keys(NOT_WITH_MULTI_TURN).find((k) => v[k] !== undefined);
  if (stray) throw new UsageError(`--${stray} does not apply with --multi-turn: ${NOT_WITH_MULTI_TURN[stray]}; drop it`);
  const ms = think === undefined ? 0 : Number(think);
  if (think !== undefined && (think.trim() === '' || !(ms >= 0 && ms <= 2 ** 31 - 1))) {
    throw new UsageError(`--think-time-ms must be a number of ms ≥ 0, e.g. 2000, got '${think}'`);
  }
  return { thinkTimeMs: ms };
}

/**
 * `--result-json vllm` (write `vllm-result.json`, `vllm bench serve`'s result keys, into the run folder)
 * or `--result-json vllm:FILE` (write it to FILE); undefined when not given.
 */
export function resultJsonFlag(v: Flags): { file?: string } | undefined {
  const x = v['result-json'] as string | undefined;
  if (x === undefined) return undefined;
  if (x === 'vllm') return {};
  if (x.startsWith('vllm:') && x.length > 5) return { file: x.slice(5) };
  throw new UsageError(`--result-json takes vllm (writes vllm-result.json into the run folder) or vllm:FILE, got '${x}'`);
}
