/**
 * An alarm clock on its own thread: run callbacks at absolute `performance.now()` times with
 * sub-millisecond precision, without spinning the event loop.
 *
 * Why: Node's `setTimeout` counts in whole milliseconds (libuv's loop time is truncated to ms), so a
 * timer fires 0–2 ms late, a large share of a 7 ms decode step. Polling with `setImmediate` for the
 * last 1.5 ms before each deadline is exact but keeps the loop busy for that long every step (at
 * C=128 it was over a third of the simulator's CPU). Here a worker thread sleeps in `Atomics.wait`
 * (a futex wait with a µs timeout) until the earliest deadline, then posts one message; the main
 * thread's loop wakes for it like for any socket event (libuv's async handle).
 *
 * Shared memory: `Float64Array[0]` = the earliest deadline (hrtime ms, Infinity when none), and
 * `Int32Array[2]` = a change counter the main thread bumps (and notifies) whenever it rewrites the
 * deadline. The worker posts once per deadline it sees pass, then waits for the counter to change;
 * the main thread runs what is due and rewrites the deadline on every message.
 */
import { Worker } from 'node:worker_threads';
import { fromRoot } from '../paths';
import { cpusBeforePin } from './cpu-split';

/** A scheduled callback; `cancel()` stops it if it has not run. */
export interface AlarmHandle {
  cancel(): void;
}

/** The thread's side: sleep until the deadline (or a change), post, repeat. Plain JavaScript, run with `eval`. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const due = new Float64Array(workerData.sab, 0, 1);
const seq = new Int32Array(workerData.sab, 8, 1);
// Off the pinned engine thread's CPU, which this thread inherits, or a wake-up waits for that one core.
if (workerData.cpus) require(workerData.takeCpus).takeCpus(workerData.cpus);
const hr = () => Number(process.hrtime.bigint()) / 1e6;
for (;;) {
  const s = Atomics.load(seq, 0);
  const d = due[0];
  if (d < 0) break;
  const left = d - hr();
  if (left <= 0) {
    parentPort.postMessage(s);
    Atomics.wait(seq, 0, s);
  } else {
    Atomics.wait(seq, 0, s, Number.isFinite(left) ? left : undefined);
  }
}
`;

interface Entry {
  t: number;
  fn: () => void;
  live: boolean;
}

/** hrtime ms minus `performance.now()` ms (both monotonic; read back to back). */
function hrOffset(): number {
  return Number(process.hrtime.bigint()) / 1e6 - performance.now();
}

/** A running alarm thread. `close()` ends the thread; callbacks still pending never run. */
export interface AlarmThread {
  at(atMs: number, fn: () => void): AlarmHandle;
  close(): Promise<void>;
}

/** Start the alarm thread. Throws when worker threads or SharedArrayBuffer are unavailable. */
export function startAlarmThread(): AlarmThread {
  const sab = new SharedArrayBuffer(16);
  const due = new Float64Array(sab, 0, 1);
  const seq = new Int32Array(sab, 8, 1);
  due[0] = Number.POSITIVE_INFINITY;
  const offset = hrOffset();
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { sab, cpus: cpusBeforePin(), takeCpus: fromRoot('src', 'proc', 'take-cpus.cjs') },
  });
  worker.unref(); // only pending alarms keep the process alive (see arm)
  let pending: Entry[] = []; // sorted by t; few at a time (an engine has one step in flight)
  let closed = false;

  const arm = () => {
    while (pending.length > 0 && !pending[0].live) pending.shift();
    due[0] = pending.length > 0 ? pending[0].t + offset : Number.POSITIVE_INFINITY;
    Atomics.add(seq, 0, 1);
    Atomics.notify(seq, 0);
    if (pending.length > 0) worker.ref();
    else worker.unref();
  };
  const fire = () => {
    if (closed) return;
    const now = performance.now();
    while (pending.length > 0 && (!pending[0].live || pending[0].t <= now)) {
      const e = pending.shift()!;
      if (!e.live) continue;
      e.live = false;
      e.fn(); // may add alarms; they land in `pending` and are armed below
    }
    arm();
  };
  worker.on('message', fire);

  return {
    at(atMs, fn) {
      if (closed) throw new Error('alarm thread is closed');
      const e: Entry = { t: atMs, fn, live: true };
      let i = pending.length;
      while (i > 0 && pending[i - 1].t > atMs) i--;
      pending.splice(i, 0, e);
      if (i === 0) arm();
      return {
        cancel() {
          e.live = false;
        },
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      pending = [];
      due[0] = -1;
      Atomics.add(seq, 0, 1);
      Atomics.notify(seq, 0);
      await worker.terminate();
    },
  };
}
