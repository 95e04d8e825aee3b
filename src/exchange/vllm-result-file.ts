/**
 * The result file `vllm bench serve --save-result` writes, as vLLM's code builds it
 * (vllm/benchmarks/serve.py at commit 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1: `main_async`'s
 * `result_json` header, `benchmark()`'s `result` dict, `process_one_metric`, and the fields it
 * deletes without `--save-detailed`). Units are vLLM's: every per-request time (`ttfts`, `itls`,
 * `latencies`, `start_times`, `queue_times`) and `duration` in SECONDS, the `*_ms` statistics in
 * milliseconds, throughputs per second. `start_times` are `time.perf_counter()` values: seconds
 * from an arbitrary origin, meaningful only as differences.
 * This module reads and checks such a file; `vllm-result.ts` writes one, `import-vllm.ts` imports one.
 */

import * as fs from 'node:fs';

/** The header `main_async` puts first (its keys, in its order). */
export const HEADER_KEYS = [
  'date',
  'endpoint_type',
  'backend',
  'label',
  'model_id',
  'tokenizer_id',
  'num_prompts',
  'request_rate',
  'burstiness',
  'max_concurrency',
] as const;

/** Aggregate keys of `benchmark()`'s result for a generation task, in its order (the per-request lists aside). */
export const AGGREGATE_KEYS = [
  'duration',
  'completed',
  'failed',
  'total_input_tokens',
  'total_output_tokens',
  'request_throughput',
  'request_goodput',
  'output_throughput',
  'total_token_throughput',
] as const;

/** Per-request lists of the result, in its order (one entry per request, failed included). */
export const PER_REQUEST_KEYS = [
  'input_lens',
  'output_lens',
  'ttfts',
  'itls',
  'latencies',
  'start_times',
  'queue_times',
  'generated_texts',
  'errors',
] as const;

/** What `main_async` deletes when `--save-detailed` is not given (`latencies` and `queue_times` stay). */
export const DETAILED_ONLY_KEYS = [
  'input_lens',
  'output_lens',
  'start_times',
  'ttfts',
  'itls',
  'generated_texts',
  'errors',
] as const;

/** A metric `--percentile-metrics` may name for a text generation run (vLLM's names). */
export type VllmMetric = 'ttft' | 'tpot' | 'itl' | 'e2el';

/** vLLM's default `--percentile-metrics` for generation (`ttft,tpot,itl`) and `--metric-percentiles` (`99`). */
export const DEFAULT_METRICS: readonly VllmMetric[] = ['ttft', 'tpot', 'itl'];
/** vLLM's default `--metric-percentiles`. */
export const DEFAULT_PERCENTILES: readonly number[] = [99];

/** vLLM's key of percentile `p` of `metric`: `p99_ttft_ms`, `p99.9_itl_ms` (`str(int(p)) if int(p) == p else str(p)`). */
export function percentileKey(metric: string, p: number): string {
  return `p${String(p)}_${metric}_ms`; // JS prints 99 as '99' and 99.9 as '99.9', as Python does here
}

/** The keys `process_one_metric` adds for one metric, in its order. */
export function metricKeys(metric: string, percentiles: readonly number[]): string[] {
  return [`mean_${metric}_ms`, `median_${metric}_ms`, `std_${metric}_ms`, ...percentiles.map((p) => percentileKey(metric, p))];
}

/** A parsed result file: known keys typed loosely, everything else (metadata, spec-decode, probe stats) kept. */
export type VllmResult = Record<string, unknown>;

/** Why a file cannot be imported, with the fix; `loadlab import` prints it and exits 2. */
export class VllmResultError extends Error {}

/**
 * Read and check a `vllm bench serve` result file. `--append-result` files (several results, one
 * per line) are refused with the fix. Throws VllmResultError naming what is missing.
 */
export function readVllmResult(file: string): VllmResult {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new VllmResultError(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(pythonJson(text));
  } catch (err) {
    const lines = text.split('\n').filter((l) => l.trim() !== '');
    if (lines.length > 1 && lines.every((l) => l.trim().startsWith('{'))) {
      throw new VllmResultError(
        `${file} holds ${lines.length} results, one per line (vllm bench serve --append-result); put the one to import in a file of its own`,
      );
    }
    throw new VllmResultError(
      `${file} is not JSON (${(err as Error).message}); give the file vllm bench serve --save-result wrote`,
    );
  }
  return checkVllmResult(value, file);
}

/**
 * Python's json.dump writes NaN and ±Infinity bare (e.g. `"burstiness": Infinity` for `--burstiness inf`),
 * which JSON.parse refuses: outside strings, Infinity becomes `"inf"` / `"-inf"` (as vLLM writes
 * `request_rate`), NaN becomes null.
 */
function pythonJson(text: string): string {
  return text.replace(/("(?:[^"\\]|\\.)*")|(-?)\bInfinity\b|\bNaN\b/g, (m, str, minus) =>
    str ? str : m === 'NaN' ? 'null' : `"${minus}inf"`,
  );
}

/** Check a parsed value is a text-generation result of `vllm bench serve`; returns it. */
export function checkVllmResult(value: unknown, where: string): VllmResult {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new VllmResultError(`${where} is not a vllm bench serve result: expected a JSON object`);
  }
  const r = value as VllmResult;
  const missing = ['duration', 'completed', 'request_throughput'].find((k) => typeof r[k] !== 'number');
  if (missing !== undefined || (r.backend === undefined && r.endpoint_type === undefined)) {
    throw new VllmResultError(
      `${where} is not a vllm bench serve result: no numeric '${missing ?? 'backend'}' (give the JSON file --save-result wrote)`,
    );
  }
  if (r.failed === undefined && r.total_input_sequences !== undefined) {
    throw new VllmResultError(`${where} is a pooling (embedding) benchmark result; only text generation results can be imported`);
  }
  return r;
}

/**
 * The per-request lists of a result, checked: one entry per request, all of the same length.
 * Throws VllmResultError when they are absent (the file was saved without `--save-detailed`) or inconsistent.
 */
export function perRequestLists(r: VllmResult, where: string): Record<(typeof PER_REQUEST_KEYS)[number], unknown[] | undefined> {
  const absent = (['ttfts', 'itls', 'output_lens', 'input_lens', 'errors'] as const).filter((k) => !Array.isArray(r[k]));
  if (absent.length > 0) {
    throw new VllmResultError(
      `${where} has only the summary (no ${absent.join(', ')}): it was saved without --save-detailed. LoadLab imports ` +
        'runs request by request; run vllm bench serve again with --save-result --save-detailed',
    );
  }
  const n = (r.ttfts as unknown[]).length;
  const out = {} as Record<(typeof PER_REQUEST_KEYS)[number], unknown[] | undefined>;
  for (const k of PER_REQUEST_KEYS) {
    const v = r[k];
    if (v === undefined || v === null) continue;
    if (!Array.isArray(v) || v.length !== n) {
      throw new VllmResultError(`${where}: '${k}' must be a list of ${n} entries (one per request, like 'ttfts')`);
    }
    out[k] = v;
  }
  const counted = (Number(r.completed) || 0) + (Number(r.failed) || 0);
  if (counted !== n) throw new VllmResultError(`${where}: completed + failed = ${counted}, but the lists hold ${n} requests`);
  return out;
}
