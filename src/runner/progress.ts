/**
 * Run progress: counts plus p95 TTFT so far, delivered to a callback or printed as one line.
 * Never more than 4 updates a second; on a TTY the line rewrites itself (`\r`), elsewhere
 * (notebooks, CI logs) a new line appears every few seconds.
 */

import { percentile } from '../stats/percentile';

/** A progress snapshot of a run's measured requests (warm-up excluded). */
export interface Progress {
  /** Measured requests finished (ok or not). */
  done: number;
  /** Finished with `ok: false`. */
  failed: number;
  /** Requests sent and not yet finished (warm-up included). */
  inFlight: number;
  /** Measured requests planned. */
  total: number;
  /** p95 of TTFT over successful measured requests so far, ms (NaN before the first). */
  p95TtftMs: number;
  /** Since the run's origin, s. */
  elapsedS: number;
  /** `'warmup'` while warm-up requests run, then `'load'`, and `'done'` in the final call. */
  phase: 'warmup' | 'load' | 'done';
}

/** Where progress goes: a callback, a line on stderr (`true`), or nowhere (`false`). */
export type ProgressSink = boolean | ((p: Progress) => void);

/** Options of `createProgress`. */
export interface ProgressOptions {
  sink: ProgressSink;
  /** Line output; default `process.stderr`. */
  stream?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Minimum time between updates, ms; default 250 (callback and TTY), 5000 for non-TTY lines. */
  intervalMs?: number;
}

/** The live progress of one run; the runner feeds it, it throttles the output. */
export interface ProgressTracker {
  readonly state: Progress;
  /** A measured (or warm-up) request finished. */
  record(ok: boolean, ttftMs: number | undefined, warmup: boolean): void;
  setInFlight(n: number): void;
  setPhase(phase: Progress['phase']): void;
  /** Emit the last snapshot (phase `'done'`) and stop the timer. */
  finish(): void;
}

/** One progress line: `done 12/50  failed 1  in flight 8  p95 TTFT 215 ms  3.2 s`. */
export function formatProgress(p: Progress): string {
  const ttft = Number.isNaN(p.p95TtftMs) ? '–' : `${p.p95TtftMs.toFixed(0)} ms`;
  const phase = p.phase === 'warmup' ? 'warm-up  ' : '';
  return `${phase}done ${p.done}/${p.total}  failed ${p.failed}  in flight ${p.inFlight}  p95 TTFT ${ttft}  ${p.elapsedS.toFixed(1)} s`;
}

/**
 * Start tracking progress of `total` measured requests; `elapsedS` reads `nowMs` (ms since
 * the run's origin). With `sink: false` it only keeps `state`.
 */
export function createProgress(total: number, nowMs: () => number, opts: ProgressOptions): ProgressTracker {
  const ttfts: number[] = [];
  const state: Progress = { done: 0, failed: 0, inFlight: 0, total, p95TtftMs: NaN, elapsedS: 0, phase: 'load' };
  const sink = opts.sink;
  const stream = opts.stream ?? process.stderr;
  const tty = typeof sink !== 'function' && stream.isTTY === true;
  const intervalMs = opts.intervalMs ?? (typeof sink === 'function' || tty ? 250 : 5000);
  let dirty = true;
  let ttftDirty = false;
  let lastLen = 0;

  const snapshot = (): Progress => {
    if (ttftDirty) {
      state.p95TtftMs = percentile(ttfts, 95);
      ttftDirty = false;
    }
    state.elapsedS = nowMs() / 1000;
    return { ...state };
  };
  const emit = () => {
    dirty = false;
    const p = snapshot();
    if (typeof sink === 'function') sink(p);
    else if (sink) {
      const line = formatProgress(p);
      if (tty) {
        stream.write(`\r${line}${' '.repeat(Math.max(0, lastLen - line.length))}`);
        lastLen = line.length;
      } else {
        stream.write(`${line}\n`);
      }
    }
  };
  const timer = sink ? setInterval(() => dirty && emit(), intervalMs) : undefined;
  timer?.unref();

  return {
    get state() {
      return snapshot();
    },
    record(ok, ttftMs, warmup) {
      dirty = true;
      if (warmup) return;
      state.done++;
      if (!ok) state.failed++;
      else if (ttftMs !== undefined) {
        ttfts.push(ttftMs);
        ttftDirty = true;
      }
    },
    setInFlight(n) {
      if (n !== state.inFlight) dirty = true;
      state.inFlight = n;
    },
    setPhase(phase) {
      dirty = true;
      state.phase = phase;
    },
    finish() {
      if (timer) clearInterval(timer);
      state.phase = 'done';
      if (sink) emit();
      if (sink === true && tty) stream.write('\n');
    },
  };
}
