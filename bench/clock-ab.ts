/**
 * The simulator's clocks side by side (`LOADLAB_SIM_CLOCK`: spin, the default, busy and thread):
 * one simulator per clock, all started first, then `measureLevel` (bench/sim-fidelity.ts) on each
 * in turn, rotating the order every round, so both see the same machine. Per level and
 * clock: the simulator's CPU (% of a core over the steady window, from /proc) and its step
 * lateness p99 (from its own /metrics), with the 1-minute load average.
 *
 *   npx tsx bench/clock-ab.ts [--levels 1,8,64,128] [--rounds 3]
 */
import { loadavg } from 'node:os';
import { startSim, type SimHandle } from '../src/sim/start';
import { round } from './common';
import { measureLevel } from './sim-fidelity';

const CLOCKS = ['spin', 'busy', 'thread'] as const;

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? (process.argv[i + 1] ?? dflt) : dflt;
}

async function main(): Promise<void> {
  const levels = arg('levels', '1,8,64,128').split(',').map(Number);
  const rounds = Number(arg('rounds', '3'));
  const sims = new Map<string, SimHandle>();
  try {
    for (const c of CLOCKS)
      sims.set(c, await startSim({ extraArgs: ['--stats-interval-s', '1'], env: { LOADLAB_SIM_CLOCK: c } }));
    for (let r = 0; r < rounds; r++) {
      for (const c of levels) {
        const order = [...CLOCKS.slice(r % CLOCKS.length), ...CLOCKS.slice(0, r % CLOCKS.length)];
        for (const clock of order) {
          const l = await measureLevel(sims.get(clock)!, c);
          console.log(
            `round ${r + 1} c=${String(c).padEnd(3)} ${clock.padEnd(6)} sim CPU ${l.simCpuPercent} % of a core, ` +
              `step lateness p50 ${l.latenessMs.p50} / p99 ${l.latenessMs.p99} ms, client ITL p99 ${l.clientItlMs.p99} ms [load ${round(loadavg()[0], 2)}]`,
          );
        }
      }
    }
  } finally {
    for (const s of sims.values()) await s.stop();
  }
}

await main();
