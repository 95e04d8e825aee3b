/**
 * The record of a finished `StreamTimer` (split from ./timing.ts): the measured stamps and
 * counts plus the request's identity, derived metrics included (./metrics.ts).
 */
import type { Api, RequestError, RequestRecord } from '../types';
import { deriveMetrics } from './metrics';

/** What a record is built from: the fields of a `StreamTimer` (./timing.ts) it reads (declared here, so no import circle). */
export interface TimerState {
  readonly api: Api;
  readonly done: boolean;
  readonly error: RequestError | undefined;
  readonly startMs: number;
  readonly status: number | undefined;
  readonly headersMs: number | undefined;
  readonly firstChunkMs: number | undefined;
  readonly firstTokenMs: number | undefined;
  readonly chunkMs: number[];
  readonly chunkTokens: number[];
  readonly promptTokens: number | undefined;
  readonly outputTokens: number | undefined;
  readonly cachedTokens: number | undefined;
  readonly finishReason: string | undefined;
}

/** Per-request identity fields that the timer does not measure. */
export interface RecordMeta extends Pick<RequestRecord, 'session' | 'turn'> {
  index: number;
  requestId: string;
  /** Default false. */
  warmup?: boolean;
  tag?: string;
  /** When the load shape wanted the request sent, ms on the run clock. */
  intendedStartMs: number;
}

/** `t`'s record for `meta`; `endMs` when the timer has none yet. `ok` means `[DONE]` and no error. Unknown fields are left out. */
export function timerRecord(t: TimerState, meta: RecordMeta, endMs: number): RequestRecord {
  const r: RequestRecord = {
    index: meta.index,
    requestId: meta.requestId,
    warmup: meta.warmup ?? false,
    ok: t.done && t.error === undefined,
    api: t.api,
    intendedStartMs: meta.intendedStartMs,
    startMs: t.startMs,
    chunkMs: t.chunkMs,
    chunkTokens: t.chunkTokens,
    endMs,
    itlMs: [],
    queueMs: 0,
  };
  // Optional fields only when known: no `undefined` keys in JSONL or in toEqual.
  if (meta.tag !== undefined) r.tag = meta.tag;
  if (meta.session !== undefined) Object.assign(r, { session: meta.session, turn: meta.turn });
  if (t.status !== undefined) r.status = t.status;
  if (t.headersMs !== undefined) r.headersMs = t.headersMs;
  if (t.firstChunkMs !== undefined) r.firstChunkMs = t.firstChunkMs;
  if (t.firstTokenMs !== undefined) r.firstTokenMs = t.firstTokenMs;
  if (t.promptTokens !== undefined) r.promptTokens = t.promptTokens;
  const out = t.outputTokens;
  if (out !== undefined) r.outputTokens = out;
  if (t.cachedTokens !== undefined) r.cachedTokens = t.cachedTokens;
  if (t.finishReason !== undefined) r.finishReason = t.finishReason;
  if (t.error !== undefined) r.error = t.error;
  return Object.assign(r, deriveMetrics(r));
}
