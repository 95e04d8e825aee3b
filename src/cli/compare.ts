/**
 * `loadlab compare A B … [--json] [--threshold PCT] [--iterations N]`: runs side by side with bootstrap intervals,
 * and for each later run against A which differences are real (the interval of the difference
 * excludes 0), which the data cannot tell, and, with `--threshold`, which are negligible.
 * Exit 0 after printing, 2 for a usage mistake or a folder that is no run.
 */
import { parseArgs } from 'node:util';
import { compareRuns } from '../report/compare';
import { formatComparison } from '../report/compare-text';
import { readReportRun } from '../report/report-input';
import type { CliIo } from './io';

/** Usage text of `loadlab compare`. */
export const COMPARE_HELP = `loadlab compare A B [C …] [--json] [--threshold PCT] [--iterations N]

Compare run folders side by side: TTFT, TPOT, ITL and E2E at p50 and p99 with 95% bootstrap intervals
(2000 resamples, seed 1), client queue time, TTFT from the intended send time, req/s, output tok/s and
goodput. For each later run against A: the difference, the bootstrap interval of the difference and a
verdict: "real" only when that interval excludes 0, otherwise "cannot tell". A run whose measurer was
the bottleneck (client-bound, simulator behind) is compared on p50 and says so. Each run is labelled
from its own manifest (simulated, real, or simulated and real mixed).

  --json           print the comparison as JSON instead of text
  --threshold PCT  a difference whose interval lies within ±PCT % of A's value is "negligible"
  --iterations N   bootstrap resamples (default 2000). The cost grows with values × resamples, and ITL
                   pools every inter-token gap, so long runs take a while: fewer resamples are faster
  --help, -h       this help
`;

/** Run `loadlab compare` with `argv` (after `compare`); returns the exit code. */
export function compareCommand(argv: string[], io: CliIo): number {
  let values: { json?: boolean; threshold?: string; iterations?: string; help?: boolean };
  let positionals: string[];
  try {
    const parsed = parseArgs({
      args: argv,
      options: {
        json: { type: 'boolean' },
        threshold: { type: 'string' },
        iterations: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
    values = parsed.values;
    positionals = parsed.positionals;
  } catch (err) {
    io.stderr.write(`loadlab compare: ${(err as Error).message}\n(loadlab compare --help lists the flags)\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(COMPARE_HELP);
    return 0;
  }
  const threshold = values.threshold === undefined ? undefined : Number(values.threshold);
  if (threshold !== undefined && !(Number.isFinite(threshold) && threshold > 0)) {
    io.stderr.write(`loadlab compare: --threshold must be a percent > 0 (e.g. 5 for ±5 %), got '${values.threshold}'\n`);
    return 2;
  }
  const iterations = values.iterations === undefined ? undefined : Number(values.iterations);
  if (iterations !== undefined && !(Number.isInteger(iterations) && iterations >= 100)) {
    io.stderr.write(`loadlab compare: --iterations must be an integer ≥ 100 (2000 is the default), got '${values.iterations}'\n`);
    return 2;
  }
  if (positionals.length < 2) {
    io.stderr.write(`loadlab compare: give at least two run folders (the first is the baseline), got ${positionals.length}\n`);
    return 2;
  }
  try {
    const runs = positionals.map(readReportRun);
    const gaps = runs.reduce((n, r) => n + r.records.reduce((k, rec) => k + (rec.warmup ? 0 : rec.itlMs.length), 0), 0);
    if (gaps > 100_000) {
      io.stderr.write(
        `loadlab compare: bootstrapping ${gaps} inter-token gaps × ${iterations ?? 2000} resamples; this can take a minute (--iterations 500 is 4× faster)\n`,
      );
    }
    const c = compareRuns(runs, {
      ...(threshold !== undefined ? { thresholdPct: threshold } : {}),
      ...(iterations !== undefined ? { bootstrap: { iterations } } : {}),
    });
    io.stdout.write(
      values.json
        ? `${JSON.stringify(c, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? null : v), 2)}\n`
        : formatComparison(c),
    );
    return 0;
  } catch (err) {
    io.stderr.write(`loadlab compare: ${(err as Error).message}\n`);
    return 2;
  }
}
