/**
 * `npm run bench` runs every benchmark in turn; `npm run bench -- client` (or several names) runs
 * only those. Each prints its figures and target checks and writes `bench/results/<name>.json`
 * (plus a line in `bench/results/history.jsonl`). Figures on a shared machine are noisy: every
 * result carries the load average before and after, and `--quiet=1.5` waits (≤ 5 min per
 * benchmark) until the 1-minute load average is at most 1.5 before starting each one.
 * `--quick` is a smoke run of the benchmarks that have one (client, arrivals, yard, yard-sim: every pass shorter);
 * its figures are printed but not written to bench/results, so they never stand in for a full run's.
 */

import { hostCpu } from '../src/proc/cpu-times';
import { distProblem } from '../src/proc/dist';
import { loadLine, machine, stealPercent, waitForQuiet, writeResult, type BenchOptions, type BenchResult } from './common';
import { VERDICT_WORD, verdictSummary } from './verdict';

/** name → loader (lazy, so one benchmark's imports do not load the others); `quick`: it has a smoke run. */
const BENCHES: Record<
  string,
  { about: string; quick?: boolean; load: () => Promise<{ run: (o?: BenchOptions) => Promise<BenchResult> }> }
> = {
  client: {
    about: 'client ceiling: SSE events/s, stamp error, CPU, memory per stream',
    quick: true,
    load: () => import('./client-ceiling'),
  },
  arrivals: { about: 'open-loop arrival accuracy at 10, 100, 1000 req/s', quick: true, load: () => import('./arrivals') },
  sim: { about: 'simulator real-time fidelity at 1, 32, 128, 256 streams', load: () => import('./sim-fidelity') },
  yard: {
    about: 'client yardstick: ours vs bare net, undici, aiohttp (CPU/event, ITL p99)',
    quick: true,
    load: () => import('./client-yardstick'),
  },
  'yard-sim': {
    about: 'simulator yardstick: CPU/token vs a bare writer, step lateness p99 at 128 and 256',
    quick: true,
    load: () => import('./sim-yardstick'),
  },
  'lesson-floor': {
    about: "lesson 02b's c=256 point: our stamp lag p99 against a bare raw-socket reader's, same simulator",
    quick: true,
    load: () => import('./lesson-floor'),
  },
  workers: { about: 'run --workers 1, 2, 4: events/s at p99 stamp error ≤ 2 ms', quick: true, load: () => import('./workers') },
  parse: { about: 'SSE stamping+parsing cost per event, stats over 100k samples', load: () => import('./parse-stats') },
  calibration: {
    about: 'loadlab calibrate vs hidden simulator profiles: wall time, held-out errors',
    quick: true,
    load: () => import('./calibration'),
  },
  'calibration-live': {
    about: 'calibrate, then measure hidden vs calibrated simulators live: throughput 1–64, 90/10 mix TTFT p50',
    quick: true,
    load: () => import('./calibration-live'),
  },
};

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const asked = args.filter((a) => !a.startsWith('-'));
  const quietArg = args.find((a) => a.startsWith('--quiet='));
  const quick = args.includes('--quick');
  const badFlag = args.find((a) => a.startsWith('-') && a !== '--quick' && !a.startsWith('--quiet='));
  if (badFlag !== undefined) {
    console.error(
      `unknown option '${badFlag}'; the options are --quick (a short smoke run) and --quiet=<load>, e.g. --quiet=1.5`,
    );
    process.exitCode = 2;
    return;
  }
  const quiet = quietArg ? Number(quietArg.slice('--quiet='.length)) : undefined;
  if (quiet !== undefined && !(quiet > 0)) {
    console.error(`--quiet takes the highest 1-minute load average to start at, e.g. --quiet=1.5, got '${quietArg}'`);
    process.exitCode = 2;
    return;
  }
  const unknown = asked.filter((a) => !(a in BENCHES));
  if (unknown.length > 0) {
    const list = Object.entries(BENCHES)
      .map(([n, b]) => `  ${n.padEnd(9)} ${b.about}`)
      .join('\n');
    console.error(`unknown benchmark ${unknown.join(', ')}; choose from:\n${list}\n(e.g. npm run bench -- client)`);
    process.exitCode = 2;
    return;
  }
  // The benches time whole processes (the simulator, the null server, `loadlab run`) as a learner runs them: from
  // dist/. A stale dist/ would silently run them through tsx and time the TypeScript compiler too.
  const stale = distProblem();
  if (stale !== undefined && process.env.LOADLAB_NO_DIST !== '1') {
    console.error(`dist/ is out of date: ${stale}. The benchmarks time whole processes as learners run them, from dist/.`);
    process.exitCode = 2;
    return;
  }
  const quickOnes = Object.keys(BENCHES).filter((n) => BENCHES[n].quick);
  const names = asked.length > 0 ? asked : quick ? quickOnes : Object.keys(BENCHES);
  const noQuick = quick ? names.filter((n) => !BENCHES[n].quick) : [];
  if (noQuick.length > 0) {
    console.error(
      `${noQuick.join(', ')} has no --quick run; quick runs exist for ${quickOnes.join(', ')} (e.g. npm run bench -- client --quick)`,
    );
    process.exitCode = 2;
    return;
  }
  let missed = 0;
  let undecided = 0;
  for (const name of names) {
    if (quiet !== undefined) {
      const seen = await waitForQuiet(quiet);
      if (seen > quiet) console.log(`\n(load ${seen.toFixed(2)} still above ${quiet} after 5 min; measuring anyway)`);
    }
    console.log(`\n== ${name}: ${BENCHES[name].about} (${loadLine(machine())})`);
    const t0 = performance.now();
    const host0 = hostCpu();
    const r = await (await BENCHES[name].load()).run({ quick });
    r.stealPercent = stealPercent(host0, hostCpu());
    for (const l of r.lines) console.log(`  ${l}`);
    if (r.stealPercent !== undefined)
      console.log(`  CPU steal over this benchmark: ${r.stealPercent.toFixed(2)} % of the machine's CPU time (the VM's host)`);
    for (const t of r.targets) {
      const v = t.verdict ?? (t.met ? 'met' : 'missed');
      if (v === 'missed') missed++;
      if (v === 'undecided') undecided++;
      console.log(`  ${VERDICT_WORD[v]} ${t.target}: ${t.measured}`);
    }
    const where = quick ? 'quick run, not written to bench/results' : writeResult(r);
    console.log(`  → ${where} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  console.log(`\n${verdictSummary(missed, undecided)}`);
}

main().then(
  () => process.exit(process.exitCode ?? 0), // child processes and pools never keep a finished bench alive
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
