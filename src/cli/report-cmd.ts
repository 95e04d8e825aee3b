/**
 * `loadlab report RUN|SWEEP [--out FILE] [--no-csv]`: write one standalone HTML report (plotly.js
 * inlined, opens offline) of a run folder or a sweep folder, plus `records.csv` (and `points.csv`
 * for a sweep) beside it. Exit 0 when written, 2 for a usage mistake or a folder that is no run
 * (the message says what a run folder holds), 1 when writing fails.
 */
import { parseArgs } from 'node:util';
import { manifestOf, type ReportRun } from '../report/report-input';
import { provenanceOf } from '../view/provenance';
import { writeReport } from '../report/write-report';
import type { CliIo } from './io';

/** Usage text of `loadlab report`. */
export const REPORT_HELP = `loadlab report RUN|SWEEP [--out FILE] [--no-csv]

Write one standalone HTML report of a run folder (loadlab run --out DIR) or a sweep folder (a folder
of run folders, e.g. loadlab sweep's DIR with c=1/, c=4/ …): where the numbers come from (simulated or
real, server version, flags, load, date), health warnings, the summary tables and the lessons' charts
(latency CDFs, percentile bars, request timeline, ITL over time, server timeline, GPU; for a sweep:
throughput and TTFT vs load, and a table of the points). plotly.js is inlined: the file opens offline.

  --out FILE   the HTML file (default RUN/report.html); CSV files go into the same folder
  --no-csv     do not write records.csv (one row per request) and points.csv (one row per sweep point)
  --help, -h   this help
`;

/** What measured the runs, from their own manifests: simulated, real, simulated and real mixed, or unknown. */
function provenanceText(runs: readonly ReportRun[]): string {
  const known = runs.flatMap((r) => (manifestOf(r) ? [{ manifest: manifestOf(r)! }] : []));
  const p = known.length < runs.length ? undefined : provenanceOf(known);
  return p === 'mixed' ? 'simulated and real mixed' : (p ?? 'provenance unknown: a manifest is unusable');
}

/** Run `loadlab report` with `argv` (after `report`); returns the exit code. */
export function reportCommand(argv: string[], io: CliIo): number {
  let values: { out?: string; 'no-csv'?: boolean; help?: boolean };
  let positionals: string[];
  try {
    const parsed = parseArgs({
      args: argv,
      options: { out: { type: 'string' }, 'no-csv': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: true,
    });
    values = parsed.values;
    positionals = parsed.positionals;
  } catch (err) {
    io.stderr.write(`loadlab report: ${(err as Error).message}\n(loadlab report --help lists the flags)\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(REPORT_HELP);
    return 0;
  }
  if (positionals.length !== 1) {
    io.stderr.write(
      `loadlab report: give exactly one run or sweep folder, got ${positionals.length}` +
        `${positionals.length ? ` (${positionals.join(' ')})` : ''}; to compare runs use loadlab compare A B\n`,
    );
    return 2;
  }
  let written: ReturnType<typeof writeReport>;
  try {
    written = writeReport(positionals[0], { ...(values.out ? { out: values.out } : {}), csv: !values['no-csv'] });
  } catch (err) {
    const msg = (err as Error).message;
    io.stderr.write(`loadlab report: ${msg}\n`);
    return /not a folder|not a run folder|holds no run|ending in \.html/.test(msg) ? 2 : 1;
  }
  const what =
    written.input.kind === 'run'
      ? `run ${written.input.run.label}`
      : `sweep of ${written.input.points.length} points (${written.input.points.map((p) => p.label).join(', ')})`;
  const runs = written.input.kind === 'run' ? [written.input.run] : written.input.points.map((p) => p.run);
  io.stdout.write(`report of ${what} (${provenanceText(runs)}): ${written.html}\n`);
  for (const r of runs) {
    const h = r.summary.health;
    if (h?.clientBound || h?.simBehind) {
      const why = [h.clientBound ? 'client-bound' : '', h.simBehind ? 'simulator behind real time' : '']
        .filter(Boolean)
        .join(', ');
      io.stderr.write(
        `loadlab report: warning: ${r.label} was ${why}: its tails include the measurer's own delay (see the banner)\n`,
      );
    }
  }
  for (const f of written.csv) io.stdout.write(`csv: ${f}\n`);
  io.stdout.write(`${written.records} request records; open the HTML file in a browser (no network needed)\n`);
  return 0;
}
