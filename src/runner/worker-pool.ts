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

import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../paths';
import { tsxLoaderUrl } from '../proc/child';
import { builtEntry } from '../proc/dist';
import type { RunWriter } from '../run/store';
import { arrivalOffsets } from '../schedule/arrivals';
import type { RequestRecord } from '../types';
import { startClientHealth } from './health';
import type { ProgressTracker } from './progress';
import { createRecordKeeper } from './runner-sender';
import type { ResolvedRunOptions } from './validate';
import { originRealtimeMs } from './thread-clock';
import { combineWorkerHealth, type WorkerReport, type WorkersHealth } from './worker-health';
import type { FromWorker, ToWorker, WorkerInit, WorkerPlan } from './worker-protocol';
import { roundRobin, splitEvenly } from './worker-split';

/** Run-clock ms between the moment the plan is posted and a schedule's start, so every worker has it. */
const START_LEAD_MS = 50;

/** What the main thread needs to run workers. */
export interface WorkerLoadOptions {
  workers: number;
  /** Everything a worker's client needs but its share of connections. */
  client: Omit<WorkerInit, 'worker' | 'connections' | 'originRealtimeMs' | 'counter' | 'idPrefix'>;
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
  const count = { inFlight: 0, peak: 0, sent: 0 };
  const warmWaits = new Map<number, () => void>();
  const onData = (m: FromWorker) => {
    if (m.t === 'sent') {
      count.sent++;
      count.inFlight++;
      count.peak = Math.max(count.peak, count.inFlight);
      o.progress.setInFlight(count.inFlight);
    } else if (m.t === 'record') {
      count.inFlight--;
      o.progress.setInFlight(count.inFlight);
      keeper.keep(m.record);
      if (m.record.warmup) warmWaits.get(m.record.index)?.();
    } else if (m.t === 'warmup-skipped') for (const f of warmWaits.values()) f();
  };

  async function drive(ro: ResolvedRunOptions, now: () => number, signal: AbortSignal) {
    const crew = startCrew(o, onData, () => warmWaits.forEach((f) => f()));
    const onAbort = () => crew.stopAll();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await crew.ready;
      o.progress.setPhase(ro.warmup > 0 ? 'warmup' : 'load');
      for (let k = 0; k < ro.warmup && !signal.aborted && !crew.failure(); k++) {
        const got = new Promise<void>((r) => warmWaits.set(k, r));
        crew.post(k % o.workers, { t: 'warmup', index: k, spec: ro.specOf(k % ro.n) });
        await got;
        warmWaits.delete(k);
      }
      o.progress.setPhase('load');
      const whole = startClientHealth({ delayP99Ms: Number.POSITIVE_INFINITY, cpuPercent: Number.POSITIVE_INFINITY });
      planWorkers(ro, o.workers, now() + START_LEAD_MS).forEach((plan, w) => crew.post(w, { t: 'go', plan }));
      if (signal.aborted) crew.stopAll();
      const done = await crew.finished;
      const health = combineWorkerHealth(
        done.map((d) => d.health),
        whole.stop(),
      );
      return { health, latenessMs: done.flatMap((d) => d.latenessMs) };
    } finally {
      signal.removeEventListener('abort', onAbort);
      await crew.close();
    }
  }

  return {
    drive,
    records: keeper.records,
    get peakInFlight() {
      return count.peak;
    },
    get sent() {
      return count.sent;
    },
    get callbackError() {
      return keeper.callbackError;
    },
  };
}

type Done = { health: WorkerReport; latenessMs: number[] };

/** A promise with its resolve and reject (its rejection is handled: the caller awaits it when it matters). */
function deferred<T>() {
  let resolve: (v: T) => void = () => {};
  let reject: (e: Error) => void = () => {};
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** The running worker threads of one run. `ready` and `finished` reject when any worker fails. */
interface Crew {
  post(w: number, m: ToWorker): void;
  stopAll(): void;
  ready: Promise<void>;
  /** Each worker's `done`, by worker number, once every worker has sent it. */
  finished: Promise<Done[]>;
  failure(): Error | undefined;
  /** Terminate every thread. */
  close(): Promise<void>;
}

/** Start the threads; `onData` gets `sent` and `record` messages, `onFail` runs once a worker failed. */
function startCrew(o: WorkerLoadOptions, onData: (m: FromWorker) => void, onFail: () => void): Crew {
  const counter = new SharedArrayBuffer(4);
  const originRealtime = originRealtimeMs(o.origin);
  const conns = splitEvenly(o.connections, o.workers);
  const idPrefix = `ll-${randomBytes(4).toString('hex')}`;
  const threads = Array.from({ length: o.workers }, (_, w) =>
    startWorker({
      ...o.client,
      worker: w,
      connections: Math.max(1, conns[w]),
      originRealtimeMs: originRealtime,
      counter,
      idPrefix,
    }),
  );
  const done: Array<Done | undefined> = [];
  const ready = new Set<number>();
  let failure: Error | undefined;
  const readyD = deferred<void>();
  const finishedD = deferred<Done[]>();
  const post = (w: number, m: ToWorker) => threads[w].postMessage(m);
  const stopAll = () => threads.forEach((_, w) => post(w, { t: 'stop' }));
  const fail = (w: number, why: string) => {
    if (failure) return;
    failure = new Error(`worker ${w} failed: ${why}`);
    stopAll();
    readyD.reject(failure);
    finishedD.reject(failure);
    onFail();
  };
  threads.forEach((t, w) => {
    t.on('message', (m: FromWorker) => {
      if (m.t === 'ready' && ready.add(w).size === o.workers) readyD.resolve();
      else if (m.t === 'done') {
        const threadCpu = m.threadCpuPercent !== undefined ? { threadCpuPercentOfOneCore: m.threadCpuPercent } : {};
        done[w] = { health: { ...m.health, ...threadCpu }, latenessMs: m.latenessMs };
        if (done.filter(Boolean).length === o.workers) finishedD.resolve(done as Done[]);
      } else if (m.t === 'error') fail(w, m.message);
      else onData(m);
    });
    t.on('error', (err) => fail(w, err.stack ?? String(err)));
    t.on('exit', (code) => done[w] === undefined && fail(w, `exited with code ${code} before it was done`));
  });
  const close = async () => {
    for (const t of threads) t.removeAllListeners('exit');
    await Promise.all(threads.map((t) => t.terminate()));
  };
  return { post, stopAll, ready: readyD.promise, finished: finishedD.promise, failure: () => failure, close };
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
  const caps =
    shape.kind === 'open' && shape.maxConcurrency !== undefined ? splitEvenly(shape.maxConcurrency, workers) : undefined;
  return Array.from({ length: workers }, (_, w) => {
    const items = roundRobin(n, workers, w)
      .map((i) => ({ i, offsetMs: offsets[i], spec: ro.specOf(i) }))
      .sort((a, b) => a.offsetMs - b.offsetMs || a.i - b.i);
    return { kind: 'scheduled', startMs, warmup, items, ...(caps ? { slots: caps[w] } : {}) };
  });
}
