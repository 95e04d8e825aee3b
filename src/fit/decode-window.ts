/**
 * The clean part of a decode wave: the steps while every request of the wave was decoding. Before
 * it, prefill chunks of late arrivals share steps with the early ones' decodes; after it, finished
 * requests shrink the batch. Inside it every step is a pure decode of the whole wave, so the mean
 * inter-token latency there is the step time of B decodes.
 * - Server (`/metrics`): scrape every ~30 ms; the window opens at the first scrape where the TTFT
 *   count has risen by B (every prefill done) and closes at the last scrape before the e2e count
 *   rises (nothing finished). Its ITL `_sum`/`_count` delta is exact, whatever the network does.
 * - Client: token gaps of chunks that arrived after the wave's last first token and before its
 *   first finished stream (client clock: network and client load enter).
 */
import { type HistogramSnapshot, histogramMean } from '../observe/histogram';
import type { MetricFamily } from '../observe/prometheus';
import type { RequestRecord } from '../types';
import { deltas, histograms, type ProbeHistograms, scrapeMetrics } from './server-scrape';

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

/** Steps later than `boundS` in `h` (a lateness histogram delta): the count above the largest bucket bound ≤ boundS. */
function lateSteps(h: HistogramSnapshot | undefined, boundS: number): number {
  if (!h) return 0;
  let i = -1;
  while (i + 1 < h.le.length && h.le[i + 1] <= boundS) i++;
  return h.count - (i >= 0 ? h.counts[i] : 0);
}

/**
 * Poll `/metrics` while the wave runs (until `done()`) and return the clean window's ITL, if one was
 * caught. The simulator runs in real time: a step that ends more than its own duration late makes it
 * resync to the clock, and the gap enters its ITL. So the window is summed interval by interval
 * (between consecutive scrapes), leaving out intervals where `loadlab:sim_step_lateness_seconds`
 * shows a step later than the interval's mean ITL, and the interval after each (the inflated sample
 * is observed one step later). A real vLLM has no such series: nothing is left out.
 */
export async function serverWindow(
  baseUrl: string,
  apiKey: string | undefined,
  start: MetricFamily[],
  batch: number,
  done: () => boolean,
): Promise<DecodeWindow | undefined> {
  const h0 = histograms(start);
  const snaps: ProbeHistograms[] = [];
  while (!done()) {
    await sleep(30);
    const fams = await scrapeMetrics(baseUrl, apiKey);
    if (!fams) continue;
    const d = deltas(histograms(fams), h0);
    if ((d.e2e?.count ?? 0) > 0) break;
    if ((d.ttft?.count ?? 0) >= batch) snaps.push(d);
  }
  let count = 0;
  let sumS = 0;
  let tokens = 0;
  const pick = (h: ProbeHistograms): ProbeHistograms => ({
    ...(h.itl ? { itl: h.itl } : {}),
    ...(h.late ? { late: h.late } : {}),
  });
  let lateBefore = snaps.length > 0 ? lateSteps(snaps[0].late, 0.001) > 0 : false;
  for (let k = 1; k < snaps.length; k++) {
    const w = deltas(pick(snaps[k]), pick(snaps[k - 1]));
    if (!w.itl || w.itl.count <= 0) continue;
    const late = lateSteps(w.late, histogramMean(w.itl)) > 0;
    // A resync inflates the ITL of the step after the late one, which may land in the next interval.
    const skip = late || lateBefore;
    lateBefore = late;
    if (skip) continue;
    count += w.itl.count;
    sumS += w.itl.sum;
    tokens += w.itl.count * (1 + ((snaps[k].itl?.count ?? 0) + (snaps[k - 1].itl?.count ?? 0)) / (2 * batch));
  }
  if (count <= 0) return undefined;
  return { source: 'metrics', count, meanMs: (1e3 * sumS) / count, meanGeneratedTokens: tokens / count };
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
