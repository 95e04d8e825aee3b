/**
 * A LoadLab run as the result file `vllm bench serve --save-result --save-detailed` writes: vLLM's
 * keys, order and units (seconds per request, ms statistics), computed as vLLM computes them
 * (vllm/benchmarks/serve.py at commit 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1: `calculate_metrics`,
 * `benchmark()`'s `result`, `process_one_metric`, `main_async`'s header): statistics over successful
 * requests, TPOT = (latency − TTFT)/(output tokens − 1) over requests with ≥ 2 tokens, ITL = every
 * chunk gap of every successful request flattened, numpy's linear percentiles, population std,
 * goodput with vLLM's inclusive SLO test (src/stats/goodput.ts), an empty metric reported as 0
 * (`np.mean(xs or 0)`).
 *
 * Where LoadLab's numbers differ from what vLLM would have written for the same requests:
 * - `duration`: LoadLab's window, earliest intended send to latest end of a measured request
 *   (src/stats/summary.ts); vLLM's runs from just before its dispatch loop to the end of `gather()`,
 *   so it is slightly longer, and every `*_throughput` slightly lower.
 * - TTFT and ITL of chat runs: LoadLab stamps TTFT on the first chunk that carries a token; vLLM's
 *   chat client (vllm/benchmarks/lib/endpoint_request_func.py) on the first chunk with `choices`
 *   (the role-only chunk) and then adds the role→token gap as one more ITL entry (src/client/metrics.ts).
 *   vLLM also counts a chunk with empty text (a special token) as a chunk; LoadLab's token chunks skip it.
 * - `queue_times`: LoadLab's `queueMs` (send − intended send: pacer lag, the concurrency cap and
 *   connecting); vLLM's `client_queue_time` is only the wait for its `--max-concurrency` semaphore.
 * - `start_times`: seconds on the run's clock (0 near the first request); vLLM's are perf_counter values.
 * - `generated_texts` are empty strings (LoadLab does not keep output text); `input_lens` of a failed
 *   request is 0 when the server never sent usage (vLLM writes the dataset's prompt length).
 * - `errors` of failed requests are `<LoadLab error code>: <message>`, not aiohttp's reason or traceback.
 * - For a run imported from a vLLM file (`manifest.imported`), `date` and `duration` are the file's own
 *   (the summary keeps vLLM's duration), `errors` are the file's strings, and without SLOs `request_goodput` is the file's own value,
 *   passed through (vLLM does not save its `--goodput` SLOs, so it cannot be recomputed).
 * - `tokenizer_id` is the model: LoadLab counts tokens with the server's usage, never a client tokenizer.
 * - `--percentile-metrics client_queue_time,e2el_including_client_queue` are not written.
 * - Added metadata keys (vLLM's `--metadata KEY=VALUE` slot): `loadlab_simulated` (`true`, `false` or
 *   `unknown`), `loadlab_target_kind`, `loadlab_run_id`, `loadlab_status` (an interrupted run is written too,
 *   which vLLM never does), `base_url`, so a file never hides what it measured.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeTextAtomic } from '../run/atomic';
import { goodputOf } from '../stats/goodput';
import { describe, percentiles } from '../stats/percentile';
import { outputTokensOf, summarizeRun } from '../stats/summary';
import type { RequestRecord, RunSummary, Slo } from '../types';
import type { RunManifest } from '../run/manifest';
import { timeStamp } from '../run/manifest';
import {
  DEFAULT_METRICS,
  DEFAULT_PERCENTILES,
  DETAILED_ONLY_KEYS,
  percentileKey,
  type VllmMetric,
  type VllmResult,
} from './vllm-result-file';
import { vllmPeaks } from './vllm-peaks';

/** Options of `vllmResultOf`, named after `vllm bench serve`'s flags. */
export interface VllmResultOptions {
  /** `--percentile-metrics`; default vLLM's `['ttft', 'tpot', 'itl']`. */
  percentileMetrics?: readonly VllmMetric[];
  /** `--metric-percentiles` (0..100); default vLLM's `[99]`. */
  metricPercentiles?: readonly number[];
  /** `--goodput` SLOs in ms; default the SLOs of the run's summary, if any (else `request_goodput` is null). */
  slo?: Slo;
  /** `--label`; default null (vLLM's default None). */
  label?: string | null;
  /** `--save-detailed`: keep the per-request lists. Default true. */
  detailed?: boolean;
}

/** What `vllmResultOf` reads: a `RunResult`, a `LoadedRun`, or the parts. */
export interface RunParts {
  manifest: RunManifest;
  /** Every record (warm-up ones are left out, as vLLM leaves out its warm-ups). */
  records: readonly RequestRecord[];
  summary?: RunSummary;
}

const MS = 1000;

/** vLLM's traffic header from the run's load shape: `request_rate` (`'inf'` unless open loop), `burstiness`, `max_concurrency`. */
function traffic(load: RunManifest['load']): {
  request_rate: number | 'inf';
  burstiness: number;
  max_concurrency: number | null;
} {
  const o = load.options as Record<string, number | undefined>;
  if (load.shape === 'open') {
    return { request_rate: o.rate ?? 'inf', burstiness: o.burstiness ?? 1, max_concurrency: o.maxConcurrency ?? null };
  }
  if (load.shape === 'imported') {
    const rate = o.request_rate as number | 'inf' | undefined;
    return { request_rate: rate ?? 'inf', burstiness: o.burstiness ?? 1, max_concurrency: o.max_concurrency ?? null };
  }
  return { request_rate: 'inf', burstiness: 1, max_concurrency: load.shape === 'closed' ? (o.concurrency ?? null) : null };
}

/** `process_one_metric`'s keys for one metric: mean, median, std and each percentile, in ms (0 when empty). */
function metricEntries(metric: VllmMetric, xsMs: readonly number[], ps: readonly number[]): Array<[string, number]> {
  if (xsMs.length === 0) {
    return [`mean_${metric}_ms`, `median_${metric}_ms`, `std_${metric}_ms`, ...ps.map((p) => percentileKey(metric, p))].map(
      (k) => [k, 0],
    );
  }
  const d = describe(xsMs);
  const [median, ...values] = percentiles(xsMs, [50, ...ps]);
  return [
    [`mean_${metric}_ms`, d.mean],
    [`median_${metric}_ms`, median],
    [`std_${metric}_ms`, d.std],
    ...ps.map((p, i): [string, number] => [percentileKey(metric, p), values[i]]),
  ];
}

/** The samples (ms) of one metric over successful requests, as vLLM collects them. */
function samples(ok: readonly RequestRecord[], metric: VllmMetric): number[] {
  const num = (x: number | undefined): x is number => typeof x === 'number';
  if (metric === 'ttft') return ok.map((r) => r.ttftMs).filter(num);
  if (metric === 'tpot')
    return ok
      .filter((r) => outputTokensOf(r) > 1)
      .map((r) => r.tpotMs)
      .filter(num);
  if (metric === 'e2el') return ok.map((r) => r.e2eMs).filter(num);
  return ok.flatMap((r) => r.itlMs ?? []);
}

/**
 * Per-request lists of `benchmark()`'s result (seconds), one entry per measured request in send order.
 * `errors` are `<code>: <message>`, or for an imported run the file's own strings (kept as messages).
 */
function perRequest(measured: readonly RequestRecord[], imported: boolean): Record<string, unknown[]> {
  const error = (r: RequestRecord) =>
    imported ? (r.error?.message ?? '') : `${r.error?.code ?? 'failed'}: ${r.error?.message ?? ''}`;
  return {
    input_lens: measured.map((r) => r.promptTokens ?? 0),
    output_lens: measured.map((r) => (r.ok ? outputTokensOf(r) : 0)),
    ttfts: measured.map((r) => (r.ttftMs ?? 0) / MS),
    itls: measured.map((r) => (r.itlMs ?? []).map((x) => x / MS)),
    latencies: measured.map((r) => (r.ok ? (r.e2eMs ?? 0) / MS : 0)),
    start_times: measured.map((r) => r.startMs / MS),
    queue_times: measured.map((r) => r.queueMs / MS),
    generated_texts: measured.map(() => ''),
    errors: measured.map((r) => (r.ok ? '' : error(r))),
  };
}

/** The metadata keys LoadLab adds, so the file says what it ran against. */
function metadata(m: RunManifest): Record<string, string> {
  const t = m.target;
  return {
    loadlab_simulated: t.simulated === undefined ? 'unknown' : String(t.simulated),
    loadlab_target_kind: t.kind,
    loadlab_run_id: m.runId,
    loadlab_status: m.status,
    base_url: t.baseUrl,
  };
}

/**
 * The `vllm bench serve` result dict of a run: vLLM's keys in vLLM's order, seconds per request and
 * ms statistics, computed the way vLLM computes them (every deviation is listed in this module's
 * comment). Warm-up records are left out; requests are listed in send order (`index`).
 * @throws RangeError when a metric percentile is outside 0..100.
 */
export function vllmResultOf(run: RunParts, opts: VllmResultOptions = {}): VllmResult {
  const metrics = opts.percentileMetrics ?? DEFAULT_METRICS;
  const ps = opts.metricPercentiles ?? DEFAULT_PERCENTILES;
  const measured = run.records.filter((r) => !r.warmup).sort((a, b) => a.index - b.index);
  const ok = measured.filter((r) => r.ok);
  const s = summarizeRun(measured);
  if (run.summary) s.durationS = run.summary.durationS; // an imported run's summary holds vLLM's own duration
  const slo = opts.slo ?? run.summary?.goodput?.slo;
  const imported = run.manifest.imported;
  const api = measured[0]?.api ?? 'chat';
  const backend = api === 'chat' ? 'openai-chat' : 'openai';
  const rate = (x: number) => (s.durationS > 0 ? x / s.durationS : 0);
  const peaks = vllmPeaks(
    ok.map((r) => ({
      startS: r.startMs / MS,
      ttftS: (r.ttftMs ?? 0) / MS,
      itlS: (r.itlMs ?? []).map((x) => x / MS),
      latencyS: (r.e2eMs ?? 0) / MS,
    })),
  );
  const out: VllmResult = {
    date:
      typeof imported?.date === 'string' ? imported.date : timeStamp(new Date(run.manifest.endedAt ?? run.manifest.startedAt)),
    endpoint_type: backend,
    backend,
    label: opts.label ?? null,
    model_id: run.manifest.target.model,
    tokenizer_id: run.manifest.target.model,
    num_prompts: measured.length,
    ...metadata(run.manifest),
    ...traffic(run.manifest.load),
    duration: s.durationS,
    completed: s.completed,
    failed: s.failed,
    total_input_tokens: s.totalPromptTokens,
    total_output_tokens: s.totalOutputTokens,
    request_throughput: rate(s.completed),
    request_goodput: slo ? goodputOf(measured, slo, s.durationS).requestsPerSec : ((imported?.requestGoodput as number) ?? null),
    output_throughput: rate(s.totalOutputTokens),
    total_token_throughput: rate(s.totalPromptTokens + s.totalOutputTokens),
    ...perRequest(measured, imported !== undefined),
    max_output_tokens_per_s: peaks.maxOutputTokensPerS,
    max_concurrent_requests: peaks.maxConcurrentRequests,
    rtfx: 0,
  };
  for (const metric of metrics) for (const [k, v] of metricEntries(metric, samples(ok, metric), ps)) out[k] = v;
  if (opts.detailed === false) for (const k of DETAILED_ONLY_KEYS) delete out[k];
  return out;
}

/** `--percentile-metrics` / `--metric-percentiles` as the CLI parses them (`metrics`, `percentiles`). */
export interface PercentileChoice {
  metrics?: readonly VllmMetric[];
  percentiles?: readonly number[];
  slo?: Slo;
}

/**
 * Write `vllmResultOf(run)` as one line of JSON, as vLLM's `json.dump` does, to `file` (default
 * `<run.dir>/vllm-result.json`), atomically; returns the path. NaN (no data) is written as null.
 * @throws when neither `file` nor `run.dir` is given.
 */
export function writeVllmResult(
  run: RunParts & { dir?: string },
  file: string | undefined,
  choice: PercentileChoice = {},
): string {
  if (file === undefined && run.dir === undefined) throw new Error('writeVllmResult needs a file, or a run saved in a folder');
  const target = file ?? path.join(run.dir!, 'vllm-result.json');
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const opts: VllmResultOptions = {
    ...(choice.metrics ? { percentileMetrics: choice.metrics } : {}),
    ...(choice.percentiles ? { metricPercentiles: choice.percentiles } : {}),
    ...(choice.slo ? { slo: choice.slo } : {}),
  };
  writeTextAtomic(target, `${JSON.stringify(vllmResultOf(run, opts))}\n`);
  return target;
}
