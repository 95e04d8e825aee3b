/**
 * How a token chunk's arrival is stamped.
 *
 * - `'turn'` (default): one reading per event-loop turn. libuv's poll phase hands the loop every
 *   socket that became readable while it slept, and the loop then runs their callbacks one after
 *   another. Read in each callback, the clock would stamp the last of 128 sockets after the 127
 *   callbacks before it, although its bytes were there when the loop woke. This clock keeps the turn's
 *   first reading until the loop's check phase (one `setImmediate` per turn that read it) and gives it
 *   to the first bytes of each stream in the turn: they made the socket readable, so they were there
 *   when the loop woke. Later bytes of the same stream in the same turn may have arrived after the
 *   wake-up (a late loop reads a step's chunk and the next one together), so they get a fresh reading.
 * - `'callback'`: a fresh reading in each data callback, as `vllm bench serve` stamps each message
 *   (`vllm/benchmarks/lib/endpoint_request_func.py`: `time.perf_counter()` per chunk of `iter_any()`).
 *
 * A `'turn'` reading stands only for sockets that one `epoll_wait` returned. It is given up, and the
 * next bytes get a fresh reading, when any of these says the loop may have polled again since:
 * - the check phase ran (the `setImmediate` above);
 * - the loop waited for I/O since the reading: its idle time grew (`performance.eventLoopUtilization`;
 *   libuv counts idle time only while `epoll_wait` blocks, `uv__io_poll` in src/unix/linux.c);
 * - {@link TURN_POLL_BATCH} streams took it: libuv reads at most 1024 events per `epoll_wait` and polls
 *   again at once when it got that many (`uv__io_poll`), so a larger wave spans more than one batch;
 * - it is {@link TURN_HOLD_MAX_MS} old. This bounds how early a stamp can be if a reading was taken
 *   outside the poll phase (a timer or an Immediate) and the next poll found bytes without waiting;
 *   LoadLab's client stamps only in socket callbacks, which run in the poll phase.
 * The simulator's send log checks the result: no chunk stamped before it was sent (src/runner/stamp-lag.ts).
 */

import { loopIdleMs } from '../proc/loop-idle';

export type ChunkStamp = 'turn' | 'callback';

/** The stamp modes, for option checks and messages. */
export const CHUNK_STAMPS: readonly ChunkStamp[] = ['turn', 'callback'];

/**
 * Longest a turn's reading is reused, ms. Reading one poll batch of 512 streams takes about 10 ms on a VM
 * where a socket read costs 17–20 µs (bench/README.md §15); with 2 ms, as before, the streams read after
 * the first 2 ms of a 256-stream wave were stamped when they were read, not when they were there.
 */
export const TURN_HOLD_MAX_MS = 10;

/** Streams that may share a turn's reading: the events libuv's `uv__io_poll` takes from one `epoll_wait`. */
export const TURN_POLL_BATCH = 1024;

/** Stamps bytes arriving for `stream` (any object that stands for one response), ms. */
export type ArrivalClock = (stream: object) => number;

/** The arrival clock under `mode`, on top of `now` (`idle`: the loop's idle time, ms, for tests). */
export function chunkClock(now: () => number, mode: ChunkStamp, idle: () => number = loopIdleMs): ArrivalClock {
  return mode === 'callback' ? now : turnClock(now, idle);
}

function turnClock(now: () => number, idle: () => number): ArrivalClock {
  let held: number | undefined;
  let idleAtHold = 0;
  const seen = new Set<object>(); // streams stamped in this turn
  const release = () => {
    held = undefined;
    seen.clear();
  };
  return (stream) => {
    const t = now();
    if (held === undefined) setImmediate(release);
    else if (t - held <= TURN_HOLD_MAX_MS && seen.size < TURN_POLL_BATCH && idle() === idleAtHold) {
      if (seen.has(stream)) return t;
      seen.add(stream);
      return held;
    }
    held = t;
    idleAtHold = idle();
    seen.add(stream);
    return t;
  };
}

/** Throws a TypeError naming the modes unless `v` is one (undefined is the default, `'turn'`). */
export function checkChunkStamp(v: unknown, name = 'stamp'): ChunkStamp {
  if (v === undefined) return 'turn';
  if (typeof v === 'string' && (CHUNK_STAMPS as readonly string[]).includes(v)) return v as ChunkStamp;
  throw new TypeError(
    `${name} must be 'turn' (one stamp per event-loop turn, the default) or 'callback' (one per data callback, as vllm bench serve), got ${JSON.stringify(v)}`,
  );
}
