/**
 * What scraping `/metrics` during a run does to the simulator's step lateness: closed loops of 1
 * (12 requests × 150 tokens, fixed output) with no sampling, with the lessons' 250 ms sampling, and at
 * 100 ms, three rounds alternating; the simulator's own step-lateness p99 over each run (its
 * `/metrics` histogram, before and after). Issue #16: a scrape renders ≈56 KB; the simulator now renders
 * it between steps (`SimEngine.betweenSteps`).
 *
 *   npx tsx bench/scrape-cost.ts [rounds=3]
 */
import { loadavg } from 'node:os';
import { parsePrometheus } from '../src/observe/prometheus';
import { simLatenessMs } from '../src/observe/vllm-metrics';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { startSim } from '../src/sim/start';
import { makeRequest } from '../src/workload/workload';

const rounds = Number(process.argv[2] ?? 3);
const sim = await startSim({});
const scrape = async () => parsePrometheus(await (await fetch(`${sim.baseUrl}/metrics`)).text());
const spec = makeRequest('Say anything.', { maxTokens: 150, fixedOutput: true });
try {
  for (let r = 0; r < rounds; r++) {
    for (const sampleMetrics of [false, 250, 100] as const) {
      const before = await scrape();
      await runLoad({ baseUrl: sim.baseUrl, shape: closedLoop(1), requests: 12, workload: [spec], out: false, sampleMetrics });
      const p99 = simLatenessMs(await scrape(), before);
      console.log(
        `sampleMetrics=${String(sampleMetrics).padEnd(5)} simulator step lateness p99 ${p99?.toFixed(2)} ms (load ${loadavg()[0].toFixed(2)})`,
      );
    }
  }
} finally {
  await sim.stop();
}
process.exit(0);
