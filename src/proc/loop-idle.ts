/**
 * The event loop's idle time: libuv counts the time its poll phase spends blocked in `epoll_wait`, when no
 * callback of this thread can run, and Node reports it (`performance.nodeTiming.idleTime`, the figure
 * `performance.eventLoopUtilization()` returns as `idle`, read here without making that object). The client's
 * turn clock (src/client/chunk-stamp.ts) and the simulator's spinning clock (src/sim/engine/spin-clock.ts) read it.
 */

/** The loop's idle time so far, ms: it grows only while the loop waits for I/O or a timer. */
export const loopIdleMs = (): number => performance.nodeTiming.idleTime;

/**
 * Of `lateMs` past a deadline, at least how long the loop was still idle in its poll: the lateness less the loop's
 * busy time over the `wallMs` since it went to wait (the wall time less the `idleMs` its idle time grew by), all of
 * that busy time counted as after the deadline; ≥ 0. Pure.
 */
export function idlePastMs(lateMs: number, wallMs: number, idleMs: number): number {
  return Math.max(0, lateMs - Math.max(0, wallMs - idleMs));
}

/**
 * Of `lateMs` past a deadline, the part a thread was woken late: its sleep past the deadline (`sleptMs`, from
 * {@link idlePastMs}) beyond the first `roundingMs` (a timer's own rounding) and beyond the `queuedMs` it waited in the
 * run queue (at most `lateMs`), which any wake-up includes; ≥ 0. Pure.
 */
export function wokenLateMs(lateMs: number, queuedMs: number, sleptMs: number, roundingMs = 0): number {
  return Math.min(lateMs - queuedMs, Math.max(0, sleptMs - roundingMs - queuedMs));
}
