/**
 * `loadlab doctor`: is this machine ready for the lessons? One small function per check (in
 * `doctor-env.ts` and `doctor-target.ts`), each returning a `Check`; `doctor()` runs them in
 * order and, in a notebook, shows them as a table (00-setup's first cells call it); the CLI
 * prints one line per check (✓ ok, ✗ a required check failed, ! a warning) with the one
 * command that fixes it, or JSON with `--json`, and exits 1 when a required check failed.
 */
import { calibrateClient } from '../calibrate/calibrate';
import { type CpuUsers, usersWords, watchCpuUsers } from '../proc/cpu-users';
import { table } from '../view/tables';
import {
  checkDataWritable,
  checkKernelMonitors,
  checkModelPath,
  checkNode,
  checkPlotly,
  checkServeFlags,
  checkTslab,
} from './doctor-env';
import { checkGpu, checkMaxModelLen, checkTarget, checkVllmPort } from './doctor-target';
import type { Check } from './doctor-check';
import type { CliIo } from './io';

/** One check's outcome (defined in `doctor-check.ts`, re-exported for `src/index.ts`). */
export type { Check } from './doctor-check';

/** Names of the checks that can be skipped (`--skip`). */
export const DOCTOR_CHECKS = [
  'node',
  'tslab',
  'plotly',
  'data',
  'model',
  'flags',
  'target',
  'max_model_len',
  'gpu',
  'port',
  'monitors',
  'calibration',
] as const;
/** A check name for `skip`. */
export type DoctorCheckName = (typeof DOCTOR_CHECKS)[number];

/** Options of `doctor`. */
export interface DoctorOptions {
  /** Checks to leave out, e.g. `['calibration']` (00-setup calibrates in its own section). */
  skip?: readonly DoctorCheckName[];
  /** Length of the client calibration, s; default 5. */
  calibrateSeconds?: number;
  /** Environment to read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The nvidia-smi executable; default `'nvidia-smi'`. */
  nvidiaSmi?: string;
  /** Show the table in a notebook (when in a kernel); default true. */
  display?: boolean;
  /** Called with each check as it finishes (the CLI prints lines as they come). */
  onCheck?: (check: Check) => void;
}

/** What `doctor` found. */
export interface DoctorReport {
  /** No required check failed. */
  ok: boolean;
  checks: Check[];
}

/** ✓ ok, ✗ failed and required, ! failed and optional. */
export function checkMark(c: Check): '✓' | '✗' | '!' {
  return c.ok ? '✓' : c.level === 'required' ? '✗' : '!';
}

/** Runs every check not in `skip`, in order; never throws for a failed check. */
export async function doctor(opts: DoctorOptions = {}): Promise<DoctorReport> {
  const env = opts.env ?? process.env;
  const skip = new Set(opts.skip ?? []);
  for (const s of skip)
    if (!(DOCTOR_CHECKS as readonly string[]).includes(s))
      throw new Error(`unknown check '${s}' to skip; use one of ${DOCTOR_CHECKS.join(', ')}`);
  const checks: Check[] = [];
  const add = (c: Check | undefined) => {
    if (!c) return;
    checks.push(c);
    opts.onCheck?.(c);
  };
  if (!skip.has('node')) add(checkNode(env));
  if (!skip.has('tslab')) add(checkTslab(env));
  if (!skip.has('plotly')) add(checkPlotly());
  if (!skip.has('data')) add(checkDataWritable());
  if (!skip.has('model')) add(checkModelPath(env));
  if (!skip.has('flags')) add(checkServeFlags());
  const mode = env.LOADLAB_BASE_URL ? 'external' : env.LOADLAB_VLLM_MODEL ? 'launched' : 'sim';
  let baseUrl: string | undefined;
  if (!skip.has('target')) {
    const t = await checkTarget(env);
    baseUrl = t.info.baseUrl;
    try {
      add(t.check);
      if (!skip.has('max_model_len') && (t.check.ok || t.info.mode === 'launched')) add(await checkMaxModelLen(t.info));
    } finally {
      await t.stop();
    }
  }
  if (!skip.has('gpu')) add(checkGpu(mode, opts.nvidiaSmi, env));
  if (!skip.has('port')) add(await checkVllmPort(mode, baseUrl, env));
  if (!skip.has('monitors')) add(checkKernelMonitors());
  if (!skip.has('calibration')) {
    const seconds = opts.calibrateSeconds ?? 5;
    try {
      const users = watchCpuUsers();
      const cal = await calibrateClient({ seconds });
      const others = cal.ok ? '' : calibrationOthers(users?.finish(), cal.serverPid);
      add({
        name: 'client calibration',
        level: 'optional',
        ok: cal.ok,
        detail: `${seconds} s, ${cal.cores} cores, load average ${cal.loadAverage1m}: ${cal.verdict}${others}`,
        ...(cal.ok ? {} : { fix: 'top -o %CPU  # stop what takes the CPU, then run loadlab doctor again' }),
      });
    } catch (err) {
      add({
        name: 'client calibration',
        level: 'optional',
        ok: false,
        detail: (err as Error).message.split('\n')[0],
        fix: 'npm ci',
      });
    }
  }
  const report = { ok: checks.every((c) => c.ok || c.level === 'optional'), checks };
  if (opts.display ?? true) showReport(report);
  return report;
}

/**
 * Who else used the CPU while the client calibrated (with a leading space; '' when no one, or unknown): the largest
 * users over it but this process and the calibration's null server (`serverPid`). Pure.
 */
export function calibrationOthers(u: CpuUsers | undefined, serverPid: number | undefined): string {
  if (!u) return '';
  const words = usersWords({ ...u, top: u.top.filter((x) => x.pid !== serverPid) }, ['self']);
  return words === '' ? '' : ` Besides this process and its null server, the most CPU went to ${words}.`;
}

/** Shows the report as a table in a notebook (a no-op outside a kernel); returns the HTML when not displayed. */
export function showReport(report: DoctorReport): string | undefined {
  const rows = report.checks.map((c) => ({
    '状态 (status)': checkMark(c),
    '检查项 (check)': c.name,
    '结果 (detail)': c.detail,
    '修复命令 (fix)': c.fix ?? '',
  }));
  const failed = report.checks.filter((c) => !c.ok && c.level === 'required').length;
  const warned = report.checks.filter((c) => !c.ok && c.level === 'optional').length;
  const caption = `环境检查 loadlab doctor：${report.ok ? '通过' : `${failed} 项必需检查未通过`}${warned ? `，${warned} 项警告` : ''}`;
  return table(rows, { caption });
}

/** One line per check, and the fix on the next line when it failed. */
export function formatCheck(c: Check): string {
  return `${checkMark(c)} ${c.name.padEnd(18)} ${c.detail}${c.fix && !c.ok ? `\n    fix: ${c.fix}` : ''}\n`;
}

/** Usage of `loadlab doctor`. */
export const DOCTOR_HELP = `loadlab doctor [--json] [--skip a,b] [--calibrate-seconds N]
  Checks that this machine is ready for the lessons: Node, the tslab kernel, plotly, data/,
  the target (simulator, or LOADLAB_BASE_URL), max_model_len, the GPU, port 8000, and a client calibration.
  One line per check: ✓ ok, ✗ required and failed (exit code 1), ! warning; each failure names its fix.
  --json                 print the report as JSON
  --skip a,b             leave out checks: ${DOCTOR_CHECKS.join(', ')}
  --calibrate-seconds N  length of the client calibration (default 5)
`;

/** `loadlab doctor …`: exit code 0 (ready), 1 (a required check failed) or 2 (bad option). */
export async function doctorCommand(argv: string[], io: CliIo): Promise<number> {
  const opts: DoctorOptions = { display: false };
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') json = true;
    else if (a === '--help' || a === '-h') {
      io.stdout.write(DOCTOR_HELP);
      return 0;
    } else if (a === '--skip') opts.skip = (argv[++i] ?? '').split(',').filter(Boolean) as DoctorCheckName[];
    else if (a === '--calibrate-seconds') {
      const v = Number(argv[++i]);
      if (!(v >= 1)) {
        io.stderr.write(`loadlab doctor: --calibrate-seconds must be a number ≥ 1, got '${argv[i] ?? ''}'\n`);
        return 2;
      }
      opts.calibrateSeconds = v;
    } else {
      io.stderr.write(`loadlab doctor: unknown option '${a}'; use --json, --skip a,b or --calibrate-seconds N\n`);
      return 2;
    }
  }
  if (!json) opts.onCheck = (c) => io.stdout.write(formatCheck(c));
  let report: DoctorReport;
  try {
    report = await doctor(opts);
  } catch (err) {
    io.stderr.write(`loadlab doctor: ${(err as Error).message}\n`);
    return 2;
  }
  if (json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else
    io.stdout.write(
      report.ok
        ? '\nReady for the lessons.\n'
        : '\nNot ready: fix the ✗ lines above and run `node bin/loadlab.js doctor` again.\n',
    );
  return report.ok ? 0 : 1;
}
