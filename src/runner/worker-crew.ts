/**
 * The running worker threads of one run (for `./worker-pool`): start them, route their messages, and
 * handle a worker that fails. A failed worker stops the others; `finished` then waits for their
 * stopped requests' records before it rejects, so only the dead worker's own timings are lost. The threads start
 * without V8's memory reducer (../proc/memory-reducer), held off from their start to `close()`.
 *
 * Loader: the worker runs the bundled `dist/runner/worker-main.js` while dist/ is fresh (src/proc/dist.ts),
 * else its TypeScript source through tsx's ESM API (Node 20 does not apply `--import tsx` hooks to a
 * worker's own entry, so a one-line bootstrap registers tsx in the worker, then imports the source).
 */

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../paths';
import { builtEntry, tsxImportExpr } from '../proc/dist';
import { holdMemoryReducerOff } from '../proc/memory-reducer';
import type { WorkerReport } from './worker-health';
import type { FromWorker, ToWorker, WorkerInit } from './worker-protocol';
import { splitEvenly } from './worker-split';
import { originMonoMs } from './thread-clock';

/** What the threads are started with. */
export interface CrewOptions {
  workers: number;
  /** Everything a worker's client needs but its share of connections. */
  client: Omit<WorkerInit, 'worker' | 'connections' | 'originMonoMs' | 'counter' | 'idPrefix'>;
  /** Connections of the whole run, split among workers. */
  connections: number;
  /** The run's origin, `performance.now()` ms of this thread. */
  origin: number;
}

/** Start one worker thread on `init`, from dist/ when fresh, else from its source through tsx. */
export function startWorker(init: WorkerInit): Worker {
  const root = packageRoot();
  const entry = join(root, 'src', 'runner', 'worker-main.ts');
  const built = builtEntry(entry, root);
  if (built) return new Worker(built, { workerData: init });
  return new Worker(`${tsxImportExpr(entry, root)};`, { eval: true, workerData: init });
}

/** One worker's end of its measured load. */
export type Done = { health: WorkerReport; latenessMs: number[] };

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
export interface Crew {
  post(w: number, m: ToWorker): void;
  stopAll(): void;
  ready: Promise<void>;
  /**
   * Each worker's `done`, by worker number, once every worker has sent it. When a worker fails, the
   * others are stopped and their in-flight records kept: this rejects once each live worker is done
   * (or after {@link FAIL_GRACE_MS}).
   */
  finished: Promise<Done[]>;
  failure(): Error | undefined;
  /** Terminate every thread. */
  close(): Promise<void>;
}

/** How long the other workers get to post their stopped requests' records after one worker failed, ms. */
const FAIL_GRACE_MS = 3000;

/**
 * Start the threads; `onData` gets `sent` and `record` messages with the worker's number, and `onFail`
 * runs once for each worker that fails (an error, or an exit before `done`).
 */
export function startCrew(
  o: CrewOptions,
  onData: (m: FromWorker, w: number) => void,
  onFail: (w: number, why: string) => void,
): Crew {
  // The threads get no V8 memory reducer, whose collections would pause them mid-run (src/proc/memory-reducer.ts).
  const release = holdMemoryReducerOff();
  let threads: Worker[];
  try {
    threads = startThreads(o);
  } catch (err) {
    release();
    throw err;
  }
  const done: Array<Done | undefined> = [];
  const dead = new Set<number>();
  const ready = new Set<number>();
  let failure: Error | undefined;
  let grace: ReturnType<typeof setTimeout> | undefined;
  const readyD = deferred<void>();
  const finishedD = deferred<Done[]>();
  const post = (w: number, m: ToWorker) => dead.has(w) || threads[w].postMessage(m);
  const stopAll = () => threads.forEach((_, w) => post(w, { t: 'stop' }));
  const settle = () => {
    if (threads.some((_, w) => done[w] === undefined && !dead.has(w))) return;
    clearTimeout(grace);
    if (failure) finishedD.reject(failure);
    else finishedD.resolve(done as Done[]);
  };
  const fail = (w: number, why: string) => {
    if (dead.has(w) || done[w] !== undefined) return;
    dead.add(w);
    void threads[w].terminate(); // a worker that reported an error may be alive: nothing more from it
    failure ??= new Error(`worker ${w} failed: ${why}`);
    onFail(w, why);
    stopAll();
    readyD.reject(failure);
    grace ??= setTimeout(() => finishedD.reject(failure as Error), FAIL_GRACE_MS);
    settle();
  };
  threads.forEach((t, w) => {
    t.on('message', (m: FromWorker) => {
      if (m.t === 'ready' && ready.add(w).size === o.workers) readyD.resolve();
      else if (m.t === 'done') {
        const threadCpu = m.threadCpuPercent !== undefined ? { threadCpuPercentOfOneCore: m.threadCpuPercent } : {};
        const cpus = m.cpus !== undefined ? { cpus: m.cpus } : {};
        done[w] = { health: { ...m.health, ...threadCpu, ...cpus }, latenessMs: m.latenessMs };
        settle();
      } else if (m.t === 'error') fail(w, m.message);
      else onData(m, w);
    });
    t.on('error', (err) => fail(w, err.stack ?? String(err)));
    t.on('exit', (code) => fail(w, `exited with code ${code} before it was done`));
  });
  const close = async () => {
    clearTimeout(grace);
    for (const t of threads) t.removeAllListeners('exit');
    await Promise.all(threads.map((t) => t.terminate()));
    release();
  };
  return { post, stopAll, ready: readyD.promise, finished: finishedD.promise, failure: () => failure, close };
}

/** One thread per worker, each with its share of the connections, one shared counter and id prefix. */
function startThreads(o: CrewOptions): Worker[] {
  const counter = new SharedArrayBuffer(4);
  const originMono = originMonoMs(o.origin);
  const conns = splitEvenly(o.connections, o.workers);
  const idPrefix = `ll-${randomBytes(4).toString('hex')}`;
  return Array.from({ length: o.workers }, (_, w) =>
    startWorker({
      ...o.client,
      worker: w,
      connections: Math.max(1, conns[w]),
      originMonoMs: originMono,
      counter,
      idPrefix,
    }),
  );
}
