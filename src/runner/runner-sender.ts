/**
 * Sends one request of a run and keeps what it measured: the record is kept in memory, counted by
 * the progress line, queued for `requests.jsonl` (written in a batch at the end of this event-loop
 * turn) and passed to the caller's `onRecord` once its line is on disk. Tracks requests in flight, their peak, and how many were sent.
 */

import { randomBytes } from 'node:crypto';
import type { Client, SendContext } from '../client/client';
import type { RunWriter } from '../run/store';
import type { RequestRecord, RequestSpec } from '../types';
import type { ProgressTracker } from './progress';

/** What `createRunSender` needs: the client, the stop signal and where records go. */
export interface RunSenderOptions {
  client: Pick<Client, 'send'>;
  /** No new send after it fired; in-flight requests are cancelled by it. */
  signal: AbortSignal;
  progress: Pick<ProgressTracker, 'setInFlight' | 'record'>;
  writer?: RunWriter;
  onRecord?: (r: RequestRecord) => void;
}

/** A run's sender and what it counted so far. */
export interface RunSender {
  /**
   * Send request `index` (run-wide, warm-up first); resolves with its record once it is kept, or
   * undefined after the stop (nothing sent). `turn` marks a turn of a multi-turn run.
   */
  fire(
    index: number,
    spec: RequestSpec,
    intendedStartMs: number,
    isWarmup: boolean,
    turn?: Pick<SendContext, 'session' | 'turn' | 'onText'>,
  ): Promise<RequestRecord | undefined>;
  /** Every record in finishing order. */
  readonly records: RequestRecord[];
  /** Most requests in flight at once. */
  readonly peakInFlight: number;
  /** Requests handed to the client. */
  readonly sent: number;
  /** The first error an `onRecord` call threw, to rethrow once the run is saved. */
  readonly callbackError: unknown;
}

/** Where a run's records go: kept in memory, counted, queued for `requests.jsonl`, then told to `onRecord`. */
export interface RecordKeeper {
  keep(record: RequestRecord): void;
  /** Every record in finishing order. */
  readonly records: RequestRecord[];
  /** The first error an `onRecord` call threw. */
  readonly callbackError: unknown;
}

/** A record keeper (used by the sender, and by the main thread of a run with worker threads). */
export function createRecordKeeper(o: Pick<RunSenderOptions, 'progress' | 'writer' | 'onRecord'>): RecordKeeper {
  const records: RequestRecord[] = [];
  let callbackError: unknown;
  const tell = (record: RequestRecord) => {
    try {
      o.onRecord?.(record);
    } catch (err) {
      callbackError ??= err;
    }
  };
  const keep = (record: RequestRecord) => {
    records.push(record);
    o.progress.record(record.ok, record.ttftMs, record.warmup);
    // Batched (one write per event-loop turn, stringified then): a wave of records never stalls the loop.
    if (o.writer) o.writer.appendSoon(record, () => tell(record));
    else tell(record);
  };
  return {
    keep,
    records,
    get callbackError() {
      return callbackError;
    },
  };
}

/** A sender whose request ids are `ll-<8 random hex>-<index>`. */
export function createRunSender(o: RunSenderOptions): RunSender {
  const idPrefix = `ll-${randomBytes(4).toString('hex')}`;
  const keeper = createRecordKeeper(o);
  const { keep, records } = keeper;
  let inFlight = 0;
  let peakInFlight = 0;
  let sent = 0;

  const fire: RunSender['fire'] = async (index, spec, intendedStartMs, isWarmup, turn) => {
    if (o.signal.aborted) return undefined;
    inFlight++;
    sent++;
    peakInFlight = Math.max(peakInFlight, inFlight);
    o.progress.setInFlight(inFlight);
    let record: RequestRecord;
    try {
      const meta = { index, warmup: isWarmup, intendedStartMs, requestId: `${idPrefix}-${index}`, signal: o.signal, ...turn };
      record = await o.client.send(spec, meta);
    } finally {
      inFlight--;
      o.progress.setInFlight(inFlight);
    }
    keep(record);
    return record;
  };
  return {
    fire,
    records,
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
