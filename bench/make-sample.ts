/**
 * Regenerates `data/sample/`: a small, SIMULATED set of saved runs, so that
 * `notebooks/07-replot.ipynb` has something to re-plot on a fresh clone (no server, no GPU).
 *
 *   npx tsx bench/make-sample.ts
 *
 * Always runs against LoadLab's simulator (it ignores LOADLAB_BASE_URL / LOADLAB_VLLM_MODEL),
 * with few requests per point, and writes the normal run files (manifest.json, requests.jsonl,
 * summary.json, metrics.jsonl) under `data/sample/<point>/`, lesson `'sample'`. No chart HTML.
 * Points:
 * - `c1`, `c8`: the course prompt with exactly 64 output tokens at concurrency 1 and 8 (lesson 02's question);
 * - `chunked-off`, `chunked-512-t128`: one ≈4k-token prompt, then 12 short ones 50 ms later, with chunked
 *   prefill off, and on with a 512-token budget and a 128-token long-prefill threshold (lesson 04's question).
 * Takes about 30 s; the folder stays well under 300 KB.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  CHALLENGES_PROMPT,
  closedLoop,
  fromRoot,
  longPlusShort,
  makeRequest,
  measure,
  openTarget,
  type LoadShape,
  type RequestSpec,
  type ServerFlags,
} from '../src/index';

const LESSON = 'sample';
const ROOT = fromRoot('data');
const DIR = join(ROOT, LESSON);
const NOTE =
  'SIMULATED sample for notebooks/07-replot.ipynb, made by bench/make-sample.ts: a few requests against ' +
  "LoadLab's simulated vLLM server (RTX 4090 + Qwen2.5-7B-Instruct-GPTQ-Int4 model), not a GPU measurement.";

interface Point {
  name: string;
  flags: ServerFlags;
  shape: LoadShape;
  workload?: RequestSpec[];
  requests?: number;
  warmup?: number;
}

const fixed64 = makeRequest(CHALLENGES_PROMPT, { maxTokens: 64, fixedOutput: true });
const POINTS: Point[] = [
  { name: 'c1', flags: {}, shape: closedLoop(1), workload: [fixed64], requests: 8, warmup: 1 },
  { name: 'c8', flags: {}, shape: closedLoop(8), workload: [fixed64], requests: 16, warmup: 1 },
  { name: 'chunked-off', flags: { enableChunkedPrefill: false }, shape: longPlusShort({ shortCount: 12 }) },
  {
    name: 'chunked-512-t128',
    flags: { enableChunkedPrefill: true, maxNumBatchedTokens: 512, longPrefillTokenThreshold: 128 },
    shape: longPlusShort({ shortCount: 12 }),
  },
];

function sizeOf(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce(
    (n, e) => n + (e.isDirectory() ? sizeOf(join(dir, e.name)) : statSync(join(dir, e.name)).size),
    0,
  );
}

async function main(): Promise<void> {
  rmSync(DIR, { recursive: true, force: true });
  // `env: {}`: always the simulator, whatever the shell says.
  const target = await openTarget({ env: {} });
  if (!target.simulated) throw new Error('expected the simulator');
  try {
    for (const p of POINTS) {
      await target.restart(p.flags);
      const run = await measure(target, {
        lesson: LESSON,
        name: p.name,
        root: ROOT,
        force: true,
        shape: p.shape,
        ...(p.workload ? { workload: p.workload } : {}),
        ...(p.requests !== undefined ? { requests: p.requests } : {}),
        ...(p.warmup !== undefined ? { warmup: p.warmup } : {}),
        progress: false,
        manifestExtra: { notes: [NOTE] },
      });
      const s = run.summary;
      console.log(
        `${p.name}: ${s.completed}/${s.requests} ok, TTFT p50 ${s.ttftMs.p50.toFixed(1)} ms, E2E p50 ${s.e2eMs.p50.toFixed(0)} ms → ${run.dir}`,
      );
    }
  } finally {
    await target.stop();
  }
  console.log(`data/sample: ${(sizeOf(DIR) / 1024).toFixed(0)} KB`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
