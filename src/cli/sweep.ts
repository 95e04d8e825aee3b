/**
 * `loadlab sweep`: a sweep of `loadlab run` points into one folder, resumable. Every point is a
 * `loadlab run` with the same flags plus its own load (`runCommand`, so each run flag means what it
 * means there); `src/sweep/` decides the points, reuses complete ones, and writes `sweep.json`.
 * Wrong flags exit 2 naming the fix; a failed point exits 1; Ctrl-C stops the current point (saved as
 * interrupted), writes sweep.json and exits 130 (twice: at once); the same command again resumes.
 */

import { Writable } from 'node:stream';
import { resolveApiKey } from '../client/url';
import { probeTarget } from '../observe/probe';
import { runSweep } from '../sweep/run-sweep';
import { SweepFolderError } from '../sweep/sweep-file';
import type { CliIo } from './io';
import { runCommand } from './run';
import { parseSweepArgs, SWEEP_HELP, type SweepArgs } from './sweep-args';
import { formatSweepReport } from './sweep-report';
import { UsageError } from './usage-error';

export { SWEEP_HELP } from './sweep-args';

/** Parsed flags, or the exit code 0 (help) / 2 (a mistake, said on stderr). */
function parse(argv: string[], io: CliIo): number | SweepArgs {
  try {
    const a = parseSweepArgs(argv);
    if (a !== 'help') return a;
    io.stdout.write(SWEEP_HELP);
    return 0;
  } catch (err) {
    io.stderr.write(
      `loadlab sweep: ${err instanceof Error ? err.message : String(err)}\n(loadlab sweep --help lists the flags)\n`,
    );
    return 2;
  }
}

/** A stream that drops what is written (each point's full `loadlab run` report; its folder keeps everything). */
function sink(): Writable {
  return new Writable({ write: (_c, _e, done) => done() });
}

/** `loadlab sweep …`; returns the exit code. */
export async function sweepCommand(
  argv: string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const a = parse(argv, io);
  if (typeof a === 'number') return a;
  let sigints = 0;
  const onSigint = () => {
    sigints++;
    if (sigints > 1) process.exit(130);
    io.stderr.write('\nloadlab sweep: stopping after the current point (saved as interrupted); Ctrl-C again to quit at once\n');
  };
  process.on('SIGINT', onSigint);
  try {
    const v = a.run.v;
    const probe = await probeTarget(v['base-url']!, resolveApiKey(v['api-key']), v.model ? { model: v.model } : {});
    const file = await runSweep({
      dir: a.out,
      plan: a.plan,
      runFlags: a.runFlags,
      keyOf: a.keyOf,
      current: { probe, model: v.model ?? probe.model ?? '' },
      replace: a.replace,
      stopped: () => sigints > 0,
      log: (line) => io.stderr.write(`loadlab sweep: ${line}\n`),
      measurePoint: async (job) => {
        const code = await runCommand(a.runArgv(job.value, job.dir, job.replace), { stdout: sink(), stderr: io.stderr });
        if (code === 2) throw new UsageError(`the run flags of point ${job.name} were refused (see above)`);
      },
    });
    io.stdout.write(formatSweepReport(file, a.out));
    return file.status === 'interrupted' ? 130 : file.status === 'complete' ? 0 : 1;
  } catch (err) {
    io.stderr.write(`loadlab sweep: ${err instanceof Error ? err.message : String(err)}\n`);
    return err instanceof UsageError || err instanceof SweepFolderError ? 2 : 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
