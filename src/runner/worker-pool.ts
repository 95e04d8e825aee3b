/**
 * The main thread's side of a run with `workers > 1`: start the worker threads (`./worker-crew`), hand
 * each its share (`./worker-split`), keep every record they post (the main thread alone owns the run
 * folder: `requests.jsonl` is appended as records arrive), stop them on abort and wait for their
 * in-flight records, and combine their health (`./worker-health`). A request in flight on a worker
 * that dies still gets a record here (failed, `aborted`), from the worker's `sent` message.
 */

import { deriveMetrics } from '../client/metrics';
import type { RunWriter } from '../run/store';
import { arrivalOffsets } from '../schedule/arrivals';
import type { RequestRecord } from '../types';
import { startClientHealth } from './health';
import type { ProgressTracker } from './progress';
import { createRecordKeeper } from './runner-sender';
import type { ResolvedRunOptions } from './validate';
import { type CrewOptions, startCrew } from './worker-crew';
import { combineWorkerHealth, type WorkersHealth } from './worker-health';
import type { FromWorker, WorkerPlan } from './worker-protocol';
import { roundRobin, splitEvenly } from './worker-split';

/** Run-clock ms between the moment the plan is posted and a schedule's start, so every worker has it. */
const START_LEAD_MS = 50;

/** What the main thread needs to run workers. */
export interface WorkerLoadOptions extends CrewOptions {
  progress: ProgressTracker;
  writer?: RunWriter;
  onRecord?: (r: RequestRecord) => void;
  /** Called as the measured load starts; the function it returns is called when the load has ended (./load-cpus). */
  yieldHere?: () => () => void;
}

/** The load of a run driven by worker threads. */
export interface WorkerLoad {
  /** Every record in arrival order (a `RunSender`'s read side). */
  readonly records: RequestRecord[];
  readonly peakInFlight: number;
  readonly sent: number;
  readonly callbackError: unknown;
  /** The worker that sent request `index` (once it was sent). */
  workerOf(index: number): number | undefined;
  /** Start the workers, warm up (one by one, request k on worker k mod N), run the measured load. */
  drive(ro: ResolvedRunOptions, now: () => number, signal: AbortSignal): Promise<{ health: WorkersHealth; latenessMs: number[] }>;
}

/** The main thread's side of a run with worker threads (see the module comment). */
export function createWorkerLoad(o: WorkerLoadOptions): WorkerLoad {
  const keeper = createRecordKeeper(o);
  const count = { peak: 0, sent: 0 };
  const warmWaits = new Map<number, () => void>();
  const flying = new Map<number, SentMessage>(); // the requests in flight: index → its worker's `sent`, until its record
  const senders = new Map<number, number>(); // index → worker, kept
  const onData = (m: FromWorker, worker: number) => {
    if (m.t === 'sent') {
      flying.set(m.index, { ...m, worker });
      senders.set(m.index, worker);
      count.sent++;
      count.peak = Math.max(count.peak, flying.size);
      o.progress.setInFlight(flying.size);
    } else if (m.t === 'record') keepRecord(m.record);
    else if (m.t === 'warmup-skipped') for (const f of warmWaits.values()) f();
  };
  const keepRecord = (record: RequestRecord) => {
    if (!flying.delete(record.index)) return; // already written as lost: its worker had failed
    o.progress.setInFlight(flying.size);
    keeper.keep(record);
    if (record.warmup) warmWaits.get(record.index)?.();
  };

  async function drive(ro: ResolvedRunOptions, now: () => number, signal: AbortSignal) {
    // A dead worker's requests in flight still get records (its own timings died with it).
    const onFail = (w: number, why: string) => {
      for (const m of [...flying.values()].filter((x) => x.worker === w)) keepRecord(lostRecord(m, why, now()));
      warmWaits.forEach((f) => f());
    };
    const crew = startCrew(o, onData, onFail);
    const onAbort = () => crew.stopAll();
    signal.addEventListener('abort', onAbort, { once: true });
    let whole: ReturnType<typeof startClientHealth> | undefined;
    let unyield: (() => void) | undefined;
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
      whole = startClientHealth({ delayP99Ms: Number.POSITIVE_INFINITY, cpuPercent: Number.POSITIVE_INFINITY });
      planWorkers(ro, o.workers, now() + START_LEAD_MS).forEach((plan, w) => crew.post(w, { t: 'go', plan }));
      unyield = o.yieldHere?.();
      if (signal.aborted) crew.stopAll();
      const done = await crew.finished;
      const health = combineWorkerHealth(
        done.map((d) => d.health),
        whole.stop(),
      );
      return { health, latenessMs: done.flatMap((d) => d.latenessMs) };
    } finally {
      unyield?.();
      whole?.stop(); // after a failed worker too: its ticker, GC observer and schedstat file
      signal.removeEventListener('abort', onAbort);
      await crew.close();
    }
  }

  return {
    drive,
    workerOf: (index) => senders.get(index),
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

/** A dead worker's `sent` request as a record: failed (`aborted`), with no timings past the send. */
function lostRecord(m: SentMessage, why: string, endMs: number): RequestRecord {
  const r: RequestRecord = {
    index: m.index,
    requestId: m.requestId,
    warmup: m.warmup,
    ok: false,
    api: m.api,
    ...(m.tag !== undefined ? { tag: m.tag } : {}),
    intendedStartMs: m.intendedStartMs,
    startMs: m.sentMs,
    chunkMs: [],
    chunkTokens: [],
    endMs,
    error: {
      code: 'aborted',
      message: `worker ${m.worker} failed with this request in flight; its timings were lost: ${firstLine(why)}`,
    },
    itlMs: [],
    queueMs: 0,
  };
  return Object.assign(r, deriveMetrics(r));
}

const firstLine = (s: string) => s.split('\n', 1)[0];

type SentMessage = Extract<FromWorker, { t: 'sent' }> & { worker: number };

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
