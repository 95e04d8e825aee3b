/**
 * The server side of a probe: scrape `/metrics` and read the histograms a calibration uses, and their
 * deltas between two scrapes (what the engine timed in between).
 */
import { httpGet } from '../client/http-get';
import { histogramDelta, type HistogramSnapshot, readHistogram } from '../observe/histogram';
import { parsePrometheus, type MetricFamily } from '../observe/prometheus';

/** The server histograms a probe reads (V1 names first, then older ones). */
export const PROBE_HISTOGRAMS = {
  itl: ['vllm:inter_token_latency_seconds', 'vllm:time_per_output_token_seconds'],
  prefill: ['vllm:request_prefill_time_seconds'],
  ttft: ['vllm:time_to_first_token_seconds'],
  queue: ['vllm:request_queue_time_seconds'],
  e2e: ['vllm:e2e_request_latency_seconds'],
} as const;

/** Histogram deltas over one probe, by role; absent when the server lacks the series. */
export type ProbeHistograms = Partial<Record<keyof typeof PROBE_HISTOGRAMS, HistogramSnapshot>>;

/** Scrape `/metrics`; undefined when the server has none (or it does not parse). */
export async function scrapeMetrics(baseUrl: string, apiKey?: string): Promise<MetricFamily[] | undefined> {
  try {
    const r = await httpGet(`${baseUrl}/metrics`, { timeoutMs: 10_000, ...(apiKey ? { apiKey } : {}) });
    if (r.status !== 200) return undefined;
    const fams = parsePrometheus(r.text);
    return fams.length > 0 ? fams : undefined;
  } catch {
    return undefined;
  }
}

/** The probe histograms of one scrape. */
export function histograms(fams: MetricFamily[]): ProbeHistograms {
  const out: ProbeHistograms = {};
  for (const [role, names] of Object.entries(PROBE_HISTOGRAMS)) {
    for (const name of names) {
      const h = readHistogram(fams, name);
      if (h) {
        out[role as keyof ProbeHistograms] = h;
        break;
      }
    }
  }
  return out;
}

/** Histogram deltas `after − before`, by role. */
export function deltas(after: ProbeHistograms, before: ProbeHistograms): ProbeHistograms {
  const out: ProbeHistograms = {};
  for (const k of Object.keys(after) as (keyof ProbeHistograms)[]) out[k] = histogramDelta(after[k]!, before[k]);
  return out;
}
