/**
 * Import a `vllm bench serve --save-result --save-detailed` result file as a LoadLab run folder
 * (`manifest.json`, `requests.jsonl`, `summary.json`) that `loadRun`/`listRuns` read and every
 * table and chart labels "imported from vllm bench serve" (src/view/provenance.ts).
 *
 * Honest rules:
 * - `target.kind` is `'import'`; whether the server was the simulator or a GPU is unknown (no
 *   `target.simulated`) unless the caller says (`simulated: true|false`) or the file carries
 *   LoadLab's own `loadlab_simulated` metadata (written by `--result-json vllm`). Never guessed.
 * - The summary's `durationS` is vLLM's `duration` (its benchmark window: before dispatch to the end
 *   of `gather()`), so its throughputs equal the file's; the records' own window (earliest intended
 *   send to latest end) is shorter, and the manifest's notes give both.
 * - Timings are reconstructed as src/exchange/vllm-records.ts says; `manifest.imported.timing` says it.
 * - `health` is left out: vLLM does not record its client's event-loop or CPU load.
 * - Goodput is recomputed only with `slo` (vLLM does not save its `--goodput` SLOs); the file's own
 *   `request_goodput` is kept in `manifest.imported`.
 * - A summary-only file (saved without `--save-detailed`) is refused with that fix: a run folder holds requests.
 */

import * as path from 'node:path';
import { createRun } from '../run/store';
import { summarizeRun } from '../stats/summary';
import type { RunSummary, Slo } from '../types';
import type { RunManifest, RunTarget } from '../run/manifest';
import { recordsOfVllm } from './vllm-records';
import { AGGREGATE_KEYS, perRequestLists, readVllmResult, type VllmResult } from './vllm-result-file';

/** Options of `importVllmResult`. */
export interface ImportVllmOptions {
  /** Replace a complete run already in `outDir` (only its run files). Default false. */
  replace?: boolean;
  /** What served the benchmark, when the caller knows: true = LoadLab's simulator, false = a real server. Default unknown. */
  simulated?: boolean;
  /** `--goodput` SLOs (ms) to recompute goodput with; default none. */
  slo?: Slo;
  /** `manifest.name`; default the file's `label`, else its file name. */
  name?: string;
  /** `manifest.lesson`; default none. */
  lesson?: string;
}

/** What `importVllmResult` returns. */
export interface ImportedRun {
  dir: string;
  manifest: RunManifest;
  summary: RunSummary;
  /** The notes written into the manifest. */
  notes: string[];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Where the server kind comes from: the caller, the file's LoadLab metadata, or nowhere (unknown). */
function simulatedOf(r: VllmResult, opts: ImportVllmOptions): { simulated?: boolean; note: string } {
  if (opts.simulated !== undefined) {
    return { simulated: opts.simulated, note: `server: ${opts.simulated ? 'simulated' : 'real'}, as the importer said` };
  }
  if (r.loadlab_simulated === 'true' || r.loadlab_simulated === 'false') {
    const sim = r.loadlab_simulated === 'true';
    return { simulated: sim, note: `server: ${sim ? 'simulated' : 'real'}, from the file's loadlab_simulated metadata` };
  }
  return {
    note: 'server unknown: the file does not say whether it measured the simulator or a GPU (import with --simulated or --real if you know)',
  };
}

/** `vllm bench serve <rate> max <c>`, the run's load label. */
function loadLabel(r: VllmResult): string {
  const cap =
    r.max_concurrency === null || r.max_concurrency === undefined ? '' : `, max concurrency ${String(r.max_concurrency)}`;
  return `vllm bench serve: request rate ${String(r.request_rate ?? 'inf')}, burstiness ${String(r.burstiness ?? 1)}${cap}`;
}

/** The date `main_async` writes (`%Y%m%d-%H%M%S`, local time, after the run) as epoch ms, or undefined. */
function dateMs(date: unknown): number | undefined {
  const m = typeof date === 'string' ? /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})$/.exec(date) : null;
  return m ? new Date(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]).getTime() : undefined;
}

/**
 * Import `file` (a `vllm bench serve` result saved with `--save-detailed`) into the run folder
 * `outDir`. Returns the folder, manifest and summary.
 * @throws VllmResultError naming the fix when the file is not such a result, has no per-request
 *   lists (no `--save-detailed`), has no `start_times`, or is inconsistent; createRun's Error when
 *   `outDir` holds a complete run (pass `replace`) or files that are not a run's.
 */
export function importVllmResult(file: string, outDir: string, opts: ImportVllmOptions = {}): ImportedRun {
  const r = readVllmResult(file);
  const lists = perRequestLists(r, file);
  const { records, timing, unrecognisedErrors, recordsWindowS } = recordsOfVllm(r, lists, file);
  const durationS = Number(r.duration);
  const base = summarizeRun(records, opts.slo ? { slo: opts.slo } : {});
  const rate = (x: number) => (durationS > 0 ? x / durationS : NaN);
  const summary: RunSummary = {
    ...base,
    durationS,
    requestsPerSec: rate(base.completed),
    outputTokensPerSec: rate(base.totalOutputTokens),
    totalTokensPerSec: rate(base.totalPromptTokens + base.totalOutputTokens),
    ...(base.goodput ? { goodput: { ...base.goodput, requestsPerSec: rate(base.goodput.good) } } : {}),
  };
  const sim = simulatedOf(r, opts);
  const notes = [
    `imported from a vllm bench serve result (${path.basename(file)}, backend ${String(r.backend ?? r.endpoint_type)}); LoadLab did not send these requests`,
    sim.note,
    `timing ${timing}`,
    `durationS is vLLM's benchmark duration (${durationS} s, dispatch start to the end of gather); the records span ${recordsWindowS} s`,
    'client health unknown: vllm bench serve does not record its event-loop or CPU load',
    ...(String(r.backend ?? r.endpoint_type).includes('chat')
      ? ["chat TTFT is vLLM's: stamped on the first chunk with choices (the role chunk); its first ITL is the role→token gap"]
      : []),
    ...(typeof r.request_goodput === 'number' && !opts.slo
      ? [
          `the file's request_goodput (${r.request_goodput} req/s) is kept in imported.requestGoodput, not recomputed: vLLM does not save its --goodput SLOs`,
        ]
      : []),
    ...(unrecognisedErrors > 0
      ? [`${unrecognisedErrors} error strings matched no known pattern and are coded stream_error (message kept)`]
      : []),
  ];
  const target: RunTarget = {
    baseUrl: str(r.base_url) ?? 'unknown (not in the vllm bench serve file)',
    kind: 'import',
    ...(sim.simulated !== undefined ? { simulated: sim.simulated } : {}),
    model: str(r.model_id) ?? 'unknown',
    probe: { tool: 'vllm bench serve', backend: r.backend, endpoint_type: r.endpoint_type, tokenizer_id: r.tokenizer_id },
  };
  const ended = dateMs(r.date);
  const writer = createRun(
    {
      dir: outDir,
      replace: opts.replace ?? false,
      name: opts.name ?? str(r.label) ?? path.basename(file, '.json'),
      ...(opts.lesson ? { lesson: opts.lesson } : {}),
    },
    {
      target,
      load: {
        shape: 'imported',
        options: {
          request_rate: r.request_rate ?? 'inf',
          burstiness: r.burstiness ?? 1,
          max_concurrency: r.max_concurrency ?? null,
          requests: records.length,
          warmup: 0,
          label: loadLabel(r),
        },
      },
      workload: { source: 'vllm bench serve', num_prompts: r.num_prompts, api: records[0]?.api ?? 'chat' },
      // Approximate: vLLM writes `date` (local time) after the run; perf_counter has no epoch.
      clock: { originEpochMs: ended !== undefined ? ended - durationS * 1000 : Date.now(), source: 'performance.now' },
      imported: {
        tool: 'vllm bench serve',
        file: path.resolve(file),
        timing,
        date: r.date,
        ...(typeof r.request_goodput === 'number' ? { requestGoodput: r.request_goodput } : {}),
        aggregates: Object.fromEntries(AGGREGATE_KEYS.map((k) => [k, r[k]])),
      },
      notes,
    },
  );
  for (const rec of records) writer.append(rec);
  writer.finish(summary);
  return { dir: writer.dir, manifest: writer.manifest, summary, notes };
}
