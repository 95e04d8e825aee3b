/**
 * The null server's streams (see `./null-server.ts`): one SSE stream per request, written in LOCKSTEP with every other
 * stream on the same step gap and phase (one ticker per gap and phase, on absolute times met like the simulator's steps,
 * like one engine step emitting a chunk for every running request), or flat out when the gap is 0 (`batch` token chunks
 * per write). Each token chunk carries the time it was made `"t"` (epoch ms, read just before the write); a finished
 * stream's send times (taken just before each write reached the kernel, a lower bound) are kept per request id for
 * `GET /sent`.
 */
import type { ServerResponse } from 'node:http';
import { chunkJson, SSE_DONE, sseData, usageChunkJson, usageJson } from '../wire/chunks';
import { realClock } from '../sim/engine/clock';
import { epochNow } from './epoch-clock';
import { flushNow } from '../wire/flush';

/** One open stream of the null server. */
export interface NullStream {
  res: ServerResponse;
  id: string;
  /** Token chunks to write (`max_tokens`). */
  tokens: number;
  /** Token chunks written so far. */
  k: number;
  /** Token chunks per write when flat out (gap 0), ≥ 1. */
  batch: number;
  /** `performance.now()` ms after which the stream ends, whatever `tokens` says. */
  deadline: number;
  /** The last token chunk has been built. */
  done: boolean;
  closed: boolean;
  /** Send times of the token chunks, epoch ms. */
  times: number[];
  /** `chunkHead` of the stream (src/wire/chunks.ts). */
  head: string;
}

/** The null server's counters and finished streams (mutated by the streamer). */
export interface NullState {
  /** Requests taken, token chunks written (both since start), streams open now and the most open at once. */
  stats: { requests: number; tokenEvents: number; open: number; peakOpen: number };
  /** Send times (epoch ms) of finished streams by request id, until `GET /sent` takes them. */
  sent: Map<string, number[]>;
  /** Lockstep tickers by step gap and phase, ms (`"<gap>+<phase>"`). */
  tickers: Map<string, Set<NullStream>>;
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

/** The next token chunk of `s` (the role chunk first, with the first token), stamped and counted. */
function nextEvent(state: NullState, s: NullStream): string {
  const t = epochNow(); // the chunk's `t`: when it was made, just before the write
  s.k++;
  s.done = s.k >= s.tokens || performance.now() >= s.deadline;
  const role = s.k === 1 ? sseData(chunkJson('chat', s.head, { role: true }, { usage: usage(0) })) : '';
  state.stats.tokenEvents++;
  return role + tokenEvent(s, s.done, t);
}

/** The send times of `GET /sent`: taken just before each stream's bytes are flushed (src/wire/flush.ts), as the simulator's send log. */
const stampSent = (times: number[], n: number) => {
  const t = epochNow();
  for (let i = 0; i < n; i++) times.push(t);
};

/** Write the next `n` token chunks of `s` in one write (then the usage chunk and `[DONE]` if done). Returns false when done. */
function step(state: NullState, s: NullStream, n = 1): boolean {
  if (s.closed) return false;
  let text = '';
  const k0 = s.k;
  for (let i = 0; i < n && !s.done; i++) text += nextEvent(state, s);
  s.res.write(text);
  stampSent(s.times, s.k - k0);
  if (!s.done) {
    flushNow(s.res);
    return true;
  }
  s.res.end(sseData(usageChunkJson(s.head, usage(s.k))) + SSE_DONE);
  state.sent.set(s.id, s.times);
  return false;
}

/**
 * The tickers' clock: the simulator's real-time clock (src/sim/engine/clock.ts), which sleeps with `setTimeout` and waits
 * the last 1.5 ms in place (the simulator's steps start with a lateness p99 of about 0.5 ms on this project's VM). A
 * plain `setTimeout` fires 0–2 ms late (libuv's loop time is whole milliseconds): the server's own send gaps for a
 * 10 ms step had a p99 of 11.35–13.32 ms with it, 10.76–12.48 ms with this clock (bench/README.md §22), and every
 * reader's ITL sits on top of them.
 */
const clock = realClock();

/** Lockstep ticker for one gap and phase: first step `phaseMs + gapMs` after it starts, then every gap ms. */
function join(state: NullState, s: NullStream, gapMs: number, phaseMs: number): void {
  const key = `${gapMs}+${phaseMs}`;
  let set = state.tickers.get(key);
  if (set) {
    set.add(s);
    return;
  }
  set = new Set([s]);
  state.tickers.set(key, set);
  const members = set;
  const start = clock.now() + phaseMs + gapMs;
  let n = 0;
  const tick = () => {
    for (const m of members) if (!step(state, m)) members.delete(m);
    if (members.size === 0) {
      state.tickers.delete(key);
      return;
    }
    n++;
    clock.at(start + n * gapMs, tick);
  };
  clock.at(start, tick);
}

/** Flat out: write as fast as the socket drains (`s.batch` chunks per write), yielding to other streams every 16 writes. */
function pump(state: NullState, s: NullStream): void {
  for (let i = 0; i < 16; i++) {
    if (!step(state, s, s.batch)) return;
    if (s.res.writableNeedDrain) {
      s.res.once('drain', () => pump(state, s));
      return;
    }
  }
  setImmediate(() => pump(state, s));
}

/**
 * Start writing `s`: on the lockstep ticker of `gapMs` (> 0) and `phaseMs`, or flat out (gap 0)
 * after `phaseMs` (0 = on the next turn).
 */
export function startStream(state: NullState, s: NullStream, gapMs: number, phaseMs: number): void {
  if (gapMs > 0) join(state, s, gapMs, phaseMs);
  else if (phaseMs > 0) setTimeout(() => pump(state, s), phaseMs);
  else setImmediate(() => pump(state, s));
}
