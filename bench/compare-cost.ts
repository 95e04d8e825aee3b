/**
 * How long `compareRuns` (loadlab compare) takes on long runs: two synthetic runs of `requests`
 * requests with `gaps` inter-token gaps each (ITL pools every gap, so its bootstrap dominates), at
 * 2000 and 500 resamples. Synthetic records (uniform random latencies from a seeded RNG): a cost
 * figure, never a latency measurement. Prints the machine's load average before and after.
 * Run: `npx tsx bench/compare-cost.ts [requests=1000] [gaps=255]` (not part of `npm run bench`).
 */
import { compareRuns } from '../src/report/compare';
import type { ReportRun } from '../src/report/report-input';
import { seededRng } from '../src/rng';
import { summarizeRun } from '../src/stats/summary';
import type { RequestRecord } from '../src/types';
import { loadLine } from './common';

const requests = Number(process.argv[2] ?? 1000);
const gaps = Number(process.argv[3] ?? 255);
const rng = seededRng(3);

function synthetic(label: string): ReportRun {
  const records: RequestRecord[] = Array.from({ length: requests }, (_, i) => {
    const itlMs = Array.from({ length: gaps }, () => 10 + rng() * 5);
    const ttftMs = 50 + rng() * 20;
    const chunkMs = [ttftMs, ...itlMs.map((_, k) => ttftMs + (k + 1) * 12)];
    return {
      index: i,
      requestId: `r${i}`,
      warmup: false,
      ok: true,
      api: 'chat',
      intendedStartMs: 0,
      startMs: 0,
      firstTokenMs: ttftMs,
      chunkMs,
      chunkTokens: chunkMs.map(() => 1),
      endMs: chunkMs[chunkMs.length - 1],
      outputTokens: gaps + 1,
      ttftMs,
      e2eMs: chunkMs[chunkMs.length - 1],
      tpotMs: 12,
      itlMs,
      queueMs: rng(),
      ttftFromIntendedMs: ttftMs,
    };
  });
  return {
    dir: `(synthetic ${label})`,
    label,
    records,
    summary: summarizeRun(records),
    problems: [],
    notes: [],
  } as unknown as ReportRun;
}

const a = synthetic('a');
const b = synthetic('b');
console.log(`before: ${loadLine()}`);
for (const iterations of [2000, 500]) {
  const t0 = performance.now();
  compareRuns([a, b], { bootstrap: { iterations } });
  const s = (performance.now() - t0) / 1000;
  console.log(`compareRuns, 2 runs × ${requests} requests × ${gaps} gaps, ${iterations} resamples: ${s.toFixed(1)} s`);
}
console.log(`after: ${loadLine()}`);
