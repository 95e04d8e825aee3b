/**
 * Turn a probe's measurement into observations of step shapes (`step-model.ts`).
 * With `/metrics` (all three defined in `vllm/v1/metrics/stats.py`): prefill time
 * (`vllm:request_prefill_time_seconds`, scheduled → first token: one prefill step for a lone request)
 * and inter-token latency (one sample per engine output after the first, i.e. per decode step),
 * timed by the server, not the client. The API overhead is what the server's TTFT (from the request's
 * arrival) adds to queue + prefill time. Deviation: a real vLLM stamps these in its output
 * processor with `time.time()`, so front-end jitter enters the samples (not their mean step time);
 * the simulator stamps modelled step ends.
 * Without `/metrics`: the client's TTFT (API overhead + network + prefill step) and TPOT.
 * Every probe's decode is read in its clean window (`decode-window.ts`): the steps while all its requests decode.
 */
import { histogramMean } from '../observe/histogram';
import type { RequestRecord } from '../types';
import type { ProbeMeasurement } from './probe-run';
import { decodeBatch, type Observation, prefillBatch } from './step-model';

/** One estimate of the API overhead from one probe, ms. */
export interface ApiSample {
  probe: string;
  ms: number;
  samples: number;
}

const mean = (xs: readonly number[]) => (xs.length > 0 ? xs.reduce((a, x) => a + x, 0) / xs.length : NaN);

/** Mean prompt tokens (server's `usage`, else the probe's target) and mean of their squares. */
function promptStats(m: ProbeMeasurement): { p: number; p2: number } {
  const ps = m.records.map((r) => r.promptTokens ?? m.probe.promptTokens);
  if (ps.length === 0) return { p: m.probe.promptTokens, p2: m.probe.promptTokens ** 2 };
  return { p: mean(ps), p2: mean(ps.map((x) => x * x)) };
}

/** KV context a decode step reads after `generated` output tokens: prompt + generated (`addDecode(b, computed + 1)` in the simulator's step plan). */
function decodeContext(p: number, generated: number): number {
  return p + generated;
}

/** Observations and API-overhead samples of one measurement (none when every request failed). */
export function observationsOf(m: ProbeMeasurement): { observations: Observation[]; api: ApiSample[] } {
  const { probe, records } = m;
  if (records.length === 0) return { observations: [], api: [] };
  const { p, p2 } = promptStats(m);
  const b = probe.kind === 'prefill' ? 1 : probe.concurrency;
  const pf = prefillBatch(p, p2);
  const h = m.metrics;
  const out: Observation[] = [];
  const api: ApiSample[] = [];
  const push = (
    quantity: string,
    source: Observation['source'],
    batch: Observation['batch'],
    ms: number,
    samples: number,
    includesApi = false,
  ) => {
    if (Number.isFinite(ms) && ms > 0 && samples > 0)
      out.push({ probe: probe.name, quantity, source, batch, includesApi, ms, samples });
  };
  const w = m.window;
  if (w) {
    const q = w.source === 'metrics' ? 'server ITL mean, clean window' : 'client ITL mean, clean window';
    push(q, w.source, decodeBatch(b, decodeContext(p, w.meanGeneratedTokens)), w.meanMs, w.count);
  }
  if (probe.kind === 'decode') return { observations: out, api };
  if (h?.prefill && h.prefill.count > 0) {
    const prefillMs = 1e3 * histogramMean(h.prefill);
    push('server prefill time mean', 'metrics', pf, prefillMs, h.prefill.count);
    if (h.ttft && h.ttft.count > 0) {
      const queueMs = h.queue && h.queue.count > 0 ? 1e3 * histogramMean(h.queue) : 0;
      const ms = 1e3 * histogramMean(h.ttft) - queueMs - prefillMs;
      if (Number.isFinite(ms)) api.push({ probe: probe.name, ms, samples: h.ttft.count });
    }
  } else {
    const ttft = defined(records, (r) => r.ttftMs);
    push('client TTFT mean', 'client', pf, mean(ttft), ttft.length, true);
  }
  return { observations: out, api };
}

function defined(records: readonly RequestRecord[], f: (r: RequestRecord) => number | undefined): number[] {
  return records.map(f).filter((x): x is number => x !== undefined && Number.isFinite(x));
}
