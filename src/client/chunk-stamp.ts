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
 * A `'turn'` reading is held at most {@link TURN_HOLD_MAX_MS}: read outside the poll phase (in an
 * Immediate), a reading could otherwise last into the next turn, so this bounds how early any stamp can
 * be. The simulator's send log checks the result: no chunk stamped before it was sent (src/runner/stamp-lag.ts).
 */
export type ChunkStamp = 'turn' | 'callback';

/** The stamp modes, for option checks and messages. */
export const CHUNK_STAMPS: readonly ChunkStamp[] = ['turn', 'callback'];

/** Longest a turn's reading is reused, ms. */
export const TURN_HOLD_MAX_MS = 2;

/** Stamps bytes arriving for `stream` (any object that stands for one response), ms. */
export type ArrivalClock = (stream: object) => number;

/** The arrival clock under `mode`, on top of `now`. */
export function chunkClock(now: () => number, mode: ChunkStamp): ArrivalClock {
  return mode === 'callback' ? now : turnClock(now);
}

function turnClock(now: () => number): ArrivalClock {
  let held: number | undefined;
  const seen = new Set<object>(); // streams stamped in this turn
  const release = () => {
    held = undefined;
    seen.clear();
  };
  return (stream) => {
    const t = now();
    if (held === undefined) setImmediate(release);
    else if (t - held <= TURN_HOLD_MAX_MS) {
      if (seen.has(stream)) return t;
      seen.add(stream);
      return held;
    }
    held = t;
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
