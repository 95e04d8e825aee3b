/**
 * The flags of `loadlab sweep`: the sweep's own (`--out`, a list for `--max-concurrency` or
 * `--request-rate`, or `--slo-search LO,HI` with `--slo-steps` and `--slo-attainment`, `--replace`),
 * and every other flag of `loadlab run`, checked by `parseRunArgs` itself (run-args.ts) and passed to
 * each point's run unchanged. A mistake throws a UsageError (exit 2) naming the fix.
 */

import { join } from 'node:path';
import { stableJson } from '../runner/saved-point';
import {
  checkAttainment,
  DEFAULT_ATTAINMENT,
  DEFAULT_SLO_STEPS,
  parseBounds,
  parseLoadList,
  pointName,
  type SweepPlan,
  type SweepVariable,
} from '../sweep/plan';
import { parseRunArgs, type RunArgs } from './run-args';
import { UsageError } from './usage-error';

/** Usage of `loadlab sweep`. */
export const SWEEP_HELP = `Usage: loadlab sweep --base-url URL --out DIR --num-prompts N
         (--max-concurrency LIST | --request-rate LIST | --slo-search LO,HI --goodput …) [loadlab run flags]
One run folder per point under DIR (DIR/c=4, DIR/rate=2), and DIR/sweep.json: every point's numbers
and verdict, the knee, the saturation point and the capacity under each SLO.

Sweep:
  --max-concurrency 1,4,16,64       one point per concurrency (a closed loop, or a cap with --request-rate R)
  --request-rate 1,2,4,8            one point per request rate, req/s (Poisson; --max-concurrency C caps it)
  --slo-search LO,HI                the highest request rate in [LO, HI] req/s meeting --goodput, by bisection
  --slo-steps K                     most points the search measures (default ${DEFAULT_SLO_STEPS})
  --slo-attainment F                share of a point's requests that must meet every --goodput SLO
                                    for the point to meet them (default ${DEFAULT_ATTAINMENT})
  --goodput ttft:MS tpot:MS e2el:MS the SLOs (vLLM's --goodput); gives the capacity lines
  --out DIR                         the sweep folder (required)
  --replace                         measure every point again, replacing complete runs

Re-running the same command resumes: complete points measured with the same flags on the same
server are reused, interrupted ones are measured again. Ctrl-C stops the current point (saved as
interrupted), writes sweep.json and exits 130. Every other flag is loadlab run's (loadlab run --help).
`;

/** What `parseSweepArgs` returns. */
export interface SweepArgs {
  out: string;
  plan: SweepPlan;
  replace: boolean;
  /** The flags passed to every point's run (the swept flag and --out excluded). */
  runFlags: string[];
  /** The full `loadlab run` argv of a point measured into `dir` (API key included: never written to disk). */
  runArgv: (value: number, dir: string, replace: boolean) => string[];
  /** The run flags of the first point, parsed (for --base-url, --model, --api-key, --quiet). */
  run: RunArgs;
  /** A point's run flags as one canonical string (no API key, base URL, model or report-only flags). */
  keyOf: (value: number) => string;
}

/** The sweep's own flags; the rest belong to `loadlab run`. `true` = a flag without a value. */
const OWN: Record<string, boolean> = {
  '--out': false,
  '--max-concurrency': false,
  '--request-rate': false,
  '--slo-search': false,
  '--slo-steps': false,
  '--slo-attainment': false,
  '--replace': true,
};

/** Split `argv` into the sweep's own flags and the rest (both `--flag value` and `--flag=value`). */
function splitOwn(argv: readonly string[]): { own: Record<string, string>; rest: string[] } {
  const own: Record<string, string> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const eq = argv[i].startsWith('--') ? argv[i].indexOf('=') : -1;
    const flag = eq > 0 ? argv[i].slice(0, eq) : argv[i];
    const inline = eq > 0 ? argv[i].slice(eq + 1) : undefined;
    if (!(flag in OWN)) {
      rest.push(argv[i]);
      continue;
    }
    if (flag in own) throw new UsageError(`${flag} is given twice; give it once`);
    if (OWN[flag]) own[flag] = 'true';
    else if (inline !== undefined) own[flag] = inline;
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) own[flag] = argv[++i];
    else throw new UsageError(`${flag} needs a value`);
  }
  return { own, rest };
}

/** Run flags that do not change what is measured, left out of a point's key. */
const NOT_IN_KEY = new Set([
  'api-key',
  'base-url',
  'model',
  'quiet',
  'goodput',
  'percentile-metrics',
  'metric-percentiles',
  'out',
  'replace',
  'help',
]);

function wrap<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof RangeError) throw new UsageError(err.message);
    throw err;
  }
}

/** The swept variable and the fixed load flag, from the sweep's own flags. */
function chooseVariable(own: Record<string, string>): { variable: SweepVariable; list?: string; fixed: string[] } {
  const mc = own['--max-concurrency'];
  const rate = own['--request-rate'];
  if (own['--slo-search'] !== undefined) {
    if (rate !== undefined) throw new UsageError('--slo-search searches the request rate itself; drop --request-rate');
    if (mc?.includes(',')) throw new UsageError('--slo-search takes one --max-concurrency cap at most, not a list');
    return { variable: 'rate', fixed: mc !== undefined ? ['--max-concurrency', mc] : [] };
  }
  const mcList = mc?.includes(',') || (mc !== undefined && rate === undefined);
  const rateList = rate?.includes(',') || (rate !== undefined && mc === undefined);
  if (mcList && rateList)
    throw new UsageError('sweep one load variable: a list for --max-concurrency or for --request-rate, not both');
  if (mcList) return { variable: 'concurrency', list: mc!, fixed: rate !== undefined ? ['--request-rate', rate] : [] };
  if (rateList) return { variable: 'rate', list: rate!, fixed: mc !== undefined ? ['--max-concurrency', mc] : [] };
  throw new UsageError(
    'give the points: --max-concurrency 1,4,16,64, or --request-rate 1,2,4,8, or --slo-search LO,HI with --goodput (one point: loadlab run)',
  );
}

/** The checked flags of `loadlab sweep`, or `'help'`. Throws UsageError naming the fix. */
export function parseSweepArgs(argv: string[]): 'help' | SweepArgs {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  const { own, rest } = splitOwn(argv);
  const ds = rest.findIndex((a) => a === '--dataset-name' || a.startsWith('--dataset-name='));
  if (ds >= 0 && (rest[ds].split('=')[1] ?? rest[ds + 1]) === 'trace') {
    throw new UsageError('a trace is sent at its own timestamps, so it has no load to sweep; measure it with loadlab run');
  }
  const out = own['--out'];
  if (!out) throw new UsageError('--out DIR is required: the sweep folder, e.g. --out data/sweeps/qwen-c');
  const { variable, list, fixed } = chooseVariable(own);
  const flag = variable === 'concurrency' ? '--max-concurrency' : '--request-rate';
  const values = list !== undefined ? wrap(() => parseLoadList(flag, list, variable)) : undefined;
  const pointFlags = (v: number) => [...fixed, flag, String(v)];
  const first = values?.[0] ?? 1;
  const run = parseRunArgs([...rest, ...pointFlags(first), '--out', join(out, pointName(variable, first)), '--replace']);
  if (run === 'help') return 'help';
  const attainmentText = own['--slo-attainment'];
  if (attainmentText !== undefined && !run.slo) throw new UsageError('--slo-attainment needs --goodput: the SLOs it counts');
  const attainment =
    attainmentText === undefined ? DEFAULT_ATTAINMENT : wrap(() => checkAttainment('--slo-attainment', Number(attainmentText)));
  let plan: SweepPlan;
  if (own['--slo-search'] !== undefined) {
    if (!run.slo) throw new UsageError('--slo-search needs --goodput, e.g. --goodput ttft:500 tpot:50: the SLOs to meet');
    const steps = Number(own['--slo-steps'] ?? DEFAULT_SLO_STEPS);
    if (!Number.isInteger(steps) || steps < 2)
      throw new UsageError(`--slo-steps must be an integer ≥ 2 (both bounds), got '${own['--slo-steps']}'`);
    plan = {
      mode: 'slo-search',
      variable: 'rate',
      bounds: wrap(() => parseBounds(own['--slo-search'])),
      steps,
      slo: run.slo,
      attainment,
    };
  } else {
    if (own['--slo-steps'] !== undefined) throw new UsageError('--slo-steps applies only with --slo-search; drop it');
    plan = { mode: 'list', variable, values: values!, attainment, ...(run.slo ? { slo: run.slo } : {}) };
  }
  const keyOf = (v: number) => {
    const pv = parseRunArgs([...rest, ...pointFlags(v), '--out', join(out, pointName(variable, v)), '--replace']);
    const vals = pv === 'help' ? {} : (pv.v as Record<string, unknown>);
    return stableJson(Object.fromEntries(Object.entries(vals).filter(([k]) => !NOT_IN_KEY.has(k))));
  };
  const apiAt = rest.indexOf('--api-key');
  const shown = rest.map((a, i) => (i === apiAt + 1 && apiAt >= 0 ? '***' : a.startsWith('--api-key=') ? '--api-key=***' : a));
  const runArgv = (v: number, dir: string, replace: boolean) => [
    ...rest,
    ...pointFlags(v),
    '--out',
    dir,
    ...(replace ? ['--replace'] : []),
  ];
  return { out, plan, replace: own['--replace'] === 'true', runFlags: [...fixed, ...shown], runArgv, run, keyOf };
}
