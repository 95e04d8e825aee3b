/**
 * The flags of `loadlab run`: its usage text and their checks. A mistake throws UsageError
 * (exit 2) whose message names the fix. Where `vllm bench serve` has the same concept, the flag
 * has its name and meaning (vllm/benchmarks/serve.py): `--request-rate` (default inf),
 * `--burstiness`, `--max-concurrency`, `--num-prompts`, `--num-warmups`, `--seed`, `--ignore-eos`,
 * the dataset flags (run-dataset-args.ts), `--goodput`, `--percentile-metrics`, `--metric-percentiles`,
 * `--header`, `--extra-body` and the sampling flags (run-request-args.ts). LoadLab's own:
 * `--duration`, `--metrics-interval`, `--ci` (run-measure-args.ts).
 * Deviation: `--num-prompts` has no default (vLLM's is 1000) except for a trace (all its lines) and
 * with `--duration` (then it is an upper bound: `durationCount`).
 */

import { parseArgs } from 'node:util';
import { checkRunDir } from '../run/folder';
import { burst, closedLoop, type LoadShape, openLoop } from '../schedule/shapes';
import type { ChunkStamp } from '../client/chunk-stamp';
import type { Slo } from '../types';
import { CHALLENGES_PROMPT } from '../workload/prompts';
import { DATASET_OPTIONS, datasetFlags, goodputFlag, percentileFlags, spreadGoodput } from './run-dataset-args';
import { durationCount, durationFlag, MEASURE_OPTIONS, measureFlags } from './run-measure-args';
import { REQUEST_OPTIONS, type RequestExtras, requestFlags, spreadRequestArgs } from './run-request-args';
import { UsageError } from './usage-error';

export { UsageError } from './usage-error';

/** Usage of `loadlab run`. */
export const RUN_HELP = `Usage: loadlab run --base-url URL --out DIR (--num-prompts N | --duration S) [load] [dataset] [options]
Flags named as vllm bench serve's mean what they mean there.

Load:
  --request-rate R                  requests/s, Poisson by default; inf (default) = all at once
  --burstiness K                    gamma shape of the gaps (1 Poisson, <1 burstier, inf constant)
  --max-concurrency C               cap requests in flight; with rate inf: a closed loop of C
  --num-prompts N                   requests in all (required; a trace defaults to all its lines;
                                    with --duration an upper bound, default rate×S, or 10000 for a closed loop)
  --duration S                      stop issuing after S s of load; requests in flight finish and are kept
  --seed S                          arrivals and dataset seed (default 0)

Dataset (default: one prompt, --prompt or --prompt-tokens):
  --dataset-name sharegpt|custom|random|prefix_repetition|trace   (jsonl = custom)
  --dataset-path FILE               sharegpt JSON, custom JSONL {"prompt","output_len"}, or trace JSONL
                                    {"timestamp" ms,"input_length","output_length"} (sent at its own times)
  --random-input-len L --random-output-len L --random-range-ratio R   (defaults 1024, 128, 0)
  --sharegpt-output-len L | --custom-output-len L (default 256)
  --multi-turn                      sharegpt: replay each conversation turn by turn, each turn after the live
                                    answer (history = answers received); --num-prompts = conversations,
                                    --max-concurrency = conversations in flight (default 1)
  --think-time-ms MS                with --multi-turn: pause after each answer (default 0)
  --prefix-repetition-prefix-len L --prefix-repetition-suffix-len L (256, 256)
  --prefix-repetition-num-prefixes K --prefix-repetition-output-len L (10, 128)

Request:
  --model M                         default: the server's first model (GET /v1/models)
  --api chat|completions            default chat
  --prompt TEXT                     default the course prompt "${CHALLENGES_PROMPT}"
  --prompt-tokens P                 a prompt of P tokens (counted by the server's /tokenize)
  --max-tokens T                    output cap without a dataset (default 128)
  --ignore-eos                      force exactly the asked output length
  --header KEY=VALUE …              extra HTTP headers on every request (only their names are saved)
  --extra-body JSON                 a JSON object merged into every request body, e.g. '{"top_k": 20}'
  --temperature T  --top-p P  --top-k K  --min-p P            sampling parameters, sent only when given
  --frequency-penalty F  --presence-penalty F  --repetition-penalty R

Report:
  --goodput ttft:MS tpot:MS e2el:MS requests/s meeting every SLO (vLLM's definition)
  --percentile-metrics ttft,tpot,itl,e2el   --metric-percentiles 50,90,99   (vLLM defaults ttft,tpot,itl and 99)
                                    also client_queue_time, e2el_including_client_queue (from the intended send time)
  --ci                              95% bootstrap intervals beside the percentiles (seeded)
  --metrics-interval MS             scrape the server's /metrics every MS ms into metrics.jsonl
  (the table always has queue time and TTFT from the intended send time)
  --result-json vllm[:FILE]         also write vllm bench serve's result JSON (default DIR/vllm-result.json)

Run:
  --out DIR                         run folder (required)
  --replace                         overwrite a complete run in DIR (only its run files)
  --num-warmups W                   warm-up requests first, not measured (default 0)
  --timeout-s S                     whole-request timeout (default 600)
  --idle-timeout-s S                no-bytes timeout (default 60)
  --api-key KEY                     default $LOADLAB_API_KEY or $OPENAI_API_KEY
  --quiet                           no progress line
  --workers N                       send from N worker threads, for loads beyond one core (default 1)
  --stamp turn|callback             stamp chunks once per event-loop turn (default) or per message, as vllm bench serve
`;

/** `--name` as an integer ≥ `min` (default 1), or undefined when not given. */
export function int(name: string, v: string | undefined, min = 1): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got '${v}'`);
  return n;
}

/** `--name` as a number > 0 (`inf` allowed with `allowInf`), or undefined when not given. */
function pos(name: string, v: string | undefined, allowInf = false): number | undefined {
  if (v === undefined) return undefined;
  const n = allowInf && /^inf(inity)?$/i.test(v) ? Infinity : Number(v);
  if (!(n > 0)) throw new UsageError(`--${name} must be a number > 0, got '${v}'`);
  return n;
}

/** Longest timer Node can arm: 2^31−1 ms (a longer one fires after 1 ms, with a warning), in s. */
const MAX_TIMER_S = Math.floor((2 ** 31 - 1) / 1000);

/** `--name` as seconds > 0 that a Node timer can hold, or undefined when not given. */
export function seconds(name: string, v: string | undefined): number | undefined {
  const n = pos(name, v);
  if (n !== undefined && n > MAX_TIMER_S) {
    throw new UsageError(`--${name} must be at most ${MAX_TIMER_S} s (about 24 days, the longest timer Node allows), got '${v}'`);
  }
  return n;
}

const OPTIONS = {
  'base-url': { type: 'string' },
  model: { type: 'string' },
  api: { type: 'string' },
  'request-rate': { type: 'string' },
  burstiness: { type: 'string' },
  'max-concurrency': { type: 'string' },
  'num-prompts': { type: 'string' },
  seed: { type: 'string' },
  prompt: { type: 'string' },
  'prompt-tokens': { type: 'string' },
  'max-tokens': { type: 'string' },
  'ignore-eos': { type: 'boolean' },
  'num-warmups': { type: 'string' },
  'timeout-s': { type: 'string' },
  'idle-timeout-s': { type: 'string' },
  out: { type: 'string' },
  replace: { type: 'boolean' },
  'api-key': { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  ...DATASET_OPTIONS,
  ...REQUEST_OPTIONS,
  ...MEASURE_OPTIONS,
} as const;

/** Flags renamed to vllm bench serve's names in 0.1 (no aliases): old name → what to write now. */
const RENAMED: Record<string, string> = {
  '--concurrency': '--max-concurrency C (with the default --request-rate inf it is a closed loop of C)',
  '--requests': '--num-prompts N',
  '--rate': '--request-rate R',
  '--burst': '--num-prompts N (the default --request-rate inf sends them all at once)',
  '--warmup': '--num-warmups W',
};

/** The parsed flags of `loadlab run`. */
export type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

/** The load shape from the flags (vLLM's meaning: rate inf = all at once; a cap on it = a closed loop). */
export function shapeFrom(v: Values, n: number): LoadShape {
  const rate = v['request-rate'] === undefined ? Infinity : pos('request-rate', v['request-rate'], true)!;
  const mc = int('max-concurrency', v['max-concurrency']);
  const b = pos('burstiness', v.burstiness, true);
  if (rate === Infinity) {
    if (b !== undefined) throw new UsageError('--burstiness only applies with a finite --request-rate R');
    return mc !== undefined ? closedLoop(mc) : burst(n);
  }
  const seed = int('seed', v.seed, 0);
  return openLoop(rate, {
    ...(b !== undefined ? { burstiness: b } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(mc !== undefined ? { maxConcurrency: mc } : {}),
  });
}

/** What `parseRunArgs` returns: the flags and what they mean. */
export interface RunArgs {
  v: Values;
  /** The load shape; undefined for a trace, whose shape comes from the file. */
  shape?: LoadShape;
  /** `--num-prompts` (undefined only for a trace). */
  numPrompts?: number;
  dataset?: ReturnType<typeof datasetFlags>;
  slo?: Slo;
  percentiles?: ReturnType<typeof percentileFlags>;
  /** Headers and body fields added to every request. */
  request: RequestExtras;
  /** `--duration`, s. */
  durationS?: number;
  /** `--metrics-interval`, ms. */
  metricsIntervalMs?: number;
  /** `--ci`: bootstrap intervals in the printed table. */
  ci: boolean;
  /** `--workers`: worker threads. */
  workers?: number;
  /** `--stamp`: how token chunks are stamped. */
  stamp?: ChunkStamp;
}

function renamedCheck(argv: readonly string[]): void {
  for (const a of argv) {
    const flag = a.split('=')[0];
    if (RENAMED[flag]) throw new UsageError(`${flag} is now ${RENAMED[flag]}, as vllm bench serve names it`);
  }
}

/** The checked flags, or `'help'`. Throws UsageError (or checkRunDir's Error) naming the fix. */
export function parseRunArgs(argv: string[]): 'help' | RunArgs {
  renamedCheck(argv);
  const v = parseArgs({
    args: spreadRequestArgs(spreadGoodput(argv)),
    options: OPTIONS,
    strict: true,
    allowPositionals: false,
  }).values;
  if (v.help) return 'help';
  if (!v['base-url']) throw new UsageError('--base-url is required, e.g. --base-url http://127.0.0.1:8000');
  if (!v.out) throw new UsageError('--out DIR is required: the folder where the run is saved, e.g. --out data/runs/c8');
  if (v.api !== undefined && v.api !== 'chat' && v.api !== 'completions') {
    throw new UsageError(`--api must be chat or completions, got '${v.api}'`);
  }
  if (v.prompt !== undefined && v['prompt-tokens'] !== undefined) {
    throw new UsageError('--prompt and --prompt-tokens exclude each other; give the text or its length');
  }
  const dataset = datasetFlags(v);
  if (dataset && (v.prompt !== undefined || v['prompt-tokens'] !== undefined || v['max-tokens'] !== undefined)) {
    const f = v.prompt !== undefined ? 'prompt' : v['prompt-tokens'] !== undefined ? 'prompt-tokens' : 'max-tokens';
    throw new UsageError(`--${f} does not apply with --dataset-name: the dataset gives the prompts and output lengths`);
  }
  let numPrompts = int('num-prompts', v['num-prompts']);
  const durationS = durationFlag(v);
  const out: RunArgs = { v, request: requestFlags(v, v['api-key'] !== undefined), ci: v.ci ?? false };
  if (dataset?.name === 'trace') {
    const load = (['request-rate', 'burstiness', 'max-concurrency'] as const).find((k) => v[k] !== undefined);
    if (load) throw new UsageError(`--${load} does not apply to a trace, which is sent at its own timestamps; drop it`);
  } else if (durationS !== undefined) {
    out.shape = shapeFrom(v, numPrompts ?? 1);
    numPrompts = durationCount(out.shape, durationS, numPrompts, dataset !== undefined);
  } else {
    if (numPrompts === undefined)
      throw new UsageError('--num-prompts N is required (or --duration S): how many requests to send');
    out.shape = shapeFrom(v, numPrompts);
  }
  if (durationS !== undefined) out.durationS = durationS;
  Object.assign(out, measureFlags(v, out.shape, durationS));
  if (numPrompts !== undefined) out.numPrompts = numPrompts;
  if (dataset) out.dataset = dataset;
  const slo = goodputFlag(v);
  if (slo) out.slo = slo;
  const percentiles = percentileFlags(v);
  if (percentiles) out.percentiles = percentiles;
  seconds('timeout-s', v['timeout-s']);
  seconds('idle-timeout-s', v['idle-timeout-s']);
  int('num-warmups', v['num-warmups'], 0);
  checkRunDir(v.out, v.replace ?? false, '--replace'); // before any request: a bad --out fails first
  return out;
}
