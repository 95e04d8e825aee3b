/**
 * Work that can wait a loop turn, done in slices so the load thread polls its sockets again soon.
 *
 * A load thread stamps each token chunk when its socket is read (src/client/chunk-stamp.ts): bytes that
 * were there when the loop woke get the wake-up's reading, but bytes that arrive while the loop works
 * wait for the next `epoll_wait`, and are stamped then. So every millisecond of other work in one turn
 * is a millisecond of stamp error for the chunks that arrive meanwhile. The worst turns are the end of
 * a closed loop's wave: on lesson 02b's c = 256 point, a step ends a hundred streams at once, and the
 * turn that reads them also sends a hundred new requests and posts two hundred messages to the main
 * thread (~150 µs a stream). Chunks that arrived meanwhile were stamped up to 20–30 ms late, and they
 * were most of the point's worst 1 % (a median of 80 % in nine runs; bench/README.md §18).
 *
 * A budget lets such work run at once while the turn has spent less than `budgetMs` on it, and queues
 * the rest, in order, for the next turns: each later turn (its check phase, after the loop polled)
 * runs queued work until its budget is spent. Nothing is dropped and the order is kept; a queued send's
 * wait shows in its record's `queueMs` (intended when its slot freed, sent when the budget let it).
 */

/** Per turn, ms of deferrable work (closed-loop sends, messages to the main thread) before the loop polls again. */
export const TURN_WORK_BUDGET_MS = 0.5;

/** Runs deferrable work within a per-turn budget. */
export interface TurnBudget {
  /** Run `task` now if this turn's budget allows and nothing waits before it, else in a later turn, in order. */
  run(task: () => void): void;
  /** {@link run} for a task that returns a promise: resolves or rejects as it does (or as it throws, at once). */
  later<T>(task: () => T | PromiseLike<T>): Promise<T>;
  /** Run everything queued now, in order (before a final message, or when the thread is about to end). */
  drain(): void;
  /** Tasks waiting for a later turn. */
  readonly queued: number;
}

/**
 * A budget of `budgetMs` of work per loop turn on the clock `now` (ms). A turn is from the first task
 * it ran until its check phase (one `setImmediate`); the queue is worked off by `setImmediate`s, one
 * per later turn, so the loop polls its sockets between them.
 */
export function turnBudget(budgetMs: number = TURN_WORK_BUDGET_MS, now: () => number = () => performance.now()): TurnBudget {
  if (!(budgetMs > 0))
    throw new TypeError(`budgetMs must be a positive number of ms, e.g. ${TURN_WORK_BUDGET_MS}; got ${budgetMs}`);
  const waiting: Array<() => void> = [];
  let turnStart: number | undefined; // when this turn ran its first task
  let armed = false;
  const arm = () => {
    if (armed) return;
    armed = true;
    setImmediate(nextTurn);
  };
  const spent = () => turnStart !== undefined && now() - turnStart >= budgetMs;
  function nextTurn(): void {
    armed = false;
    turnStart = undefined;
    if (waiting.length === 0) return;
    turnStart = now();
    try {
      while (waiting.length > 0 && !spent()) (waiting.shift() as () => void)();
    } finally {
      // Set from a check phase, the next slice runs in the next loop iteration, after the loop polled again
      // (and a task that threw leaves the rest queued, not stuck).
      if (waiting.length > 0) arm();
      else turnStart = undefined; // the next task starts a turn of its own
    }
  }
  const run = (task: () => void): void => {
    if (waiting.length > 0 || spent()) {
      waiting.push(task);
      arm();
      return;
    }
    if (turnStart === undefined) {
      turnStart = now();
      arm(); // ends this turn at its check phase
    }
    task();
  };
  return {
    run,
    later: <T>(task: () => T | PromiseLike<T>) =>
      new Promise<T>((resolve, reject) =>
        run(() => {
          try {
            resolve(task());
          } catch (err) {
            reject(err);
          }
        }),
      ),
    drain() {
      while (waiting.length > 0) (waiting.shift() as () => void)();
    },
    get queued() {
      return waiting.length;
    },
  };
}
