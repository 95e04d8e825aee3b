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
import { histogramDelta } from '../observe/histogram';
import { type MetricFamily, sumValues } from '../observe/prometheus';
import type { RequestRecord } from '../types';
import { SIM_RESYNC_SERIES, SIM_STEPS_SERIES } from '../wire/sim-series';
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

/** A scrape during the wave: histogram deltas since its start, and the simulator's step and resync counters. */
export interface WaveSnap {
  h: ProbeHistograms;
  /** `loadlab:sim_steps_total` and `loadlab:sim_resyncs_total`; undefined on a real vLLM. */
  steps?: number;
  resyncs?: number;
}

function waveSnap(fams: MetricFamily[], h0: ProbeHistograms): WaveSnap {
  const steps = sumValues(fams, `${SIM_STEPS_SERIES}_total`);
  const resyncs = sumValues(fams, `${SIM_RESYNC_SERIES}_total`);
  return {
    h: deltas(histograms(fams), h0),
    ...(steps !== undefined ? { steps } : {}),
    ...(resyncs !== undefined ? { resyncs } : {}),
  };
}

/**
 * Poll `/metrics` while the wave runs (until `done()`) and return the clean window's ITL, if one was
 * caught. The simulator runs in real time: a step that ends later than its own duration makes it
 * start the next step at the actual time (a resync, src/sim/engine/engine-loop.ts), and that gap enters
 * the ITL sample of the next step's outputs. So the window is summed interval by interval (between
 * consecutive scrapes), leaving out each interval where `loadlab:sim_resyncs_total` rose, and the
 * intervals after it until the step after the resync has ended (the steps counter has passed the value
 * it had when the resync was seen). A real vLLM has no such series: nothing is left out.
 */
export async function serverWindow(
  baseUrl: string,
  apiKey: string | undefined,
  start: MetricFamily[],
  batch: number,
  done: () => boolean,
): Promise<DecodeWindow | undefined> {
  const h0 = histograms(start);
  const first = waveSnap(start, h0);
  const snaps: WaveSnap[] = [];
  while (!done()) {
    await sleep(30);
    const fams = await scrapeMetrics(baseUrl, apiKey);
    if (!fams) continue;
    const s = waveSnap(fams, h0);
    if ((s.h.e2e?.count ?? 0) > 0) break;
    if ((s.h.ttft?.count ?? 0) >= batch) snaps.push(s);
  }
  return cleanWindow(first, snaps, batch);
}

/** The ITL of the intervals between `snaps` (scrapes after every first token) that no resync touched (see `serverWindow`). */
export function cleanWindow(first: WaveSnap, snaps: readonly WaveSnap[], batch: number): DecodeWindow | undefined {
  let count = 0;
  let sumS = 0;
  let tokens = 0;
  const rose = (a: WaveSnap, b: WaveSnap) => (b.resyncs ?? 0) > (a.resyncs ?? 0);
  // Steps launched when the last resync was seen: an interval starting at or before it may hold the gap
  // (the steps counter never falls, so an interval where a resync was seen starts at or before it too).
  let dirtyUntil = snaps.length > 0 && rose(first, snaps[0]) ? (snaps[0].steps ?? 0) : -1;
  for (let k = 1; k < snaps.length; k++) {
    const [a, b] = [snaps[k - 1], snaps[k]];
    if (rose(a, b)) dirtyUntil = b.steps ?? 0;
    const itl = b.h.itl && histogramDelta(b.h.itl, a.h.itl);
    if ((a.steps ?? 0) <= dirtyUntil || !itl || itl.count <= 0) continue;
    count += itl.count;
    sumS += itl.sum;
    tokens += itl.count * (1 + ((b.h.itl?.count ?? 0) + (a.h.itl?.count ?? 0)) / (2 * batch));
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
