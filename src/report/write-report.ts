/**
 * `writeReport`: a run or sweep folder → one standalone HTML file (default `<dir>/report.html`)
 * and CSV files beside it (`records.csv`; for a sweep also `points.csv`). Every file is written
 * atomically (temp file, then rename), so a crash never leaves half a report. The run's own files
 * are only read.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeTextAtomic } from '../run/atomic';
import { pointsCsv, recordsCsv } from './csv';
import { readReportInput, type ReportInput, type ReportRun } from './report-input';
import { runReportHtml } from './report-run';
import { sweepReportHtml } from './report-sweep';

/** Options of `writeReport`. */
export interface WriteReportOptions {
  /** The HTML file; default `<dir>/report.html`. Its folder is created. CSV files go into the same folder. */
  out?: string;
  /** Write `records.csv` (and `points.csv` for a sweep); default true. */
  csv?: boolean;
}

/** What `writeReport` wrote. */
export interface WrittenReport {
  /** Absolute path of the HTML file. */
  html: string;
  /** Absolute paths of the CSV files written (none with `csv: false`). */
  csv: string[];
  /** What was read: one run, or a sweep's points. */
  input: ReportInput;
  /** Requests in `records.csv` (warm-up included), over every point of a sweep. */
  records: number;
}

/** The report page of `input`: a run's page, or a sweep's. */
export function reportHtml(input: ReportInput): string {
  return input.kind === 'run' ? runReportHtml(input.run) : sweepReportHtml(input);
}

/**
 * Write the report of the run or sweep folder `dir` (see the module comment). The HTML inlines
 * plotly.js (~4.8 MB) and needs no network.
 * @throws when `dir` is neither a run folder nor a folder of run folders (the message says what they hold),
 *   or when `out` does not end in `.html`.
 */
export function writeReport(dir: string, opts: WriteReportOptions = {}): WrittenReport {
  const out = path.resolve(opts.out ?? path.join(dir, 'report.html'));
  if (!/\.html?$/i.test(out)) throw new Error(`the report is an HTML file: give --out a name ending in .html, got ${out}`);
  const input = readReportInput(dir);
  const folder = path.dirname(out);
  fs.mkdirSync(folder, { recursive: true });
  writeTextAtomic(out, reportHtml(input));
  const runs: { run: ReportRun; point?: string }[] =
    input.kind === 'run' ? [{ run: input.run }] : input.points.map((p) => ({ run: p.run, point: p.label }));
  let records = 0;
  for (const r of runs) records += r.run.records.length;
  const csv: string[] = [];
  if (opts.csv !== false) {
    const rec = path.join(folder, 'records.csv');
    writeTextAtomic(rec, recordsCsv(runs));
    csv.push(rec);
    if (input.kind === 'sweep') {
      const pts = path.join(folder, 'points.csv');
      writeTextAtomic(pts, pointsCsv(input.points));
      csv.push(pts);
    }
  }
  return { html: out, csv, input, records };
}
