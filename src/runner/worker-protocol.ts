/**
 * The messages between `runLoad` (main thread, owner of the run folder) and its worker threads
 * (`./worker-main`). Every message is structured-cloned; records travel whole.
 */

import type { ChunkStamp } from '../client/chunk-stamp';
import type { Api, RequestRecord, RequestSpec } from '../types';
import type { ClientHealth } from './health';

/** What a worker is started with (`workerData`). */
export interface WorkerInit {
  /** 0-based worker number. */
  worker: number;
  rootUrl: string;
  model: string;
  apiKey?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  idleTimeoutMs?: number;
  /** How the worker's client stamps token chunks (src/client/chunk-stamp.ts). */
  stamp?: ChunkStamp;
  /** Request ids are `<idPrefix>-<index>`, as `./runner-sender` makes them (`ll-<8 random hex>`, one per run). */
  idPrefix: string;
  /** Connections of this worker's client. */
  connections: number;
  /** The run's origin on CLOCK_MONOTONIC, ms (./thread-clock `originMonoMs`); the worker's run clock counts from it. */
  originMonoMs: number;
  /** The CPUs this load thread keeps to, off a local simulator's engine CPU (src/proc/cpu-split.ts); absent: any. */
  loadCpus?: number[];
  /** The run's first measured spec: the worker warms its client's code with it before `ready` (src/client/warm-up.ts). */
  warmSpec: RequestSpec;
  /** Shared Int32Array[1]: the next measured index of a closed loop. */
  counter: SharedArrayBuffer;
}

/** The measured load of one worker. */
export type WorkerPlan =
  | { kind: 'closed'; slots: number; n: number; warmup: number; specs: RequestSpec[] }
  | {
      kind: 'scheduled';
      /** Run-clock ms the schedule starts at (the same for every worker). */
      startMs: number;
      /** Slots of an open loop's `maxConcurrency` share; undefined = no cap. */
      slots?: number;
      warmup: number;
      /** Measured index, its offset from `startMs` (ms) and its spec, in time order. */
      items: Array<{ i: number; offsetMs: number; spec: RequestSpec }>;
    };

/** Main → worker. */
export type ToWorker = { t: 'warmup'; index: number; spec: RequestSpec } | { t: 'go'; plan: WorkerPlan } | { t: 'stop' };

/** Worker → main. */
export type FromWorker =
  | { t: 'ready' }
  | {
      /** A request is about to be sent: the main thread writes its record itself if this worker dies first. */
      t: 'sent';
      index: number;
      requestId: string;
      warmup: boolean;
      api: Api;
      tag?: string;
      /** Run-clock ms, as the record's. */
      intendedStartMs: number;
      /** Run-clock ms at this message: the record's `startMs` is a little later. */
      sentMs: number;
    }
  | { t: 'record'; record: RequestRecord }
  | { t: 'warmup-skipped' }
  | {
      t: 'done';
      health: ClientHealth;
      latenessMs: number[];
      /** This thread's own CPU over its measured load, % of one core (src/proc/cpu-times.ts); absent where unreadable. */
      threadCpuPercent?: number;
      /** The CPUs this thread was allowed over its load (a `taskset` list, e.g. `0-2`), where readable. */
      cpus?: string;
    }
  | { t: 'error'; message: string };
