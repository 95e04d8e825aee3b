/**
 * A closed-loop pool, p-limit sized: at most `concurrency` tasks run at once; the rest wait
 * in FIFO order and start the moment a running one settles. This is the course's Promise pool
 * ("补发下一个 when one finishes, so in-flight stays equal to concurrency").
 *
 * The getters make the invariant visible in a notebook: while tasks are pending,
 * `activeCount === concurrency`; `peakActive` never exceeds it.
 */

/** A concurrency-limited runner of async tasks. */
export interface Pool {
  /** Run `fn` when a slot is free; resolves or rejects with `fn`'s outcome. */
  run<T>(fn: () => T | PromiseLike<T>): Promise<T>;
  /** Tasks running now. */
  readonly activeCount: number;
  /** Tasks waiting for a slot. */
  readonly pendingCount: number;
  /** Most tasks ever running at once. */
  readonly peakActive: number;
  /** The slot count. */
  readonly concurrency: number;
  /**
   * Drop the waiting tasks; each one's `run` promise rejects with `reason`
   * (default an Error "pool cleared"). Running tasks are not touched.
   */
  clearQueue(reason?: unknown): void;
  /** Resolves when nothing is running or waiting. */
  onIdle(): Promise<void>;
}

interface Waiting {
  start: () => void;
  reject: (reason: unknown) => void;
}

/**
 * Create a pool of `concurrency` slots.
 * @throws TypeError "concurrency must be an integer ≥ 1, got 0" for a bad count.
 */
export function createPool(concurrency: number): Pool {
  if (typeof concurrency !== 'number' || !Number.isInteger(concurrency) || concurrency < 1) {
    throw new TypeError(`concurrency must be an integer ≥ 1, got ${String(concurrency)}`);
  }
  const queue: Waiting[] = [];
  let head = 0;
  let active = 0;
  let peak = 0;
  let idleWaiters: Array<() => void> = [];

  const pending = () => queue.length - head;

  function checkIdle(): void {
    if (active === 0 && pending() === 0 && idleWaiters.length > 0) {
      const ws = idleWaiters;
      idleWaiters = [];
      for (const w of ws) w();
    }
  }

  function next(): void {
    while (active < concurrency && pending() > 0) {
      const w = queue[head];
      queue[head++] = undefined as unknown as Waiting;
      if (head > 1024 && head * 2 > queue.length) {
        queue.splice(0, head);
        head = 0;
      }
      w.start();
    }
    checkIdle();
  }

  /** A task settled: free its slot, then start the next waiting one. */
  function release(): void {
    active--;
    next();
  }

  function run<T>(fn: () => T | PromiseLike<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        active++;
        if (active > peak) peak = active;
        runTask(fn, release, resolve, reject);
      };
      queue.push({ start, reject });
      next();
    });
  }

  return {
    run,
    get activeCount() {
      return active;
    },
    get pendingCount() {
      return pending();
    },
    get peakActive() {
      return peak;
    },
    concurrency,
    clearQueue(reason: unknown = new Error('pool cleared')) {
      const dropped = queue.slice(head);
      queue.length = 0;
      head = 0;
      for (const w of dropped) w.reject(reason);
      checkIdle();
    },
    onIdle() {
      if (active === 0 && pending() === 0) return Promise.resolve();
      return new Promise<void>((r) => idleWaiters.push(r));
    },
  };
}

/** Run `fn` and hand its outcome on, calling `release` first so the next waiting task starts in the same tick. */
function runTask<T>(
  fn: () => T | PromiseLike<T>,
  release: () => void,
  resolve: (v: T) => void,
  reject: (e: unknown) => void,
): void {
  let p: Promise<T>;
  try {
    p = Promise.resolve(fn());
  } catch (err) {
    p = Promise.reject(err);
  }
  p.then(
    (value) => {
      release();
      resolve(value);
    },
    (err) => {
      release();
      reject(err);
    },
  );
}

/**
 * Wait for every task; on abort, drop the tasks still queued in `pool` (they never start). Rethrows
 * the first rejection unless the run was aborted (a rejection then is the abort, not a bug).
 */
export async function settleTasks(tasks: readonly Promise<unknown>[], signal: AbortSignal, pool?: Pool): Promise<void> {
  const onStop = () => pool?.clearQueue(new Error('run aborted'));
  signal.addEventListener('abort', onStop, { once: true });
  if (signal.aborted) onStop();
  const settled = await Promise.allSettled(tasks);
  signal.removeEventListener('abort', onStop);
  const bug = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (bug && !signal.aborted) throw bug.reason;
}
