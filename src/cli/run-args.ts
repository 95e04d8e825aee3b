/**
 * The flags of `loadlab run`: its usage text and their checks. A mistake throws UsageError
 * (exit 2) whose message names the fix.
 */

import { parseArgs } from 'node:util';
import { CHALLENGES_PROMPT } from '../workload/prompts';
import { burst, closedLoop, openLoop, type LoadShape } from '../schedule/shapes';
import { checkRunDir } from '../run/folder';

/** Usage of `loadlab run`. */
export const RUN_HELP = `Usage: loadlab run --base-url URL --out DIR <load> [options]

Load (pick one):
  --concurrency C --requests N      closed loop: C requests in flight, N in all
  --burst N                         N requests at once
  --rate R --requests N             open loop at R req/s (Poisson by default)
      [--burstiness K]              gamma shape of the gaps (1 Poisson, <1 burstier, inf constant)
      [--seed S]                    arrival seed (default 0)
      [--max-concurrency M]         cap in-flight requests (late ones wait, shown as queueMs)

Request:
  --model M                         default: the server's first model (GET /v1/models)
  --api chat|completions            default chat
  --prompt TEXT                     default the course prompt "${CHALLENGES_PROMPT}"
  --prompt-tokens P                 a prompt of P tokens (counted by the server's /tokenize)
  --max-tokens T                    output cap (default 128)
  --ignore-eos                      force exactly --max-tokens output tokens

Run:
  --out DIR                         run folder (required)
  --replace                         overwrite a complete run in DIR (only its run files)
  --warmup W                        warm-up requests first, not measured (default 0)
  --timeout-s S                     whole-request timeout (default 600)
  --idle-timeout-s S                no-bytes timeout (default 60)
  --api-key KEY                     default $LOADLAB_API_KEY or $OPENAI_API_KEY
  --quiet                           no progress line
`;

/** A command-line mistake; the message says what to fix. */
export class UsageError extends Error {}

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
  concurrency: { type: 'string' },
  requests: { type: 'string' },
  burst: { type: 'string' },
  rate: { type: 'string' },
  burstiness: { type: 'string' },
  seed: { type: 'string' },
  'max-concurrency': { type: 'string' },
  prompt: { type: 'string' },
  'prompt-tokens': { type: 'string' },
  'max-tokens': { type: 'string' },
  'ignore-eos': { type: 'boolean' },
  warmup: { type: 'string' },
  'timeout-s': { type: 'string' },
  'idle-timeout-s': { type: 'string' },
  out: { type: 'string' },
  replace: { type: 'boolean' },
  'api-key': { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The parsed flags of `loadlab run`. */
export type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

/** The load shape and request count from the flags. */
function shapeFrom(v: Values): { shape: LoadShape; requests: number } {
  const given = (['concurrency', 'burst', 'rate'] as const).filter((k) => v[k] !== undefined);
  if (given.length === 0) {
    throw new UsageError('choose the load: --concurrency C --requests N, --burst N, or --rate R --requests N');
  }
  if (given.length > 1) {
    throw new UsageError(
      `--${given[0]} and --${given[1]} exclude each other; pick one load (to cap an open loop use --rate with --max-concurrency)`,
    );
  }
  const openOnly = (['burstiness', 'seed', 'max-concurrency'] as const).filter((k) => v[k] !== undefined);
  if (given[0] !== 'rate' && openOnly.length > 0) throw new UsageError(`--${openOnly[0]} only applies with --rate`);
  if (given[0] === 'burst') {
    if (v.requests !== undefined) throw new UsageError('--burst N already sets the request count; drop --requests');
    const n = int('burst', v.burst)!;
    return { shape: burst(n), requests: n };
  }
  const requests = int('requests', v.requests);
  if (requests === undefined) throw new UsageError(`--${given[0]} needs --requests N (how many requests in all)`);
  if (given[0] === 'concurrency') return { shape: closedLoop(int('concurrency', v.concurrency)!), requests };
  const o: { burstiness?: number; seed?: number; maxConcurrency?: number } = {};
  const b = pos('burstiness', v.burstiness, true);
  if (b !== undefined) o.burstiness = b;
  const seed = int('seed', v.seed, 0);
  if (seed !== undefined) o.seed = seed;
  const mc = int('max-concurrency', v['max-concurrency']);
  if (mc !== undefined) o.maxConcurrency = mc;
  return { shape: openLoop(pos('rate', v.rate, true)!, o), requests };
}

/** The checked flags, or `'help'`. Throws UsageError (or checkRunDir's Error) naming the fix. */
export function parseRunArgs(argv: string[]): 'help' | { v: Values; shape: LoadShape; requests: number } {
  const v = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }).values;
  if (v.help) return 'help';
  if (!v['base-url']) throw new UsageError('--base-url is required, e.g. --base-url http://127.0.0.1:8000');
  if (!v.out) throw new UsageError('--out DIR is required: the folder where the run is saved, e.g. --out data/runs/c8');
  if (v.api !== undefined && v.api !== 'chat' && v.api !== 'completions') {
    throw new UsageError(`--api must be chat or completions, got '${v.api}'`);
  }
  if (v.prompt !== undefined && v['prompt-tokens'] !== undefined) {
    throw new UsageError('--prompt and --prompt-tokens exclude each other; give the text or its length');
  }
  const { shape, requests } = shapeFrom(v);
  seconds('timeout-s', v['timeout-s']);
  seconds('idle-timeout-s', v['idle-timeout-s']);
  checkRunDir(v.out, v.replace ?? false, '--replace'); // before any request: a bad --out fails first
  return { v, shape, requests };
}
