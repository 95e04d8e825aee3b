/**
 * Run one probe against a server and keep what it measured: the histogram deltas of the server's
 * `/metrics` around it (exact means of what the engine timed, so the network and a loaded client do
 * not enter) and the client's records (prompt tokens from `usage`, client TTFT and TPOT). A failed
 * request is counted, never thrown.
 */
import type { Client } from '../client/client';
import { seededRng, type Rng } from '../rng';
import type { RequestRecord } from '../types';
import { syntheticPrompt } from '../workload/datasets/text';
import { clientWindow, type DecodeWindow, serverWindow } from './decode-window';
import type { Probe } from './probe-plan';
import { deltas, histograms, type ProbeHistograms, scrapeMetrics } from './server-scrape';

/** What one probe measured. */
export interface ProbeMeasurement {
  probe: Probe;
  /** Successful records. */
  records: RequestRecord[];
  /** Failed requests by error code. */
  failures: Record<string, number>;
  /** Server histogram deltas; undefined without `/metrics`. */
  metrics?: ProbeHistograms;
  /** Decode probes: the steps while every request of the wave was decoding (`decode-window.ts`); undefined when none was caught. */
  window?: DecodeWindow;
  /** Wall time of the probe, s. */
  wallSeconds: number;
}

/** Where a probe sends: the client, the server root for `/metrics`, whether to scrape, and the prompt RNG. */
export interface ProbeTarget {
  client: Client;
  baseUrl: string;
  apiKey?: string;
  /** Scrape `/metrics` around the probe. */
  metrics: boolean;
  rng: Rng;
  /** Next request index (advanced by each send). */
  nextIndex: number;
}

/** A target for `client`, prompts seeded by `seed` (default 14). */
export function probeTarget(client: Client, baseUrl: string, metrics: boolean, seed = 14, apiKey?: string): ProbeTarget {
  return { client, baseUrl, metrics, rng: seededRng(seed), nextIndex: 0, ...(apiKey ? { apiKey } : {}) };
}

/** Send one fixed-output completions request of about `promptTokens` tokens (a unique prompt: no prefix-cache hits). */
export function sendProbeRequest(t: ProbeTarget, promptTokens: number, outputTokens: number): Promise<RequestRecord> {
  const prompt = syntheticPrompt(t.rng, promptTokens);
  const index = t.nextIndex++;
  return t.client.send(
    { api: 'completions', prompt, maxTokens: outputTokens, fixedOutput: true, temperature: 0 },
    { index, intendedStartMs: performance.now(), requestId: `loadlab-calibrate-${index}` },
  );
}

/**
 * Run `probe`: `repeats` waves of `concurrency` requests sent together (prefill probes: waves of one),
 * each with its clean decode window (`decode-window.ts`).
 */
export async function runProbe(t: ProbeTarget, probe: Probe): Promise<ProbeMeasurement> {
  const t0 = performance.now();
  const before = t.metrics ? await scrapeMetrics(t.baseUrl, t.apiKey) : undefined;
  const all: RequestRecord[] = [];
  let window: DecodeWindow | undefined;
  for (let k = 0; k < probe.repeats; k++) {
    const start = before ? await scrapeMetrics(t.baseUrl, t.apiKey) : undefined;
    let done = false;
    const wave = Promise.all(
      Array.from({ length: probe.concurrency }, () => sendProbeRequest(t, probe.promptTokens, probe.outputTokens)),
    ).finally(() => (done = true));
    const server = start ? serverWindow(t.baseUrl, t.apiKey, start, probe.concurrency, () => done) : Promise.resolve(undefined);
    const records = await wave;
    all.push(...records);
    window = mergeWindows(window, start ? await server : clientWindow(records));
  }
  const after = before ? await scrapeMetrics(t.baseUrl, t.apiKey) : undefined;
  const failures: Record<string, number> = {};
  for (const r of all) if (!r.ok) failures[r.error?.code ?? 'unknown'] = (failures[r.error?.code ?? 'unknown'] ?? 0) + 1;
  return {
    probe,
    records: all.filter((r) => r.ok),
    failures,
    ...(before && after ? { metrics: deltas(histograms(after), histograms(before)) } : {}),
    ...(window ? { window } : {}),
    wallSeconds: (performance.now() - t0) / 1000,
  };
}

function mergeWindows(a: DecodeWindow | undefined, b: DecodeWindow | undefined): DecodeWindow | undefined {
  if (!a || !b) return a ?? b;
  const count = a.count + b.count;
  return {
    source: a.source,
    count,
    meanMs: (a.meanMs * a.count + b.meanMs * b.count) / count,
    meanGeneratedTokens: (a.meanGeneratedTokens * a.count + b.meanGeneratedTokens * b.count) / count,
  };
}
