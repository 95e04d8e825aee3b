/**
 * `loadlab calibrate --base-url URL --out FILE [--quick] [--prior NAME|FILE] [--model NAME]`: fit the
 * simulator's cost model to a server (`src/fit/`) and write a `calibrated` profile file that
 * `loadlab sim --profile FILE` runs. Progress goes to stderr, the fit as a table to stdout.
 * Exit 0 written, 1 the calibration failed (message names the fix), 2 a wrong flag.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { resolveApiKey } from '../client/url';
import { type CalibrationResult, calibrate } from '../fit/calibration';
import { calibratedDocument, profileIdFor } from '../fit/profile-doc';
import { FIT_PARAMS } from '../fit/step-model';
import { defaultProfileName, loadProfileFile } from '../sim/engine/profile-file';
import type { CliIo } from './io';
import { UsageError } from './usage-error';

/** `loadlab calibrate --help`. */
export const CALIBRATE_HELP = `loadlab calibrate: fit the simulator's cost model to a server, write a profile file

Usage:
  loadlab calibrate --base-url URL --out FILE [--quick] [--prior NAME|FILE] [--model NAME]

  --base-url URL     the server root (vLLM or anything OpenAI-compatible), e.g. http://127.0.0.1:8000
  --out FILE         the calibrated profile to write (JSON; then: loadlab sim --profile FILE)
  --quick            the shorter probe plan (about half the time)
  --prior NAME|FILE  the profile whose GPU and model the fit assumes and starts from
                     (default $LOADLAB_SIM_PROFILE, else ${defaultProfileName({})}); pick the one matching the model
  --model NAME       the served model name (default: the server's first model)
  --api-key KEY      bearer token (default $LOADLAB_API_KEY, else $OPENAI_API_KEY)

It sends fixed-output requests (about 1 minute, under 3; the server should be otherwise idle) and reads
the means from the server's /metrics when it has them, else from client timings. A parameter the probes
cannot pin down is listed as not identified, never invented.
`;

interface CalibrateArgs {
  baseUrl: string;
  out: string;
  quick: boolean;
  prior: string;
  model?: string;
  apiKey?: string;
}

function parseArgs(argv: string[]): CalibrateArgs | 'help' {
  const a: Partial<CalibrateArgs> = { quick: false, prior: defaultProfileName() };
  const value = (i: number, flag: string) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--'))
      throw new UsageError(`${flag} needs a value, e.g. ${flag} ${flag === '--out' ? 'profiles/my-gpu.json' : '…'}`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i];
    if (f === '--help' || f === '-h') return 'help';
    else if (f === '--quick') a.quick = true;
    else if (f === '--base-url') a.baseUrl = value(i++, f);
    else if (f === '--out') a.out = value(i++, f);
    else if (f === '--prior') a.prior = value(i++, f);
    else if (f === '--model') a.model = value(i++, f);
    else if (f === '--api-key') a.apiKey = value(i++, f);
    else throw new UsageError(`unknown flag '${f}'; the flags are --base-url, --out, --quick, --prior, --model, --api-key`);
  }
  if (!a.baseUrl) throw new UsageError('--base-url URL is required, e.g. --base-url http://127.0.0.1:8000');
  if (!a.out) throw new UsageError('--out FILE is required, e.g. --out profiles/my-gpu.json');
  if (!a.out.endsWith('.json')) throw new UsageError(`--out must name a .json file, got '${a.out}'`);
  return a as CalibrateArgs;
}

const num = (v: number) => (Math.abs(v) >= 1e6 ? v.toExponential(3) : Number(v.toPrecision(4)).toString());

/** The fit as a fixed-width table: parameter, prior, fitted value, 95 % interval, status. */
export function formatFitTable(r: CalibrationResult): string {
  const unit = new Map(FIT_PARAMS.map((p) => [p.name, p.unit]));
  const rows = r.params.map((p) => [
    p.name,
    unit.get(p.name) ?? '',
    num(p.prior),
    num(p.value),
    p.identified ? `[${num(p.low!)}, ${num(p.high!)}]` : '',
    p.identified ? 'fitted' : `NOT IDENTIFIED: ${p.reason}`,
  ]);
  const head = ['parameter', 'unit', 'prior', 'value', '95 % interval', 'status'];
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c].length)));
  const line = (cells: string[]) => cells.map((x, c) => (c === cells.length - 1 ? x : x.padEnd(widths[c]))).join('  ');
  const where = r.target.simulated
    ? `a LoadLab SIMULATOR (profile ${r.target.simProfile ?? '?'}): a fit to a simulator, not to a GPU`
    : `${r.target.serverVersion ? `vLLM ${r.target.serverVersion}` : 'server'} at ${r.target.baseUrl}`;
  return [
    `Fit against ${where}; means from ${r.target.measuredFrom}; GPU: ${r.target.gpu.name ?? r.target.gpu.missing}`,
    line(head),
    ...rows.map(line),
    `${r.observations.length} observations, rms relative residual ${(100 * r.fit.rmsRelative).toFixed(2)} %, ${r.wallSeconds.toFixed(0)} s.`,
    r.fit.method,
    '',
  ].join('\n');
}

/** `loadlab calibrate …`; returns the exit code. */
export async function calibrateCommand(
  argv: string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  let a: CalibrateArgs | 'help';
  let prior: ReturnType<typeof loadProfileFile>;
  try {
    a = parseArgs(argv);
    if (a === 'help') {
      io.stdout.write(CALIBRATE_HELP);
      return 0;
    }
    prior = loadProfileFile(a.prior);
  } catch (err) {
    io.stderr.write(`loadlab calibrate: ${(err as Error).message}\n(loadlab calibrate --help lists the flags)\n`);
    return 2;
  }
  try {
    const apiKey = a.apiKey ?? resolveApiKey();
    const r = await calibrate({
      baseUrl: a.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, ''),
      prior: prior.profile,
      quick: a.quick,
      ...(a.model ? { model: a.model } : {}),
      ...(apiKey ? { apiKey } : {}),
      onProgress: (line) => io.stderr.write(`${line}\n`),
    });
    const file = resolve(a.out);
    const doc = calibratedDocument(r, prior, profileIdFor(file));
    writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
    io.stdout.write(formatFitTable(r));
    io.stdout.write(`wrote ${file}${r.notIdentified.length ? ` (not identified: ${r.notIdentified.join(', ')})` : ''}\n`);
    return 0;
  } catch (err) {
    io.stderr.write(`loadlab calibrate: ${(err as Error).message}\n`);
    return 1;
  }
}
