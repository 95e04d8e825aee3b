/**
 * The main thread's side of a run with `workers > 1`: start the worker threads (`./worker-main`), hand
 * each its share (`./worker-split`), keep every record they post (the main thread alone owns the run
 * folder: `requests.jsonl` is appended as records arrive), stop them on abort and wait for their
 * in-flight records, and combine their health (`./worker-health`).
 *
 * Loader: the worker runs the bundled `dist/runner/worker-main.js` while dist/ is fresh (src/proc/dist.ts),
 * else its TypeScript source through tsx's ESM API (Node 20 does not apply `--import tsx` hooks to a
 * worker's own entry, so a one-line bootstrap registers tsx in the worker, then imports the source).
 */

import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { epochMinusRealtimeMs } from '../calibrate/epoch-clock';
import { packageRoot } from '../paths';
import { tsxLoaderUrl } from '../proc/child';
import { builtEntry } from '../proc/dist';
import type { RunWriter } from '../run/store';
import { arrivalOffsets } from '../schedule/arrivals';
import type { RequestRecord } from '../types';
import { startClientHealth, type ClientHealth } from './health';
import type { ProgressTracker } from './progress';
import { createRecordKeeper } from './runner-sender';
import type { ResolvedRunOptions } from './validate';
import { combineWorkerHealth, type WorkersHealth } from './worker-health';
import type { FromWorker, ToWorker, WorkerInit, WorkerPlan } from './worker-protocol';
import { roundRobin, splitEvenly } from './worker-split';

/** Run-clock ms between the moment the plan is posted and a schedule's start, so every worker has it. */
const START_LEAD_MS = 50;

/** What the main thread needs to run workers. */
export interface WorkerLoadOptions {
  workers: number;
  /** Everything a worker's client needs but its share of connections. */
  client: Omit<WorkerInit, 'worker' | 'connections' | 'originRealtimeMs' | 'counter'>;
  /** Connections of the whole run, split among workers. */
  connections: number;
  /** The run's origin, `performance.now()` ms of this thread. */
  origin: number;
  progress: ProgressTracker;
  writer?: RunWriter;
  onRecord?: (r: RequestRecord) => void;
}

/** The load of a run driven by worker threads. */
export interface WorkerLoad {
  /** Every record in arrival order (a `RunSender`'s read side). */
  readonly records: RequestRecord[];
  readonly peakInFlight: number;
  readonly sent: number;
  readonly callbackError: unknown;
  /** Start the workers, warm up (one by one, request k on worker k mod N), run the measured load. */
  drive(ro: ResolvedRunOptions, now: () => number, signal: AbortSignal): Promise<{ health: WorkersHealth; latenessMs: number[] }>;
}

/** Start one worker thread on `init`, from dist/ when fresh, else from its source through tsx. */
export function startWorker(init: WorkerInit): Worker {
  const root = packageRoot();
  const entry = join(root, 'src', 'runner', 'worker-main.ts');
  const built = builtEntry(entry, root);
  if (built) return new Worker(built, { workerData: init });
  const api = pathToFileURL(join(dirname(new URL(tsxLoaderUrl(root)).pathname), 'esm', 'api', 'index.mjs')).href;
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(pathToFileURL(entry).href)}); });`;
  return new Worker(boot, { eval: true, workerData: init });
}

/** The main thread's side of a run with worker threads (see the module comment). */
export function createWorkerLoad(o: WorkerLoadOptions): WorkerLoad {
  const keeper = createRecordKeeper(o);
  let inFlight = 0;
  let peakInFlight = 0;
  let sent = 0;
  const onMessage = (m: FromWorker, waitWarm: Map<number, () => void>) => {
    if (m.t === 'sent') {
      sent++;
      inFlight++;
      peakInFlight = Math.max(peakInFlight, inFlight);
      o.progress.setInFlight(inFlight);
    } else if (m.t === 'record') {
      inFlight--;
      o.progress.setInFlight(inFlight);
      keeper.keep(m.record);
      if (m.record.warmup) waitWarm.get(m.record.index)?.();
    } else if (m.t === 'warmup-skipped') for (const f of waitWarm.values()) f();
  };

  async function drive(ro: ResolvedRunOptions, now: () => number, signal: AbortSignal) {
    const counter = new SharedArrayBuffer(4);
    const originRealtimeMs = performance.timeOrigin + o.origin - epochMinusRealtimeMs();
    const conns = splitEvenly(o.connections, o.workers);
    const waitWarm = new Map<number, () => void>();
    const done: Array<{ health: ClientHealth; latenessMs: number[] } | undefined> = [];
    let failure: Error | undefined;
    let settle: () => void = () => {};
    const threads = Array.from({ length: o.workers }, (_, w) =>
      startWorker({ ...o.client, worker: w, connections: Math.max(1, conns[w]), originRealtimeMs, counter }),
    );
    const ready = new Set<number>();
    let whenReady: () => void = () => {};
    const post = (w: number, m: ToWorker) => threads[w].postMessage(m);
    const stopAll = () => threads.forEach((_, w) => post(w, { t: 'stop' }));
    const fail = (w: number, why: string) => {
      failure ??= new Error(`worker ${w} failed: ${why}`);
      stopAll();
      settle();
      whenReady();
      for (const f of waitWarm.values()) f();
    };
    threads.forEach((t, w) => {
      t.on('message', (m: FromWorker) => {
        if (m.t === 'ready') {
          ready.add(w);
          if (ready.size === o.workers) whenReady();
        } else if (m.t === 'done') {
          done[w] = { health: m.health, latenessMs: m.latenessMs };
          if (done.filter(Boolean).length === o.workers) settle();
        } else if (m.t === 'error') fail(w, m.message);
        else onMessage(m, waitWarm);
      });
      t.on('error', (err) => fail(w, err.stack ?? String(err)));
      t.on('exit', (code) => done[w] === undefined && fail(w, `exited with code ${code} before it was done`));
    });
    const onAbort = () => stopAll();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await new Promise<void>((r) => (whenReady = r));
      if (failure) throw failure;
      o.progress.setPhase(ro.warmup > 0 ? 'warmup' : 'load');
      for (let k = 0; k < ro.warmup && !signal.aborted && !failure; k++) {
        const got = new Promise<void>((r) => waitWarm.set(k, r));
        post(k % o.workers, { t: 'warmup', index: k, spec: ro.specOf(k % ro.n) });
        await got;
        waitWarm.delete(k);
      }
      if (failure) throw failure;
      o.progress.setPhase('load');
      const mainHealth = startClientHealth({ delayP99Ms: Number.POSITIVE_INFINITY, cpuPercent: Number.POSITIVE_INFINITY });
      const finished = new Promise<void>((r) => (settle = r));
      const plans = planWorkers(ro, o.workers, now() + START_LEAD_MS);
      plans.forEach((plan, w) => post(w, { t: 'go', plan }));
      if (signal.aborted) stopAll();
      await finished;
      if (failure) throw failure;
      const per = done as Array<{ health: ClientHealth; latenessMs: number[] }>;
      const health = combineWorkerHealth(
        per.map((d) => d.health),
        mainHealth.stop(),
      );
      return { health, latenessMs: per.flatMap((d) => d.latenessMs) };
    } finally {
      signal.removeEventListener('abort', onAbort);
      for (const t of threads) t.removeAllListeners('exit');
      await Promise.all(threads.map((t) => t.terminate()));
    }
  }

  return {
    drive,
    records: keeper.records,
    get peakInFlight() {
      return peakInFlight;
    },
    get sent() {
      return sent;
    },
    get callbackError() {
      return keeper.callbackError;
    },
  };
}

/** Each worker's share of the measured load (see ./worker-split); `startMs` = run-clock start of a schedule. */
export function planWorkers(ro: ResolvedRunOptions, workers: number, startMs: number): WorkerPlan[] {
  const { shape, n, warmup } = ro;
  const offsets = arrivalOffsets(shape, n);
  if (offsets === null) {
    const specs = Array.from({ length: n }, (_, i) => ro.specOf(i));
    const slots = splitEvenly((shape as { concurrency: number }).concurrency, workers);
    return slots.map((s) => ({ kind: 'closed', slots: s, n, warmup, specs }));
  }
  const caps = shape.kind === 'open' && shape.maxConcurrency !== undefined ? splitEvenly(shape.maxConcurrency, workers) : undefined;
  return Array.from({ length: workers }, (_, w) => {
    const items = roundRobin(n, workers, w)
      .map((i) => ({ i, offsetMs: offsets[i], spec: ro.specOf(i) }))
      .sort((a, b) => a.offsetMs - b.offsetMs || a.i - b.i);
    return { kind: 'scheduled', startMs, warmup, items, ...(caps ? { slots: caps[w] } : {}) };
  });
}
