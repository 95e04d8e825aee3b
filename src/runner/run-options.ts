/** The options of `runLoad` and what it returns. */

import type { RunManifest } from '../run/manifest';
import type { GpuSample, MetricsSample, RequestRecord, RequestSpec, RunSummary, Slo } from '../types';
import type { LoadShape } from '../schedule/shapes';
import type { Progress } from './progress';
import type { ChunkStamp } from '../client/chunk-stamp';

/** Options of `runLoad`. Only `baseUrl` and `shape` are always required. */
export interface RunLoadOptions {
  /** Server root, e.g. `http://127.0.0.1:8000` (a trailing `/v1` is accepted). */
  baseUrl: string;
  /** Model to request; default `/v1/models` `data[0].id`. Checked against the served list. */
  model?: string;
  /** Bearer token; default `$LOADLAB_API_KEY`, else `$OPENAI_API_KEY` (as the client). Never written to disk. */
  apiKey?: string;
  /**
   * What to send: a list (cycled when shorter than `requests`) or `i => spec` for measured
   * request i (0-based). Optional when the shape is a timeline built from `{atMs, request}`; none with
   * `sessions(...)`, whose conversations are the workload (every turn is measured; no warm-up).
   */
  workload?: RequestSpec[] | ((i: number) => RequestSpec);
  /** Measured requests; default the workload list's length, the timeline's length or the burst size. */
  requests?: number;
  shape: LoadShape;
  /** Warm-up requests sent first, one by one (request k uses measured spec k), recorded with `warmup: true`; default 0. */
  warmup?: number;
  /** Run folder; default `<root>/<lesson ?? 'runs'>/<name ?? 'run'>-<stamp>`; `false` = keep in memory only. */
  out?: string | false;
  /** Root of run folders; default `'data'`. */
  root?: string;
  lesson?: string;
  name?: string;
  /** Replace a complete run already in `out`; default false. */
  replace?: boolean;
  /** Whole-request timeout, ms; default: the client's. */
  timeoutMs?: number;
  /** No-bytes timeout, ms; default: the client's. */
  idleTimeoutMs?: number;
  /**
   * Stop rule: stop issuing measured requests this many ms after the measured load starts
   * (warm-up not counted); requests issued before then finish (within the timeout) and are
   * recorded; `requests` becomes an upper bound. The manifest records `load.options.stopRule`.
   * Default: none (all `requests` are sent).
   */
  durationMs?: number;
  /** Abort = stop sending, cancel in flight, write what was measured, status `'interrupted'`. */
  signal?: AbortSignal;
  /** SLOs for goodput, ms. */
  slo?: Slo;
  /** A callback (≤ 4 calls/s plus a final one), `true` for a line on stderr, default false. */
  progress?: boolean | ((p: Progress) => void);
  /** Called with every record (warm-up included) as it finishes, after it is on disk. An error it throws is rethrown once the run is saved. */
  onRecord?: (r: RequestRecord) => void;
  /** Merged into the manifest (`target` is merged one level deep). */
  manifestExtra?: Partial<RunManifest>;
  /** Extra request headers. */
  headers?: Record<string, string>;
  /**
   * Scrape the server's `/metrics` during the run (`true` = every 250 ms, or a period in ms),
   * on the run's clock, into `metrics.jsonl`; default false.
   */
  sampleMetrics?: boolean | number;
  /** Sample `nvidia-smi` during the run into `gpu.jsonl` where it exists (never fabricated); default false. */
  sampleGpu?: boolean;
  /**
   * While the run is going, SIGINT (Ctrl-C, or a notebook's "interrupt kernel") interrupts it like
   * `signal` does instead of killing the process; default true.
   */
  abortOnSigint?: boolean;
  /**
   * Worker threads that send the load, for loads beyond one core (./worker-split says how it is
   * shared); default 1 (this thread). Not with `sessions(...)` nor `durationMs`. Records still reach one
   * run folder; the health verdict covers each worker (`manifest.client.workers`).
   */
  workers?: number;
  /**
   * Send from a worker thread even with `workers: 1`: its own event loop and its own heap, so the calling
   * thread's work and garbage collection cannot delay a stamp. The lessons' `measure` sets it, because a
   * notebook kernel's heap is large and its GC pauses reached 10–48 ms. Default false. Not with
   * `sessions(...)` nor `durationMs`.
   */
  thread?: boolean;
  /**
   * How arriving token chunks are stamped: `'turn'` (default; every chunk read in one event-loop turn
   * gets the turn's first reading) or `'callback'` (each at its own data callback, as `vllm bench serve`
   * does). src/client/chunk-stamp.ts says why; the manifest keeps it as `clock.chunkStamp`.
   */
  stamp?: ChunkStamp;
}

/** What `runLoad` returns. */
export interface RunResult {
  /** The run folder, unless `out: false`. */
  dir?: string;
  manifest: RunManifest;
  /** Every record in finishing order, warm-up included. */
  records: RequestRecord[];
  /** Summary of the measured records. */
  summary: RunSummary;
  /** Most requests in flight at once. */
  peakInFlight: number;
  /** `/metrics` samples on the run's clock (with `sampleMetrics`). */
  metrics?: MetricsSample[];
  /** `nvidia-smi` samples (with `sampleGpu`, where it exists). */
  gpu?: GpuSample[];
}
