/**
 * When the simulator wrote each token chunk of each stream, so a client can measure how late it
 * stamped them (src/runner/stamp-lag.ts): arrival stamp − send time is the loopback hop plus the
 * client's own delay, the quantity its event-loop delay only estimates. A LoadLab-only route
 * (`POST /loadlab/send-log`, `SIM_SEND_LOG_PATH`); real vLLM has nothing like it.
 *
 * Only streams sent with an `x-request-id` are logged (no one could ask for the others). Times are
 * CLOCK_MONOTONIC ms (src/proc/mono-clock.ts), shared by every process on the machine. Memory is
 * bounded: past `maxStamps` in all, the oldest streams are forgotten; a stream asked for is forgotten
 * once answered.
 */
import { monoOffsetMs } from '../../proc/mono-clock';
import { SIM_SEND_LOG_CLOCK } from '../../wire/sim-series';

/** Default bound on the stamps kept: 2 million (16 MB of stamps; up to twice that in arrays that grow by doubling). */
export const SEND_LOG_MAX_STAMPS = 2_000_000;

/**
 * One stream's send times, in a Float64Array that doubles as it fills. Its backing store lies outside V8's heap, so
 * the young-generation collections (every few hundred ms at 128 streams) neither scan nor copy it, as they copied a
 * growing `number[]` at each of its growths (bench/README.md §31).
 */
export class SendStamps {
  private buf = new Float64Array(64);
  /** Stamps pushed. */
  length = 0;

  push(t: number): void {
    if (this.length === this.buf.length) {
      const grown = new Float64Array(this.buf.length * 2);
      grown.set(this.buf);
      this.buf = grown;
    }
    this.buf[this.length++] = t;
  }

  /** The stamps pushed, in order (a view, not a copy). */
  values(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}

/** The log of one stream: push `performance.now()` to `t` at each token chunk's write. */
export interface StreamSends {
  t: SendStamps;
  /** Counted against the bound (finished and still held). */
  counted: boolean;
}

export class SendLog {
  private readonly streams = new Map<string, StreamSends>();
  private stamps = 0;
  private readonly offset = monoOffsetMs();

  constructor(private readonly maxStamps = SEND_LOG_MAX_STAMPS) {}

  /** Start logging stream `id` (a reused id starts afresh); push `performance.now()` at each token chunk's write. */
  open(id: string): StreamSends {
    this.forget(id);
    const sends: StreamSends = { t: new SendStamps(), counted: false };
    this.streams.set(id, sends);
    return sends;
  }

  /** Count a stream's stamps against the bound once it has finished, forgetting the oldest streams past it. */
  closed(sends: StreamSends): void {
    if (sends.counted) return;
    sends.counted = true;
    this.stamps += sends.t.length;
    for (const [id, s] of this.streams) {
      if (this.stamps <= this.maxStamps || s === sends) break;
      if (s.counted) this.forget(id); // a stream still running is left alone
    }
  }

  private forget(id: string): void {
    const s = this.streams.get(id);
    if (!s) return;
    if (s.counted) this.stamps -= s.t.length;
    s.counted = true; // a stream forgotten before it finished is never counted
    this.streams.delete(id);
  }

  /** The send times (CLOCK_MONOTONIC ms, µs resolution) of the streams asked for that are known; those are forgotten. */
  take(ids: readonly string[]): { clock: string; sends: Record<string, number[]> } {
    const sends: Record<string, number[]> = {};
    for (const id of ids) {
      const s = this.streams.get(id);
      if (!s) continue;
      sends[id] = Array.from(s.t.values(), (t) => Math.round((t + this.offset) * 1000) / 1000);
      this.forget(id);
    }
    return { clock: SIM_SEND_LOG_CLOCK, sends };
  }

  /** Streams and stamps held now. */
  get size(): { streams: number; stamps: number } {
    return { streams: this.streams.size, stamps: this.stamps };
  }
}
