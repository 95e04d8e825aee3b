/**
 * vLLM's `request_queue_time_seconds` (first SCHEDULED − QUEUED) for the simulator. The
 * engine contract reports outputs, not scheduling events, so this watches the scheduler's
 * running set after each step: a request's first step in it (or the step of its first output,
 * if it finished within its first step) started when it was first scheduled.
 */

/** Tracks requests until their first scheduling; reports each queue time once. */
export class QueueTimes {
  private readonly pending = new Map<string, { addMs: number; firstOutput: boolean }>();

  /**
   * @param running the engine's running set after a step (ids)
   * @param observe receives queue time, seconds
   */
  constructor(
    private readonly running: () => ReadonlyArray<{ id: string }>,
    private readonly observe: (queueS: number) => void,
  ) {}

  /** A request was handed to the engine at `addMs` (engine clock). */
  track(id: string, addMs: number): void {
    this.pending.set(id, { addMs, firstOutput: false });
  }

  /** The request produced its first output in the step now ending. */
  firstOutput(id: string): void {
    const p = this.pending.get(id);
    if (p) p.firstOutput = true;
  }

  /** The request left before it was scheduled (client went away): no sample, as in vLLM. */
  forget(id: string): void {
    this.pending.delete(id);
  }

  /** After each engine step (`onStep`), with that step's start time. */
  onStep(stepStartMs: number): void {
    if (this.pending.size === 0) return;
    for (const r of this.running()) {
      const p = this.pending.get(r.id);
      if (p) this.done(r.id, stepStartMs - p.addMs);
    }
    for (const [id, p] of this.pending) if (p.firstOutput) this.done(id, stepStartMs - p.addMs);
  }

  private done(id: string, ms: number): void {
    this.pending.delete(id);
    this.observe(Math.max(0, ms) / 1000);
  }
}
