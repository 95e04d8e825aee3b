/**
 * A JSON-lines file appended in batches, so that writing records never blocks the event loop for
 * long while a run measures (issue #16: "writing and summarising records must never block the loop
 * for more than 1 ms"). When a whole wave of 128 streams finishes at once, appending each record
 * as it comes (`JSON.stringify` + one `write(2)` each) stalls the loop for all of them together,
 * and every chunk stamped after the stall reads late.
 *
 * - `append(value)` only queues the value: no stringifying, no syscall.
 * - Once per event-loop turn (`setImmediate`, i.e. right after the poll phase that delivered the
 *   records) the queue is stringified until `budgetMs` (default 0.25 ms) has passed, at least one
 *   line, and what was stringified goes to disk in ONE `fs.writeSync` on an `O_APPEND` descriptor
 *   (whole lines: a crash can only tear the file's last line, which the loader reports and skips).
 *   What is left waits for the next turn, so other callbacks (chunk stamps) run in between.
 * - `flush()` writes everything queued at once (synchronous), `close()` flushes then closes; a run
 *   flushes on finish and abort (Ctrl-C, "interrupt kernel": the runner aborts and saves), and every
 *   open appender flushes on the process's `exit` event.
 * - What can be lost: only a process killed outright (SIGKILL, a signal with no handler) before the
 *   turn that queued a line ends, i.e. the lines of that one turn. Lines already written are on disk.
 * - A failed write (disk full; or a value JSON cannot hold) is kept and thrown by the next `append`,
 *   `flush` or `close`: the run then ends with a note that lines are missing.
 * - Queued values are stringified later: they must not be changed after `append` (records are not).
 */

import * as fs from 'node:fs';

/** Options of {@link openBatchedAppender}. */
export interface BatchedAppenderOptions {
  /** Longest stretch of stringifying per event-loop turn, ms; default 0.25. At least one line per turn. */
  budgetMs?: number;
  /** Clock for the budget, ms; default `performance.now`. */
  now?: () => number;
}

/** A JSON-lines file written in batches (see the module comment). */
export interface BatchedAppender {
  /** The file being appended to. */
  readonly file: string;
  /** Lines on disk. */
  readonly lines: number;
  /** Lines queued, not yet written. */
  readonly pending: number;
  /** `write(2)` calls made (one per batch). */
  readonly writes: number;
  /**
   * Queue `value` as one JSON line; `onWritten` is called once it is on disk (it must not throw).
   * Throws when closed, or with the error of a failed earlier write.
   */
  append(value: unknown, onWritten?: () => void): void;
  /** Write every queued line now (synchronous), then call their `onWritten`. */
  flush(): void;
  /** Flush, then close the descriptor; later `append` calls throw. Safe to call twice. */
  close(): void;
}

interface Queued {
  value: unknown;
  onWritten: (() => void) | undefined;
}

const live = new Set<BatchedAppender>();
let exitHook = false;

function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const a of live) {
      try {
        a.flush();
      } catch {
        // exiting: nothing left to tell
      }
    }
  });
}

/** One whole batch to `fd` (a loop only for the pathological short write; regular files take it at once). */
function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text, 'utf8');
  let written = fs.writeSync(fd, buf);
  while (written < buf.length) written += fs.writeSync(fd, buf, written);
}

/**
 * Open `file` (created if missing) for batched JSON-lines appends (see the module comment).
 * @param opts.budgetMs stringifying per event-loop turn, ms; default 0.25.
 */
export function openBatchedAppender(file: string, opts: BatchedAppenderOptions = {}): BatchedAppender {
  const { budgetMs = 0.25, now = () => performance.now() } = opts;
  if (!(budgetMs > 0)) throw new RangeError(`budgetMs must be > 0 (ms of stringifying per event-loop turn), got ${budgetMs}`);
  let fd: number | undefined = fs.openSync(file, 'a');
  let queue: Queued[] = [];
  let [head, lines, writes] = [0, 0, 0];
  let scheduled: NodeJS.Immediate | undefined;
  let failed: unknown;

  /** Stringify from the queue (until `untilMs`, or all), write in one call, then tell the callbacks. */
  const writeBatch = (untilMs: number) => {
    if (failed !== undefined) throw failed;
    if (fd === undefined || head >= queue.length) return;
    const start = head;
    try {
      let text = '';
      do text += `${JSON.stringify(queue[head++].value)}\n`;
      while (head < queue.length && now() < untilMs);
      writeAll(fd, text);
    } catch (err) {
      failed = err;
      throw err;
    }
    const done = queue.slice(start, head);
    if (head >= queue.length) {
      queue = [];
      head = 0;
    }
    writes++;
    lines += done.length;
    for (const q of done) q.onWritten?.();
  };
  const drain = () => {
    scheduled = undefined;
    try {
      writeBatch(now() + budgetMs);
    } catch {
      return; // kept in `failed`, thrown to the next caller
    }
    if (head < queue.length) scheduled = setImmediate(drain);
  };

  const appender: BatchedAppender = {
    file,
    get lines() {
      return lines;
    },
    get pending() {
      return queue.length - head;
    },
    get writes() {
      return writes;
    },
    append(value, onWritten) {
      if (failed !== undefined) throw failed;
      if (fd === undefined) throw new Error(`${file} is closed; open a new appender (or run) to write more lines`);
      queue.push({ value, onWritten });
      scheduled ??= setImmediate(drain);
    },
    flush() {
      if (scheduled) clearImmediate(scheduled);
      scheduled = undefined;
      writeBatch(Number.POSITIVE_INFINITY);
    },
    close() {
      if (fd === undefined) return;
      try {
        appender.flush();
      } finally {
        fs.closeSync(fd);
        fd = undefined;
        live.delete(appender);
      }
    },
  };
  live.add(appender);
  installExitHook();
  return appender;
}

/**
 * Close `a` (flushing it) and never throw: returns a sentence for the run's notes when its lines could
 * not all be written (e.g. `requests.jsonl could not be written (ENOSPC …); …`), else undefined.
 */
export function closeAppender(a: BatchedAppender): string | undefined {
  try {
    a.close();
    return undefined;
  } catch (err) {
    const name = a.file.split(/[\\/]/).pop();
    return `${name} could not be written (${(err as Error).message}); the lines queued then are missing`;
  }
}
