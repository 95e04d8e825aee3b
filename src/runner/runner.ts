/**
 * `runLoad`: one measured run. workload → load shape → client → records (appended to
 * `requests.jsonl` as each finishes) → summary (`summary.json`).
 *
 * Clock: one monotonic origin per run (`performance.now()` at the start); every record time
 * is ms since it, and `manifest.clock.originEpochMs` maps it to wall time.
 * Intended send times: closed loop = the moment a slot frees; burst/open/timeline = the
 * schedule (paced on the absolute clock by `sleepUntil`); sessions = the previous turn's end + think time
 * (schedule/session-driver.ts). `queueMs` shows any client wait.
 * Duration (`durationMs`): no request is issued after the deadline; those issued before finish (not with sessions).
 * Abort (`signal`): no new sends, in-flight requests end as `aborted` records, the summary of
 * what was recorded is written and the manifest says `'interrupted'`; the promise resolves.
 */

import { checkChunkStamp } from '../client/chunk-stamp';
import { type ClientOptions, createClient } from '../client/client';
import { warmClient } from '../client/warm-up';
import { dispatchLoad } from '../schedule/dispatch';
import { runSessions, type SessionFire, type SessionsReport } from '../schedule/session-driver';
import { startClientHealth, startSimLatenessWatch, type ClientHealthWatch } from './health';
import { createProgress, type Progress, type ProgressTracker } from './progress';
import { observed, runPatch, runSummary, saveOutcome, watchRunCpuUsers } from './runner-outcome';
import { createRunSender, type RunSender } from './runner-sender';
import { checkDurationMs, durationStopRule, watchRunStop } from './runner-stop';
import type { LoadShape } from '../schedule/shapes';
import { resolveTarget, type ResolvedTarget } from './target';
import { openRunStore, preflightPrompts } from './run-open';
import { resolveRunOptions, type ResolvedRunOptions } from './validate';
import { startSamplers } from './samplers';
import type { RunLoadOptions, RunResult } from './run-options';
import { resolveApiKey, type TargetAuth } from '../client/url';
import { createWorkerLoad, type WorkerLoad } from './worker-pool';
import { checkWorkers } from './worker-split';
import { planLoadCpus, type LoadCpuPlan } from './load-cpus';

export type { Progress };
export type { RunLoadOptions, RunResult } from './run-options';

/** Connections an open loop without `maxConcurrency` may use. */
export const OPEN_LOOP_CONNECTIONS = 256;

/** Run a load test. Throws only on bad options or an unusable target (before any load). */
export async function runLoad(opts: RunLoadOptions): Promise<RunResult> {
  const ro = resolveRunOptions(opts);
  const stamp = checkChunkStamp(opts.stamp);
  checkDurationMs(opts.durationMs);
  const workers = checkWorkers(opts.workers, ro.shape, opts.durationMs, opts.thread);
  const apiKey = resolveApiKey(opts.apiKey);
  // Every call to the target carries the key and the headers: probe, /tokenize, /metrics, requests.
  const auth = { ...(apiKey ? { apiKey } : {}), ...(opts.headers ? { headers: opts.headers } : {}) };
  const target = await resolveTarget(opts.baseUrl, { model: opts.model, ...auth });
  // Against a simulator on this machine, this thread (and each worker) keeps off its engine's CPU (./load-cpus).
  const cpus = planLoadCpus(target);
  const unpin = cpus.pinHere();
  try {
    return await runOnTarget(opts, { ro, stamp, workers, auth, target, cpus });
  } finally {
    unpin();
  }
}

/** What `runLoad` checked and resolved before the run. */
interface Resolved {
  ro: ResolvedRunOptions;
  stamp: ReturnType<typeof checkChunkStamp>;
  workers: number;
  auth: TargetAuth;
  target: ResolvedTarget;
  cpus: LoadCpuPlan;
}

/** `runLoad` once the options are checked and the target resolved. */
async function runOnTarget(opts: RunLoadOptions, r: Resolved): Promise<RunResult> {
  const { ro, stamp, workers, auth, target, cpus } = r;
  const preflight = await preflightPrompts(target, ro, auth);
  const threaded = workers > 1 || opts.thread === true;
  const connections = connectionsFor(ro.shape, ro.n);
  const clientOptions: ClientOptions = {
    baseUrl: target.rootUrl,
    model: target.model,
    stamp,
    ...(opts.apiKey !== undefined ? { apiKey: opts.apiKey } : {}),
    connections,
    ...timeoutsOf(opts),
    ...(opts.headers !== undefined ? { headers: opts.headers } : {}),
  };
  // The sending thread runs the client's code on a stand-in first (src/client/warm-up.ts); worker threads warm their own.
  if (!threaded) await warmClient(clientOptions, ro.specOf(0));
  const stop = watchRunStop(opts.signal, opts.abortOnSigint, ro.warmup + ro.n + 16);
  const origin = performance.now();
  const now = () => performance.now() - origin;
  const client = createClient({ ...clientOptions, now });
  const { writer, manifest } = await openRunStore({ ...opts, stamp }, ro, target, origin, client, stop);
  const progress = createProgress(ro.n, now, { sink: opts.progress ?? false });
  const poolOpts = { workers, connections, origin, progress, writer, onRecord: opts.onRecord, client: workerClientOf(r, opts) };
  const pool = threaded ? createWorkerLoad({ ...poolOpts, yieldHere: () => cpus.yieldHere() }) : undefined;
  const sender = pool ?? createRunSender({ client, signal: stop.signal, progress, writer, onRecord: opts.onRecord });
  const samplers = startSamplers({ ...opts, ...auth }, target.rootUrl, now, writer);
  const simWatch = target.probe.simulated ? await startSimLatenessWatch(target.rootUrl, { auth }) : undefined;
  const users = watchRunCpuUsers(target);
  const loading = pool
    ? driveWorkers(pool, ro, now, stop.signal)
    : driveLoad(ro, sender as RunSender, now, progress, stop.signal, opts.durationMs);
  const load = await loading.catch(async (err: unknown) => {
    await samplers.stop();
    progress.finish();
    writer?.abort('failed', { notes: [`runner error: ${(err as Error)?.message ?? String(err)}`] });
    await client.close();
    stop.detach();
    throw err;
  });
  const status = stop.signal.aborted ? 'interrupted' : 'complete';
  const seen = await observed(load, sender.records, target, origin, auth, { simWatch, users }, status === 'interrupted');
  const sampled = await samplers.stop();
  progress.finish();
  stop.detach();
  await client.close();
  const summary = runSummary(sender.records, opts.slo, seen);
  const counts = {
    peakInFlight: sender.peakInFlight,
    connections,
    plannedRequests: ro.n,
    warmup: ro.warmup,
    sent: sender.sent,
    recorded: sender.records.length,
    preflight,
    cpuSplit: cpus.record(),
    ...(load.sessions ? { sessions: sessionsCounts(load.sessions) } : {}),
  };
  const patch = runPatch(manifest, counts, seen, status === 'interrupted');
  if (opts.durationMs !== undefined && load.deadlineMs !== undefined) {
    const issued = sender.records.filter((r) => !r.warmup).length;
    const stopRule = durationStopRule(opts.durationMs, load.deadlineMs, ro.n, issued, status === 'interrupted');
    patch.load = { ...manifest.load, options: { ...manifest.load.options, stopRule } };
  }
  const final = saveOutcome(writer, manifest, summary, patch, status);
  if (sender.callbackError !== undefined) throw sender.callbackError;
  const records = sender.records;
  return {
    ...(writer ? { dir: writer.dir } : {}),
    manifest: final,
    records,
    summary,
    peakInFlight: sender.peakInFlight,
    ...sampled,
  };
}

/**
 * One connection per request that can be in flight, so undici never queues a request unseen.
 * Open loops without a cap share at most `OPEN_LOOP_CONNECTIONS`: one socket per late request
 * would turn any stall into a connection storm (bench/README.md §2); a wait for a socket shows in queueMs.
 */
function connectionsFor(shape: LoadShape, n: number): number {
  if (shape.kind === 'closed') return shape.concurrency;
  if (shape.kind === 'open') return shape.maxConcurrency ?? Math.min(n, OPEN_LOOP_CONNECTIONS);
  if (shape.kind === 'sessions') return shape.maxConcurrency;
  return n;
}

/** The measured load sent by worker threads (./worker-pool), in `driveLoad`'s terms. */
async function driveWorkers(
  pool: WorkerLoad,
  ro: ResolvedRunOptions,
  now: () => number,
  signal: AbortSignal,
): Promise<Awaited<ReturnType<typeof driveLoad>> & { workerOf: (index: number) => number | undefined }> {
  const l = await pool.drive(ro, now, signal);
  return { latenessMs: l.latenessMs, health: { stop: () => l.health }, workerOf: (i) => pool.workerOf(i) };
}

/** What each worker thread makes its client with (./worker-protocol `WorkerInit`), and warms it with. */
function workerClientOf(r: Resolved, opts: RunLoadOptions) {
  const { target, stamp, auth, cpus, ro } = r;
  return {
    rootUrl: target.rootUrl,
    model: target.model,
    stamp,
    ...auth,
    ...timeoutsOf(opts),
    loadCpus: cpus.cpus,
    warmSpec: ro.specOf(0),
  };
}

/** The client's timeouts given in the options. */
function timeoutsOf(opts: RunLoadOptions): { timeoutMs?: number; idleTimeoutMs?: number } {
  return {
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.idleTimeoutMs !== undefined ? { idleTimeoutMs: opts.idleTimeoutMs } : {}),
  };
}

/** The manifest's account of a sessions run: conversations finished or stopped (with the failed turn), turns never sent. */
function sessionsCounts(r: SessionsReport): Record<string, unknown> {
  const { latenessMs: _late, ...counts } = r;
  return counts;
}

/**
 * Warm-up one by one, then the measured load on the shape's schedule. Client health is judged
 * over the measured load only: warm-up includes one-off start-up work. On an error the health
 * watch is stopped before the error propagates.
 */
async function driveLoad(
  ro: ResolvedRunOptions,
  sender: RunSender,
  now: () => number,
  progress: ProgressTracker,
  signal: AbortSignal,
  durationMs?: number,
): Promise<{ health: ClientHealthWatch; latenessMs: number[]; deadlineMs?: number; sessions?: SessionsReport }> {
  const { shape, n, warmup, specOf } = ro;
  let health: ClientHealthWatch | undefined;
  try {
    progress.setPhase(warmup > 0 ? 'warmup' : 'load');
    for (let k = 0; k < warmup && !signal.aborted; k++) await sender.fire(k, specOf(k % n), now(), true);
    progress.setPhase('load');
    health = startClientHealth();
    if (shape.kind === 'sessions') {
      if (durationMs !== undefined)
        throw new TypeError('durationMs does not apply to a sessions shape: give fewer conversations');
      const fire: SessionFire = (i, spec, due, turn) => sender.fire(warmup + i, spec, due, false, turn);
      const sessions = await runSessions(shape, fire, { now, signal });
      return { health, latenessMs: sessions.latenessMs, sessions };
    }
    const deadlineMs = durationMs === undefined ? undefined : now() + durationMs;
    const fire = async (i: number, due: number) => void (await sender.fire(warmup + i, specOf(i), due, false));
    const { latenessMs } = await dispatchLoad(shape, n, fire, {
      now,
      signal,
      ...(deadlineMs !== undefined ? { deadlineMs } : {}),
    });
    return { health, latenessMs, ...(deadlineMs !== undefined ? { deadlineMs } : {}) };
  } catch (err) {
    health?.stop();
    throw err;
  }
}
