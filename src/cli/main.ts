/**
 * The `loadlab` command: `loadlab sim …`, `run …`, `sweep …`, `report …`, `compare …`, `import …`, `calibrate …`,
 * `lessons …`, `doctor`, `--help`, `--version`. Subcommands are imported lazily, so `loadlab run` never
 * loads the simulator.
 * `main` returns an exit code, or `undefined` when a subcommand keeps running (the simulator
 * serves until stopped).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../paths';
import type { CliIo } from './io';

/** Where the CLI writes (declared in `./io`, re-exported for callers of `main`). */
export type { CliIo } from './io';

/** Top-level usage text. */
export const MAIN_HELP = `loadlab: load-test an LLM server (vLLM) and learn what TTFT, TPOT, ITL and E2E do under load

Usage:
  loadlab sim [vllm serve flags]    start a simulated vLLM server (no GPU needed)
  loadlab run --base-url URL …      send load to a server and save the run
  loadlab sweep --base-url URL …    one run per load point (--max-concurrency 1,4,16 …), the knee and SLO capacity
  loadlab import FILE --out DIR     a vllm bench serve result (--save-detailed) as a run folder
  loadlab report DIR [--out F]      write a standalone HTML report (offline) and CSV of a run or sweep folder
  loadlab compare A B … [--json]    runs side by side with intervals; says which differences are real
  loadlab calibrate --base-url URL --out FILE  fit the simulator's cost model to a server (a profile file)
  loadlab lessons [--only 02,burst] execute the notebook lessons headless (tslab) into data/executed/
  loadlab doctor [--json]           check that this machine is ready for the lessons (each failure names its fix)
  loadlab --help | -h               this help;  loadlab <command> --help for a command's flags
  loadlab --version | -v            the LoadLab version

Example:
  loadlab sim --port 8000 &
  loadlab run --base-url http://127.0.0.1:8000 --max-concurrency 8 --num-prompts 50 --out data/runs/c8
`;

/** LoadLab's version from its package.json. */
export function version(): string {
  try {
    return String(JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')).version);
  } catch {
    return 'unknown';
  }
}

/**
 * Run the CLI with `argv` (without `node` and the script). Returns the exit code, or
 * `undefined` when the command is still running in the background (the simulator).
 */
export async function main(
  argv: string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number | undefined> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      io.stdout.write(MAIN_HELP);
      return cmd === undefined ? 2 : 0;
    case '--version':
    case '-v':
      io.stdout.write(`${version()}\n`);
      return 0;
    case 'sim': {
      const { simCommand } = await import('./sim');
      const r: unknown = await simCommand(rest);
      return typeof r === 'number' ? r : undefined;
    }
    case 'run': {
      const { runCommand } = await import('./run');
      return runCommand(rest, io);
    }
    case 'sweep': {
      const { sweepCommand } = await import('./sweep');
      return sweepCommand(rest, io);
    }
    case 'import': {
      const { importCommand } = await import('./import');
      return importCommand(rest, io);
    }
    case 'report': {
      const { reportCommand } = await import('./report-cmd');
      return reportCommand(rest, io);
    }
    case 'compare': {
      const { compareCommand } = await import('./compare');
      return compareCommand(rest, io);
    }
    case 'calibrate': {
      const { calibrateCommand } = await import('./calibrate');
      return calibrateCommand(rest, io);
    }
    case 'lessons': {
      const { lessonsCommand } = await import('./lessons');
      try {
        return await lessonsCommand(rest);
      } catch (err) {
        const msg = err instanceof Error ? err.message : String(err);
        io.stderr.write(`loadlab lessons: ${msg}\n`);
        return /unknown option/.test(msg) ? 2 : 1;
      }
    }
    case 'doctor': {
      const { doctorCommand } = await import('./doctor');
      return doctorCommand(rest, io);
    }
    default:
      io.stderr.write(
        `loadlab: unknown command '${cmd}'. Commands: sim, run, sweep, report, compare, import, calibrate, lessons, doctor (see loadlab --help).\n`,
      );
      return 2;
  }
}
