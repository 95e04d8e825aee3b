/**
 * Run summary: the numbers `vllm bench serve` prints, computed from LoadLab's request records.
 *
 * Definitions follow vLLM's `calculate_metrics` (vllm/benchmarks/serve.py), with one deliberate
 * difference in the window: vLLM times `gather()` from just before dispatch; LoadLab uses the
 * records themselves, from the earliest intended start to the latest end of a measured request,
 * so a run read back from disk gives the same summary as the live one.
 */

import type { ErrorCode, RequestRecord, RunSummary, Slo } from '../types';
import { describe, describeOwned } from './percentile';
import { summarizeTurns } from './turns';

/** Options of `summarizeRun`. */
export interface SummarizeOptions {
  /** SLOs in ms (`vllm bench serve --goodput ttft:MS tpot:MS e2el:MS`); adds `goodput` when given. */
  slo?: Slo;
}

const SLO_KEYS = ['ttftMs', 'tpotMs', 'e2eMs'] as const;

/** Throws unless every SLO key is known and every value is a number ≥ 0 (ms). */
export function checkSlo(slo: Slo): void {
  for (const [key, value] of Object.entries(slo)) {
    if (!(SLO_KEYS as readonly string[]).includes(key)) {
      throw new TypeError(`unknown SLO key '${key}'; use ttftMs, tpotMs or e2eMs (milliseconds)`);
    }
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new RangeError(`slo.${key} must be a number of ms ≥ 0, got ${String(value)}`);
    }
  }
}

/** Output tokens of a record: the server's usage count, else the sum of per-chunk token counts. */
export function outputTokensOf(r: RequestRecord): number {
  if (r.outputTokens !== undefined && Number.isFinite(r.outputTokens)) return r.outputTokens;
  let sum = 0;
  for (const t of r.chunkTokens ?? []) sum += t;
  return sum;
}

/**
 * Whether a successful request meets every given SLO, as vLLM's goodput: each given SLO must
 * satisfy `slo ≥ value` (inclusive). TPOT counts as 0 when the request produced ≤ 1 output token.
 * A missing TTFT or E2E (no token arrived) fails a TTFT or E2E SLO.
 */
export function meetsSlo(r: RequestRecord, slo: Slo): boolean {
  if (!r.ok) return false;
  if (slo.ttftMs !== undefined && !((r.ttftMs ?? NaN) <= slo.ttftMs)) return false;
  if (slo.e2eMs !== undefined && !((r.e2eMs ?? NaN) <= slo.e2eMs)) return false;
  if (slo.tpotMs !== undefined) {
    const tpot = outputTokensOf(r) <= 1 ? 0 : (r.tpotMs ?? NaN);
    if (!(tpot <= slo.tpotMs)) return false;
  }
  return true;
}

function defined(values: Array<number | undefined>): number[] {
  return values.filter((v): v is number => v !== undefined && v !== null);
}

/**
 * Every per-chunk gap of `ok`, in record order, in one array of the final size: 76,800 gaps for a 128 × 600-token
 * run, which a growing `number[]` took 11–13 ms of a cold process to collect (a typed copy 3–6 ms).
 */
function allGaps(ok: readonly RequestRecord[]): Float64Array {
  let n = 0;
  for (const r of ok) n += r.itlMs?.length ?? 0;
  const out = new Float64Array(n);
  let at = 0;
  for (const r of ok) {
    const gaps = r.itlMs ?? [];
    for (let i = 0; i < gaps.length; i++) out[at++] = gaps[i];
  }
  return out;
}

/**
 * Summarize a run's records. Warm-up records are left out of everything.
 *
 * - `requests` = measured records; `completed` = those with `ok`; `failed` = the rest, counted per
 *   `error.code` in `errors` (a failed record without an error is counted in `failed` only).
 * - Distributions (ms) are over successful measured requests, as vLLM's: `ttftMs`, `e2eMs`
 *   (vLLM "E2EL"), `tpotMs` (only where defined, i.e. ≥ 2 output tokens), `itlMs` = the
 *   concatenation of every per-chunk gap of every successful request (chunks, not tokens),
 *   `queueMs` (client-side wait) and `ttftFromIntendedMs` (TTFT from the intended send time).
 * - `durationS` = (latest `endMs` − earliest `intendedStartMs`)/1000 over all measured requests,
 *   failed included; 0 when there are none (then every rate is NaN).
 * - `requestsPerSec` = completed/durationS (vLLM `request_throughput`); `outputTokensPerSec` =
 *   Σ output tokens of completed/durationS (`output_throughput`); `totalTokensPerSec` =
 *   (Σ prompt + Σ output tokens of completed)/durationS (`total_token_throughput`).
 *   Prompt tokens come from the server's usage (0 where absent).
 * - `byTurn` (only when records carry a `turn`, i.e. multi-turn runs): per-turn TTFT (`summarizeTurns`).
 * - `goodput` (only with `opts.slo`): `good` = completed requests meeting every SLO (see
 *   `meetsSlo`), `requestsPerSec` = good/durationS (vLLM `request_goodput`).
 * @throws when an SLO key is unknown or a value is negative.
 */
export function summarizeRun(records: readonly RequestRecord[], opts: SummarizeOptions = {}): RunSummary {
  if (opts.slo) checkSlo(opts.slo);
  const measured = records.filter((r) => !r.warmup);
  const ok = measured.filter((r) => r.ok);

  const errors: Partial<Record<ErrorCode, number>> = {};
  for (const r of measured) {
    if (r.ok || !r.error) continue;
    errors[r.error.code] = (errors[r.error.code] ?? 0) + 1;
  }

  let first = Infinity;
  let last = -Infinity;
  for (const r of measured) {
    if (r.intendedStartMs < first) first = r.intendedStartMs;
    if (r.endMs > last) last = r.endMs;
  }
  const durationS = measured.length > 0 && Number.isFinite(last - first) ? Math.max(0, last - first) / 1000 : 0;
  const rate = (count: number): number => (durationS > 0 ? count / durationS : NaN);

  let totalPromptTokens = 0;
  let totalOutputTokens = 0;
  for (const r of ok) {
    totalPromptTokens += r.promptTokens ?? 0;
    totalOutputTokens += outputTokensOf(r);
  }

  const summary: RunSummary = {
    requests: measured.length,
    completed: ok.length,
    failed: measured.length - ok.length,
    errors,
    durationS,
    requestsPerSec: rate(ok.length),
    outputTokensPerSec: rate(totalOutputTokens),
    totalTokensPerSec: rate(totalPromptTokens + totalOutputTokens),
    totalPromptTokens,
    totalOutputTokens,
    ttftMs: describe(defined(ok.map((r) => r.ttftMs))),
    tpotMs: describe(defined(ok.map((r) => r.tpotMs))),
    itlMs: describeOwned(allGaps(ok)),
    e2eMs: describe(defined(ok.map((r) => r.e2eMs))),
    queueMs: describe(defined(ok.map((r) => r.queueMs))),
    ttftFromIntendedMs: describe(defined(ok.map((r) => r.ttftFromIntendedMs))),
  };
  const byTurn = summarizeTurns(measured);
  if (byTurn) summary.byTurn = byTurn;
  if (opts.slo) {
    const slo = { ...opts.slo };
    const good = ok.filter((r) => meetsSlo(r, slo)).length;
    summary.goodput = { slo, good, requestsPerSec: rate(good) };
  }
  return summary;
}
