/**
 * `runLoad`: one measured run. workload → load shape → client → records (appended to
 * `requests.jsonl` as each finishes) → summary (`summary.json`).
 *
 * Clock: one monotonic origin per run (`performance.now()` at the start); every record time
 * is ms since it, and `manifest.clock.originEpochMs` maps it to wall time.
 * Intended send times: closed loop = the moment a slot frees; burst/open/timeline = the
 * schedule (paced on the absolute clock by `sleepUntil`). `queueMs` shows any client wait.
 * Abort (`signal`): no new sends, in-flight requests end as `aborted` records, the summary of
 * what was recorded is written and the manifest says `'interrupted'`; the promise resolves.
 */

import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { createClient } from '../client/client';
import { writeJsonAtomic } from '../run/atomic';
import type { RunManifest } from '../run/manifest';
import { createRun, type RunWriter } from '../run/store';
import { summarizeRun } from '../stats/summary';
import type { GpuSample, MetricsSample, RequestRecord, RequestSpec, RunSummary, Slo } from '../types';
import { dispatchLoad } from './dispatch';
import { startClientHealth, startSimLatenessWatch, type ClientHealthWatch } from './health';
import { loadManifestInput, memoryManifest } from './manifest-input';
import { createProgress, type Progress } from './progress';
import type { LoadShape } from './shapes';
import { resolveTarget } from './target';
import { resolveRunOptions } from './validate';
import { startSamplers } from './samplers';
import { checkPromptLengths } from './preflight';

export type { Progress };

/** Connections an open loop without `maxConcurrency` may use. */
export const OPEN_LOOP_CONNECTIONS = 256;

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
   * request i (0-based). Optional when the shape is a timeline built from `{atMs, request}`.
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

/** Run a load test. Throws only on bad options or an unusable target (before any load). */
export async function runLoad(opts: RunLoadOptions): Promise<RunResult> {
  const ro = resolveRunOptions(opts);
  const { shape, n, warmup, specOf } = ro;
  const apiKey = opts.apiKey ?? process.env.LOADLAB_API_KEY ?? process.env.OPENAI_API_KEY;
  const target = await resolveTarget(opts.baseUrl, { model: opts.model, apiKey });
  const preflight =
    target.probe.maxModelLen !== undefined
      ? await checkPromptLengths(target.rootUrl, target.model, Array.from({ length: n }, (_, i) => specOf(i)), target.probe.maxModelLen, {
          ...(apiKey ? { apiKey } : {}),
        })
      : { checked: 0, skipped: 'the server did not report max_model_len; prompt lengths were not checked' };

  const stop = new AbortController();
  // Every in-flight request and the pacer listen on this one signal.
  setMaxListeners(warmup + n + 16, stop.signal);
  const onUserAbort = () => stop.abort(opts.signal?.reason);
  if (opts.signal?.aborted) stop.abort(opts.signal.reason);
  else opts.signal?.addEventListener('abort', onUserAbort, { once: true });
  // Ctrl-C, or a notebook's "interrupt kernel" (tslab delivers it to the process as SIGINT):
  // stop sending, cancel what is in flight, keep and summarise what was measured.
  const onSigint = () => stop.abort(new Error('interrupted (SIGINT)'));
  if (opts.abortOnSigint !== false) process.on('SIGINT', onSigint);
  const detach = () => {
    opts.signal?.removeEventListener('abort', onUserAbort);
    process.removeListener('SIGINT', onSigint);
  };

  // One connection per request that can be in flight, so undici never queues a request unseen.
  // Open loops without a cap share at most OPEN_LOOP_CONNECTIONS: one socket per late request
  // would turn any stall into a connection storm (bench/README.md §2); a wait for a socket shows in queueMs.
  const connections =
    shape.kind === 'closed'
      ? shape.concurrency
      : shape.kind === 'open'
        ? (shape.maxConcurrency ?? Math.min(n, OPEN_LOOP_CONNECTIONS))
        : n;
  const origin = performance.now();
  const now = () => performance.now() - origin;
  const client = createClient({
    baseUrl: target.rootUrl,
    model: target.model,
    now,
    ...(opts.apiKey !== undefined ? { apiKey: opts.apiKey } : {}),
    connections,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.idleTimeoutMs !== undefined ? { idleTimeoutMs: opts.idleTimeoutMs } : {}),
    ...(opts.headers !== undefined ? { headers: opts.headers } : {}),
  });

  const input = loadManifestInput({
    target,
    shape,
    requests: n,
    warmup,
    workloadInfo: ro.workloadInfo,
    originPerfMs: origin,
    ...(opts.lesson !== undefined ? { lesson: opts.lesson } : {}),
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(opts.manifestExtra !== undefined ? { extra: opts.manifestExtra } : {}),
  });
  let writer: RunWriter | undefined;
  let manifest: RunManifest;
  try {
    if (opts.out !== false) {
      const where = typeof opts.out === 'string' ? { dir: opts.out } : { root: opts.root, lesson: opts.lesson, name: opts.name };
      writer = createRun({ ...where, replace: opts.replace }, input);
      manifest = writer.manifest;
    } else {
      manifest = memoryManifest(input);
    }
  } catch (err) {
    await client.close();
    detach();
    throw err;
  }

  const records: RequestRecord[] = [];
  const progress = createProgress(n, now, { sink: opts.progress ?? false });
  const idPrefix = `ll-${randomBytes(4).toString('hex')}`;
  let inFlight = 0;
  let peakInFlight = 0;
  let sent = 0;
  let callbackError: unknown;

  const fire = async (index: number, spec: RequestSpec, intendedStartMs: number, isWarmup: boolean) => {
    if (stop.signal.aborted) return;
    inFlight++;
    sent++;
    peakInFlight = Math.max(peakInFlight, inFlight);
    progress.setInFlight(inFlight);
    let record: RequestRecord;
    try {
      record = await client.send(spec, {
        index,
        warmup: isWarmup,
        intendedStartMs,
        requestId: `${idPrefix}-${index}`,
        signal: stop.signal,
      });
    } finally {
      inFlight--;
      progress.setInFlight(inFlight);
    }
    records.push(record);
    writer?.append(record);
    progress.record(record.ok, record.ttftMs, record.warmup);
    try {
      opts.onRecord?.(record);
    } catch (err) {
      callbackError ??= err;
    }
  };

  const samplers = startSamplers(opts, target.rootUrl, now, writer);
  const simWatch = target.probe.simulated ? await startSimLatenessWatch(target.rootUrl) : undefined;
  let health: ClientHealthWatch | undefined;
  let latenessMs: number[] = [];
  try {
    progress.setPhase(warmup > 0 ? 'warmup' : 'load');
    for (let k = 0; k < warmup && !stop.signal.aborted; k++) await fire(k, specOf(k % n), now(), true);
    progress.setPhase('load');
    // Judged over the measured load only: warm-up includes one-off start-up work.
    health = startClientHealth();
    ({ latenessMs } = await dispatchLoad(shape, n, (i, due) => fire(warmup + i, specOf(i), due, false), {
      now,
      signal: stop.signal,
    }));
  } catch (err) {
    health?.stop();
    await samplers.stop();
    progress.finish();
    writer?.abort('failed', { notes: [`runner error: ${(err as Error)?.message ?? String(err)}`] });
    await client.close();
    detach();
    throw err;
  }
  const status = stop.signal.aborted ? 'interrupted' : 'complete';
  const clientHealth = (health ?? startClientHealth()).stop();
  const simLateness = await simWatch?.finish();
  const sampled = await samplers.stop();
  progress.finish();
  detach();
  await client.close();

  const summary: RunSummary = {
    ...summarizeRun(records, opts.slo ? { slo: opts.slo } : {}),
    health: {
      clientBound: clientHealth.clientBound,
      simBehind: simLateness?.simBehind ?? false,
      warnings: [...clientHealth.reasons, ...(simLateness?.reasons ?? [])],
    },
  };
  const sortedLate = [...latenessMs].sort((a, b) => a - b);
  const patch: Partial<RunManifest> = {
    client: {
      ...(manifest.client ?? {}),
      peakInFlight,
      connections,
      plannedRequests: n,
      warmup,
      sent,
      recorded: records.length,
      preflight,
      ...(sortedLate.length > 0
        ? { scheduleLatenessMs: { p50: sortedLate[sortedLate.length >> 1], max: sortedLate[sortedLate.length - 1] } }
        : {}),
      ...clientHealth,
      ...(simLateness ? { simLateness } : {}),
    },
  };
  if (status === 'interrupted') patch.notes = [...(manifest.notes ?? []), `interrupted after ${sent} of ${warmup + n} requests were sent`];
  if (writer) {
    if (status === 'complete') writer.finish(summary, patch);
    else {
      // The store's finish() always marks 'complete'; an interrupted run still gets its summary.
      writeJsonAtomic(writer.path('summary.json'), summary);
      writer.abort('interrupted', patch);
    }
    manifest = writer.manifest;
  } else {
    manifest = { ...manifest, ...patch, status, endedAt: new Date().toISOString() };
  }
  if (callbackError !== undefined) throw callbackError;
  return { ...(writer ? { dir: writer.dir } : {}), manifest, records, summary, peakInFlight, ...sampled };
}
