/**
 * Scrapes a server's `/metrics` on a fixed period during a run and turns each scrape into a
 * `MetricsSample` on the run's clock, optionally appending it to `metrics.jsonl`.
 *
 * Rules: one scrape at a time (the next starts a jittered `intervalMs` after the previous one
 * started, or at once if it overran); the gap is drawn uniformly from
 * `intervalMs × [1 − jitter, 1 + jitter]` by a seeded generator (mean `intervalMs`), so a
 * periodic arrival pattern (e.g. 4 req/s against a 250 ms period) cannot phase-lock with the
 * scrapes and show an idle server (aliasing); the same seed gives the same gaps; each scrape has its own timeout; a failed scrape (refused,
 * timeout, non-200, unparsable text) is counted and skipped, never fatal. `stop()` cancels the
 * scrape in flight, clears the timer, closes the connection and the file: nothing is left.
 * File lines are whole JSON objects, each written with one append (see `src/run/atomic.ts`).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { dispatcherFor } from '../client/fetch-text';
import { openLineAppender, type LineAppender } from '../run/atomic';
import type { MetricsSample } from '../types';
import { seededRng } from '../rng';
import { httpGet, serverRoot } from '../client/http-get';
import { parsePrometheus, type MetricFamily } from './prometheus';
import { sampleLines, toMetricsSample } from './vllm-metrics';

/** Options of `startMetricsSampler`. */
export interface MetricsSamplerOptions {
  /** Server root, e.g. `http://127.0.0.1:8000` (a trailing `/v1` is ignored). */
  baseUrl: string;
  /** Mean scrape period in ms; default 250 (~4 Hz). */
  intervalMs?: number;
  /**
   * Relative jitter of each gap, 0..0.9: gaps are uniform in `intervalMs × [1 − jitter, 1 + jitter]`.
   * Default 0.5, so periodic arrivals cannot alias with the scrapes; 0 = a fixed period.
   */
  jitter?: number;
  /** Seed of the jitter; default 1 (same gaps every run). */
  seed?: number;
  /** The run's clock, ms since the run origin; default `performance.now`. Stamps only, not scheduling. */
  now?: () => number;
  /** Called with each sample as it is taken. */
  onSample?: (sample: MetricsSample) => void;
  /** Called with each failed scrape's error (they are counted in `failures` either way). */
  onError?: (err: Error) => void;
  /** Append each sample as one JSON line to this file (e.g. `<run>/metrics.jsonl`); folders are created. */
  file?: string;
  /** Sent as a bearer token (only needed if `/metrics` sits behind a proxy that checks it). */
  apiKey?: string;
  /** Extra headers sent on every scrape (`--header`: a gateway's key or routing header). */
  headers?: Record<string, string>;
  /** Per-scrape timeout in ms; default `max(1000, 4 × intervalMs)`. */
  timeoutMs?: number;
  /** Only series whose labels include these, e.g. `{ model_name: 'qwen' }`. */
  labels?: Record<string, string>;
}

/** A running sampler. */
export interface MetricsSampler {
  /** Samples so far, in time order (live array). */
  readonly samples: MetricsSample[];
  /** Scrapes that failed and were skipped. */
  readonly failures: number;
  /** The last failure's message, if any. */
  readonly lastError: string | undefined;
  /** Stops sampling; resolves with all samples once the file is flushed and closed. Idempotent. */
  stop(): Promise<MetricsSample[]>;
}

/**
 * The sampler's gaps between scrape starts (ms): each uniform in `intervalMs × [1 − jitter, 1 + jitter]`,
 * from `seededRng(seed)`, so the same seed repeats the same gaps. `jitter` 0 gives a fixed period.
 */
export function scrapeGaps(intervalMs: number, jitter: number, seed: number): () => number {
  const rng = seededRng(seed);
  return () => intervalMs * (1 + jitter * (2 * rng() - 1));
}

/** Defaults and checks of the sampler options; `url` is the server's `/metrics`. */
function resolveSamplerOptions(options: MetricsSamplerOptions) {
  const intervalMs = options.intervalMs ?? 250;
  if (!(intervalMs > 0)) throw new Error(`intervalMs must be > 0 ms, got ${intervalMs}`);
  const jitter = options.jitter ?? 0.5;
  if (!(jitter >= 0 && jitter <= 0.9)) throw new Error(`jitter must be a fraction 0..0.9 (0 = fixed period), got ${jitter}`);
  const now = options.now ?? (() => performance.now());
  const timeoutMs = options.timeoutMs ?? Math.max(1000, 4 * intervalMs);
  const root = serverRoot(options.baseUrl);
  if (!/^https?:\/\/[^/]+/.test(root))
    throw new Error(`baseUrl must be an http(s) URL such as http://127.0.0.1:8000, got '${options.baseUrl}'`);
  const url = `${root}/metrics`;
  const nextGapMs = scrapeGaps(intervalMs, jitter, options.seed ?? 1);
  return { intervalMs, nextGapMs, now, timeoutMs, root, url };
}

/** The `metrics.jsonl` appender (folders created), or undefined without a file. */
function openSampleFile(file: string | undefined): LineAppender | undefined {
  if (!file) return undefined;
  mkdirSync(dirname(file), { recursive: true });
  return openLineAppender(file);
}

/** What a sampler keeps: the samples (each with counter deltas since the previous scrape), the file, the failures. */
function openSampleLog(options: MetricsSamplerOptions) {
  const samples: MetricsSample[] = [];
  let previous: MetricFamily[] | undefined;
  const out = openSampleFile(options.file);
  const log = {
    samples,
    failures: 0,
    lastError: undefined as string | undefined,
    /** Records one scrape's families, stamped `tMs` on the run clock. */
    add(families: MetricFamily[], tMs: number): void {
      const sample = toMetricsSample(families, tMs, { previous, labels: options.labels });
      previous = families;
      samples.push(sample);
      out?.append(sample);
      options.onSample?.(sample);
    },
    /** Counts a failed scrape (skipped, never fatal). */
    fail(err: Error): void {
      log.failures++;
      log.lastError = err.message;
      options.onError?.(err);
    },
    close(): void {
      out?.close();
    },
  };
  return log;
}

/**
 * Starts sampling at once (first scrape immediately), then every `intervalMs` on average, each gap
 * jittered (`jitter`, seeded) so periodic arrivals cannot alias with the scrapes. Each sample's `tMs` is the midpoint of
 * the scrape's send and receive times on `now`, so it sits within half a round trip of the
 * moment the server rendered its gauges.
 */
export function startMetricsSampler(options: MetricsSamplerOptions): MetricsSampler {
  const { nextGapMs, now, timeoutMs, root, url } = resolveSamplerOptions(options);
  const pool = dispatcherFor(new URL(root).origin, 1);
  const log = openSampleLog(options);

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inflight: Promise<void> | undefined;
  let abort: AbortController | undefined;
  let stopping: Promise<MetricsSample[]> | undefined;

  async function scrape(signal: AbortSignal): Promise<void> {
    const t0 = now();
    try {
      const res = await httpGet(url, {
        timeoutMs,
        apiKey: options.apiKey,
        signal,
        dispatcher: pool,
        headers: { accept: 'text/plain; version=0.0.4', ...options.headers },
      });
      if (res.status !== 200) throw new Error(`GET ${url} returned HTTP ${res.status}: ${res.text.slice(0, 200)}`);
      // Only what a sample reads; a body with none of it is parsed whole, so text that is not Prometheus still fails.
      const kept = sampleLines(res.text);
      const families = parsePrometheus(kept === '' ? res.text : kept);
      const t1 = now();
      if (stopped) return;
      log.add(families, (t0 + t1) / 2);
    } catch (err) {
      if (!stopped) log.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  function tick(): void {
    timer = undefined;
    if (stopped) return;
    // Scheduling uses the process clock: `now` may be a scripted run clock.
    const started = performance.now();
    abort = new AbortController();
    inflight = scrape(abort.signal).finally(() => {
      inflight = undefined;
      if (!stopped) timer = setTimeout(tick, Math.max(0, nextGapMs() - (performance.now() - started)));
    });
  }

  tick();

  return {
    samples: log.samples,
    get failures() {
      return log.failures;
    },
    get lastError() {
      return log.lastError;
    },
    stop() {
      stopping ??= (async () => {
        stopped = true;
        if (timer) clearTimeout(timer);
        timer = undefined;
        abort?.abort(new Error('sampler stopped'));
        await inflight;
        await pool.destroy();
        log.close();
        return log.samples;
      })();
      return stopping;
    },
  };
}
