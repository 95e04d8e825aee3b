/**
 * `npm run bench` runs every benchmark in turn; `npm run bench -- client` (or several names) runs
 * only those. Each prints its figures and target checks and writes `bench/results/<name>.json`
 * (plus a line in `bench/results/history.jsonl`). Figures on a shared machine are noisy: every
 * result carries the load average before and after, and `--quiet=1.5` waits (≤ 5 min per
 * benchmark) until the 1-minute load average is at most 1.5 before starting each one.
 */

import { loadLine, machine, waitForQuiet, writeResult, type BenchResult } from './common';

/** name → loader (lazy, so one benchmark's imports do not load the others). */
const BENCHES: Record<string, { about: string; load: () => Promise<{ run: () => Promise<BenchResult> }> }> = {
  client: { about: 'client ceiling: SSE events/s, stamp error, CPU, memory per stream', load: () => import('./client-ceiling') },
  arrivals: { about: 'open-loop arrival accuracy at 10, 100, 1000 req/s', load: () => import('./arrivals') },
  sim: { about: 'simulator real-time fidelity at 1, 32, 128, 256 streams', load: () => import('./sim-fidelity') },
  parse: { about: 'SSE stamping+parsing cost per event, stats over 100k samples', load: () => import('./parse-stats') },
};

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const asked = args.filter((a) => !a.startsWith('-'));
  const quietArg = args.find((a) => a.startsWith('--quiet='));
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
  const names = asked.length > 0 ? asked : Object.keys(BENCHES);
  let missed = 0;
  for (const name of names) {
    if (quiet !== undefined) {
      const seen = await waitForQuiet(quiet);
      if (seen > quiet) console.log(`\n(load ${seen.toFixed(2)} still above ${quiet} after 5 min; measuring anyway)`);
    }
    console.log(`\n== ${name}: ${BENCHES[name].about} (${loadLine(machine())})`);
    const t0 = performance.now();
    const r = await (await BENCHES[name].load()).run();
    for (const l of r.lines) console.log(`  ${l}`);
    for (const t of r.targets) {
      if (!t.met) missed++;
      console.log(`  ${t.met ? 'MET   ' : 'MISSED'} ${t.target}: ${t.measured}`);
    }
    console.log(`  → ${writeResult(r)} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  console.log(`\n${missed === 0 ? 'all targets met' : `${missed} target(s) missed (see above and bench/README.md)`}`);
}

main().then(
  () => process.exit(process.exitCode ?? 0), // child processes and pools never keep a finished bench alive
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
