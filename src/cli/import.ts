/**
 * `loadlab import FILE --out DIR`: turn a `vllm bench serve --save-result --save-detailed` result
 * file into a LoadLab run folder (src/exchange/import-vllm.ts), so lessons and reports replot and
 * compare runs from either tool. A summary-only file (no `--save-detailed`) is refused with that fix.
 * Mistakes exit 2 with what to fix; success prints the run's report, labelled imported.
 */

import { parseArgs } from 'node:util';
import { importVllmResult } from '../exchange/import-vllm';
import { VllmResultError } from '../exchange/vllm-result-file';
import { checkRunDir } from '../run/folder';
import type { CliIo } from './io';
import { formatRunReport } from './report';
import { goodputFlag, spreadGoodput } from './run-dataset-args';
import { UsageError } from './usage-error';

/** Usage of `loadlab import`. */
export const IMPORT_HELP = `Usage: loadlab import FILE --out DIR [--replace] [--simulated | --real] [--goodput ttft:MS ...]
Import a vllm bench serve result (saved with --save-result --save-detailed) as a LoadLab run folder.

  FILE                      the JSON file vllm bench serve wrote
  --out DIR                 run folder to create (required)
  --replace                 overwrite a complete run in DIR (only its run files)
  --simulated | --real      what served the benchmark, if you know; default: server unknown (labelled so)
  --goodput ttft:MS tpot:MS e2el:MS   recompute goodput (vLLM does not save its SLOs)
  --name NAME               the run's name (default: the file's label, else its file name)
`;

const OPTIONS = {
  out: { type: 'string' },
  replace: { type: 'boolean' },
  simulated: { type: 'boolean' },
  real: { type: 'boolean' },
  goodput: { type: 'string', multiple: true },
  name: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The checked flags, or `'help'`. Throws UsageError naming the fix. */
function parse(argv: string[]) {
  const { values: v, positionals } = parseArgs({
    args: spreadGoodput(argv),
    options: OPTIONS,
    strict: true,
    allowPositionals: true,
  });
  if (v.help) return 'help' as const;
  if (positionals.length !== 1) {
    throw new UsageError(
      `give exactly one result file, e.g. loadlab import result.json --out data/imported/r1 (got ${positionals.length})`,
    );
  }
  if (!v.out) throw new UsageError('--out DIR is required: the run folder to create, e.g. --out data/imported/r1');
  if (v.simulated && v.real)
    throw new UsageError('--simulated and --real exclude each other; give the one that is true, or neither');
  checkRunDir(v.out, v.replace ?? false, '--replace');
  const slo = goodputFlag(v);
  return { file: positionals[0], v, slo };
}

/** `loadlab import …`; returns the exit code. */
export function importCommand(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr }): number {
  let args: ReturnType<typeof parse>;
  try {
    args = parse(argv);
  } catch (err) {
    io.stderr.write(`loadlab import: ${(err as Error).message}\n(loadlab import --help lists the flags)\n`);
    return 2;
  }
  if (args === 'help') {
    io.stdout.write(IMPORT_HELP);
    return 0;
  }
  const { file, v, slo } = args;
  try {
    const run = importVllmResult(file, v.out!, {
      replace: v.replace ?? false,
      ...(v.simulated ? { simulated: true } : v.real ? { simulated: false } : {}),
      ...(slo ? { slo } : {}),
      ...(v.name !== undefined ? { name: v.name } : {}),
    });
    const t = run.manifest.target;
    const server = t.simulated === undefined ? 'server unknown' : t.simulated ? 'simulated' : 'real server';
    io.stdout.write(
      formatRunReport({
        summary: run.summary,
        dir: run.dir,
        status: run.manifest.status,
        targetLabel: `imported from vllm bench serve (${server}) ${t.baseUrl} model ${t.model}`,
        loadLabel: String(run.manifest.load.options.label),
        warnings: run.notes.filter((n) => /unknown|not recomputed|no known pattern/.test(n)),
      }),
    );
    return 0;
  } catch (err) {
    io.stderr.write(`loadlab import: ${(err as Error).message}\n`);
    return err instanceof VllmResultError || err instanceof UsageError ? 2 : 1;
  }
}
