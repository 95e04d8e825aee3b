/**
 * The clean part of a decode wave: the steps while every request of the wave was decoding. Before
 * it, prefill chunks of late arrivals share steps with the early ones' decodes; after it, finished
 * requests shrink the batch. Inside it every step is a pure decode of the whole wave, so the mean
 * inter-token latency there is the step time of B decodes.
 * - Server (`/metrics`): scrape every ~20 ms; the window opens at the first scrape where the TTFT
 *   count has risen by B (every prefill done) and closes at the last scrape before the e2e count
 *   rises (nothing finished). Its ITL `_sum`/`_count` delta is exact, whatever the network does.
 * - Client: token gaps of chunks that arrived after the wave's last first token and before its
 *   first finished stream (client clock: network and client load enter).
 */
import { histogramMean } from '../observe/histogram';
import type { MetricFamily } from '../observe/prometheus';
import type { RequestRecord } from '../types';
import { deltas, histograms, scrapeMetrics } from './server-scrape';

/** Mean inter-token latency over a clean window of a wave. */
export interface DecodeWindow {
  source: 'metrics' | 'client';
  /** ITL samples in the window. */
  count: number;
  /** Mean ITL, ms. */
  meanMs: number;
  /** Mean output tokens already generated per request during the window (sets the KV context). */
  meanGeneratedTokens: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `/metrics` while the wave runs (until `done()`), and return the clean window's ITL, if one was caught. */
export async function serverWindow(
  baseUrl: string,
  apiKey: string | undefined,
  start: MetricFamily[],
  batch: number,
  done: () => boolean,
): Promise<DecodeWindow | undefined> {
  let open: MetricFamily[] | undefined;
  let close: MetricFamily[] | undefined;
  const h0 = histograms(start);
  while (!done()) {
    await sleep(20);
    const fams = await scrapeMetrics(baseUrl, apiKey);
    if (!fams) continue;
    const d = deltas(histograms(fams), h0);
    if ((d.e2e?.count ?? 0) > 0) break;
    if (!open && (d.ttft?.count ?? 0) >= batch) open = fams;
    else if (open) close = fams;
  }
  if (!open || !close) return undefined;
  const a = deltas(histograms(open), h0).itl;
  const b = deltas(histograms(close), h0).itl;
  const w = b && a ? deltas({ itl: histograms(close).itl! }, { itl: histograms(open).itl! }).itl : undefined;
  if (!w || !a || !b || w.count <= 0) return undefined;
  return { source: 'metrics', count: w.count, meanMs: 1e3 * histogramMean(w), meanGeneratedTokens: 1 + (a.count + b.count) / (2 * batch) };
}

/** The clean window of a wave from its records' chunk times; undefined when it is empty or a request failed. */
export function clientWindow(records: readonly RequestRecord[]): DecodeWindow | undefined {
  if (records.length === 0 || records.some((r) => !r.ok || r.firstTokenMs === undefined)) return undefined;
  const from = Math.max(...records.map((r) => r.firstTokenMs!));
  const to = Math.min(...records.map((r) => r.chunkMs[r.chunkMs.length - 1] ?? r.endMs));
  let sum = 0;
  let count = 0;
  let tokens = 0;
  for (const r of records) {
    for (let k = 1; k < r.chunkMs.length; k++) {
      if (r.chunkMs[k - 1] < from || r.chunkMs[k] > to) continue;
      sum += r.chunkMs[k] - r.chunkMs[k - 1];
      count += 1;
      tokens += k;
    }
  }
  return count > 0 ? { source: 'client', count, meanMs: sum / count, meanGeneratedTokens: tokens / count } : undefined;
}

