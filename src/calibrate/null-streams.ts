/**
 * The null server's streams (see `./null-server.ts`): one SSE stream per request, written in
 * LOCKSTEP with every other stream on the same step gap (one ticker per gap, on absolute times,
 * like one engine step emitting a chunk for every running request), or flat out when the gap is 0.
 * Each token chunk carries its send time `"t"` (epoch ms, read just before the write); a finished
 * stream's send times are kept per request id for `GET /sent`.
 */
import type { ServerResponse } from 'node:http';
import { chunkJson, SSE_DONE, sseData, usageChunkJson, usageJson } from '../wire/chunks';

/** Epoch ms on the monotonic clock: `performance.timeOrigin + performance.now()`. */
export const epochNow = (): number => performance.timeOrigin + performance.now();

/** One open stream of the null server. */
export interface NullStream {
  res: ServerResponse;
  id: string;
  /** Token chunks to write (`max_tokens`). */
  tokens: number;
  /** Token chunks written so far. */
  k: number;
  /** `performance.now()` ms after which the stream ends, whatever `tokens` says. */
  deadline: number;
  closed: boolean;
  /** Send times of the token chunks, epoch ms. */
  times: number[];
  /** `chunkHead` of the stream (src/wire/chunks.ts). */
  head: string;
}

/** The null server's counters and finished streams (mutated by the streamer). */
export interface NullState {
  stats: { requests: number; tokenEvents: number };
  /** Send times (epoch ms) of finished streams by request id, until `GET /sent` takes them. */
  sent: Map<string, number[]>;
  /** Lockstep tickers by step gap, ms. */
  tickers: Map<number, Set<NullStream>>;
}

const usage = (k: number) => usageJson({ promptTokens: 8, completionTokens: k });

// vLLM's chunk (src/wire/chunks.ts) plus a non-vLLM field `t`: the send time, epoch ms.
const tokenEvent = (s: NullStream, last: boolean, t: number) =>
  sseData(
    chunkJson(
      'chat',
      s.head,
      { text: ' tok', finishReason: last ? 'length' : undefined },
      { usage: usage(s.k), extra: `,"t":${t.toFixed(4)}` },
    ),
  );

function finish(state: NullState, s: NullStream): void {
  s.res.end(sseData(usageChunkJson(s.head, usage(s.k))) + SSE_DONE);
  state.sent.set(s.id, s.times);
}

/** Write the next token chunk of `s` (the role chunk first, with the first token). Returns false when done. */
function step(state: NullState, s: NullStream): boolean {
  if (s.closed) return false;
  const t = epochNow(); // the send time, just before the write
  s.k++;
  const last = s.k >= s.tokens || performance.now() >= s.deadline;
  const role = s.k === 1 ? sseData(chunkJson('chat', s.head, { role: true }, { usage: usage(0) })) : '';
  s.times.push(t);
  state.stats.tokenEvents++;
  s.res.write(role + tokenEvent(s, last, t));
  if (last) {
    finish(state, s);
    return false;
  }
  return true;
}

/** Lockstep ticker for one gap: every gap ms, one chunk for every stream on it. */
function join(state: NullState, s: NullStream, gapMs: number): void {
  let set = state.tickers.get(gapMs);
  if (set) {
    set.add(s);
    return;
  }
  set = new Set([s]);
  state.tickers.set(gapMs, set);
  const members = set;
  const start = performance.now() + gapMs;
  let n = 0;
  const tick = () => {
    for (const m of members) if (!step(state, m)) members.delete(m);
    if (members.size === 0) {
      state.tickers.delete(gapMs);
      return;
    }
    n++;
    setTimeout(tick, Math.max(0, start + n * gapMs - performance.now()));
  };
  setTimeout(tick, gapMs);
}

/** Flat out: write as fast as the socket drains, yielding to other streams every 16 chunks. */
function pump(state: NullState, s: NullStream): void {
  for (let i = 0; i < 16; i++) {
    if (!step(state, s)) return;
    if (s.res.writableNeedDrain) {
      s.res.once('drain', () => pump(state, s));
      return;
    }
  }
  setImmediate(() => pump(state, s));
}

/** Start writing `s`: on the lockstep ticker of `gapMs` (> 0), or flat out on the next turn (0). */
export function startStream(state: NullState, s: NullStream, gapMs: number): void {
  if (gapMs > 0) join(state, s, gapMs);
  else setImmediate(() => pump(state, s));
}
