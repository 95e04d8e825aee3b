/**
 * What a calibration found, from the records of its passes: stamp error (arrival − send +
 * clock offset) per token chunk, events/s, the kept-up / fell-behind verdicts and the verdict in
 * plain words. Pure: `calibrateClient` (./calibrate.ts) and `bench/client-ceiling.ts` both use it,
 * so the figures of the benchmark and of the lesson mean the same thing.
 */
import { percentiles } from '../stats/percentile';
import type { StallCause } from '../client-stall';
import type { RequestRecord } from '../types';

/** One pass of the calibration. */
export interface CalibrationPass {
  mode: 'paced' | 'flat-out';
  /** Concurrent streams. */
  concurrency: number;
  /** Step gap, ms (0 = flat out). */
  gapMs: number;
  /** What the server meant to send, token events/s (NaN flat out). */
  offeredEventsPerSec: number;
  /** Token events the client received per second of the pass. */
  eventsPerSec: number;
  /** Token events received. */
  events: number;
  /** Requests that did not end `ok`. */
  failed: number;
  /** Arrival − send per token chunk, ms (flat out this includes the socket backlog). */
  stampErrorP50Ms: number;
  stampErrorP99Ms: number;
  stampErrorMaxMs: number;
  /** The client's event-loop delay p99 during the pass, ms. */
  eventLoopDelayP99Ms: number;
  /** The client process's CPU over the pass, % of one core. */
  clientCpuPercent: number;
  /** The null server's CPU over the pass, % of one core. */
  serverCpuPercent: number;
  /** Wall time of the pass, s. */
  seconds: number;
  /** Paced: no failure and stamp error p99 ≤ the limit. Flat out: no failure. */
  keptUp: boolean;
  /** Who made the client's loop late in the pass (src/runner/stall-blame.ts); absent in older results. */
  stallCause?: StallCause;
}

/** What {@link calibrateClient} found. */
export interface ClientCalibration {
  passes: CalibrationPass[];
  /** Most token events/s the client handled in any pass (normally the flat-out pass). */
  ceilingEventsPerSec: number;
  /** The busiest paced pass that kept up (undefined when none did). */
  keptUpTo?: { concurrency: number; eventsPerSec: number; stampErrorP99Ms: number };
  /** The first paced pass that did not keep up. */
  fellBehindAt?: { concurrency: number; eventsPerSec: number; stampErrorP99Ms: number };
  /** Every paced pass kept up. */
  ok: boolean;
  /** Stamp error limit used, ms. */
  stampLimitMs: number;
  /** Child epoch clock minus this process's, ms (already corrected in the stamp errors). */
  clockOffsetMs: number;
  /** Start-up of the null server process, s. */
  startupSeconds: number;
  /** Whole call, s. */
  wallSeconds: number;
  /** Logical cores, and the 1-minute load average (the higher of start and end). */
  cores: number;
  loadAverage1m: number;
  /** PID of the null server process (gone when the call returns). */
  serverPid: number;
  /** The verdict in plain words. */
  verdict: string;
}

/** The raw figures of one pass, before rounding. */
export interface PassFigures {
  /** Token chunks received. */
  events: number;
  /** Records that did not end `ok`. */
  failed: number;
  /** Arrival − send + offset for every token chunk with a known send time, ms, in record order. */
  stampErrorsMs: number[];
  /** Token chunks per second of the window. */
  eventsPerSec: number;
  /** From the first request's `startMs` to the last chunk, s (`fallbackWallMs` when that is empty). */
  windowS: number;
}

/**
 * Figures of one pass: `sent` maps a request id to the send times (epoch ms) of its token chunks
 * as the server wrote them (`GET /sent`); chunk k of a record is paired with send time k.
 * @param offsetMs the server's epoch clock minus the client's, ms, added to every stamp error.
 * @param fallbackWallMs window used when the records have no chunk, ms.
 */
export function passFigures(
  records: readonly RequestRecord[],
  sent: Record<string, number[]>,
  offsetMs: number,
  fallbackWallMs: number,
): PassFigures {
  const stampErrorsMs: number[] = [];
  let events = 0;
  let failed = 0;
  let first = Infinity;
  let last = -Infinity;
  for (const r of records) {
    if (!r.ok) failed++;
    events += r.chunkMs.length;
    first = Math.min(first, r.startMs);
    if (r.chunkMs.length) last = Math.max(last, r.chunkMs[r.chunkMs.length - 1]);
    const times = sent[r.requestId] ?? [];
    const n = Math.min(times.length, r.chunkMs.length);
    for (let k = 0; k < n; k++) stampErrorsMs.push(r.chunkMs[k] - times[k] + offsetMs);
  }
  const windowS = Number.isFinite(last - first) && last > first ? (last - first) / 1000 : fallbackWallMs / 1000;
  return { events, failed, stampErrorsMs, eventsPerSec: events / windowS, windowS };
}

/** Round to `d` decimals for display; non-finite values pass through. */
export const round = (x: number, d = 3): number => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : x);

/** What the pass loop measured besides the records. */
export interface PassContext {
  mode: 'paced' | 'flat-out';
  concurrency: number;
  gapMs: number;
  /** Client event-loop delay p99 (ms) and CPU (% of one core) over the pass. */
  eventLoopDelayP99Ms: number;
  cpuPercentOfOneCore: number;
  /** The null server's CPU and wall time over the pass, ms. */
  server: { cpuMs: number; wallMs: number };
  /** Wall time of the pass, ms. */
  wallMs: number;
  /** Stamp error p99 limit of a paced pass, ms. */
  limitMs: number;
  /** Who made the client's loop late in the pass, if measured. */
  stallCause?: StallCause;
}

/** One `CalibrationPass` from its figures (rounded for display; `keptUp` judged on the unrounded p99). */
export function calibrationPass(f: PassFigures, c: PassContext): CalibrationPass {
  const [p50, p99, max] = percentiles(f.stampErrorsMs, [50, 99, 100]);
  return {
    mode: c.mode,
    concurrency: c.concurrency,
    gapMs: c.gapMs,
    offeredEventsPerSec: c.gapMs > 0 ? round((c.concurrency * 1000) / c.gapMs, 0) : NaN,
    eventsPerSec: round(f.eventsPerSec, 0),
    events: f.events,
    failed: f.failed,
    stampErrorP50Ms: round(p50),
    stampErrorP99Ms: round(p99),
    stampErrorMaxMs: round(max),
    eventLoopDelayP99Ms: round(c.eventLoopDelayP99Ms, 2),
    clientCpuPercent: round(c.cpuPercentOfOneCore, 0),
    serverCpuPercent: round(c.server.wallMs > 0 ? (c.server.cpuMs / c.server.wallMs) * 100 : NaN, 0),
    seconds: round(c.wallMs / 1000, 2),
    keptUp: f.failed === 0 && (c.mode === 'flat-out' || p99 <= c.limitMs),
    ...(c.stallCause ? { stallCause: c.stallCause } : {}),
  };
}

/** The pass-derived fields of a `ClientCalibration`: ceiling, busiest paced pass that kept up, first that did not, ok. */
export function judgePasses(
  passes: readonly CalibrationPass[],
): Pick<ClientCalibration, 'ceilingEventsPerSec' | 'keptUpTo' | 'fellBehindAt' | 'ok'> {
  const paced = passes.filter((p) => p.mode === 'paced');
  const pick = (p: CalibrationPass) => ({
    concurrency: p.concurrency,
    eventsPerSec: p.eventsPerSec,
    stampErrorP99Ms: p.stampErrorP99Ms,
  });
  const kept = paced.filter((p) => p.keptUp);
  const busiest = kept.reduce<CalibrationPass | undefined>((b, p) => (!b || p.eventsPerSec > b.eventsPerSec ? p : b), undefined);
  const behind = paced.find((p) => !p.keptUp);
  return {
    ceilingEventsPerSec: Math.max(0, ...passes.map((p) => p.eventsPerSec)),
    ...(busiest ? { keptUpTo: pick(busiest) } : {}),
    ...(behind ? { fellBehindAt: pick(behind) } : {}),
    ok: paced.length > 0 && !behind,
  };
}

/** The plain-words verdict of a calibration (English; notebooks may phrase their own). Pure. */
export function calibrationVerdict(c: Omit<ClientCalibration, 'verdict'>): string {
  const f0 = (x: number) => Math.round(x).toLocaleString('en-US');
  const streams = (n: number) => `${n} stream${n === 1 ? '' : 's'}`;
  const flat = c.passes.find((p) => p.mode === 'flat-out');
  const parts: string[] = [];
  if (flat) {
    parts.push(
      `Flat out, this client handled ${f0(flat.eventsPerSec)} SSE events/s over ${streams(flat.concurrency)} ` +
        `(client CPU ${f0(flat.clientCpuPercent)} %, null server ${f0(flat.serverCpuPercent)} % of a core` +
        (flat.serverCpuPercent >= 85 ? '; the server side was the limit, so the client can do more' : '') +
        ').',
    );
  }
  if (c.ok && c.keptUpTo) {
    parts.push(
      `Paced like a GPU decoding (one chunk per stream per step), it kept up at every concurrency tried, up to ` +
        `${streams(c.keptUpTo.concurrency)} (${f0(c.keptUpTo.eventsPerSec)} events/s) with a stamp error p99 of ` +
        `${c.keptUpTo.stampErrorP99Ms.toFixed(2)} ms (limit ${c.stampLimitMs} ms): timings from this machine are trustworthy at that load.`,
    );
  } else if (c.fellBehindAt) {
    parts.push(
      `It fell behind at ${streams(c.fellBehindAt.concurrency)} (${f0(c.fellBehindAt.eventsPerSec)} events/s): chunks were ` +
        `stamped ${c.fellBehindAt.stampErrorP99Ms.toFixed(2)} ms late at p99 (limit ${c.stampLimitMs} ms), so TTFT and ITL ` +
        `measured at that load include that much of the client's own delay.` +
        (c.keptUpTo ? ` At ${streams(c.keptUpTo.concurrency)} it kept up.` : ''),
    );
    const pass = c.passes.find((p) => p.mode === 'paced' && p.concurrency === c.fellBehindAt?.concurrency);
    const cause = pass?.stallCause;
    if (pass && cause && cause !== 'none') {
      parts.push(
        cause === 'other-processes'
          ? `The client waited without working while it was late (${f0(pass.clientCpuPercent)} % of a core), so the delay came ` +
              `from other programs taking the CPU (or too few cores), not from parsing: close them and calibrate again.`
          : cause === 'woken-late'
            ? `The client was mostly still asleep past its time while it was late (${f0(pass.clientCpuPercent)} % of a core): ` +
              `the kernel or the VM's host woke it late, not parsing and not another program. Calibrate again; ` +
              `if it stays, this machine wakes threads late.`
            : `The delay was the client's own ${cause === 'gc' ? 'garbage collection' : 'work'} (${f0(pass.clientCpuPercent)} % ` +
              `of a core): run fewer streams per process, or give the client a core of its own.`,
      );
    } else if (pass && pass.clientCpuPercent < 50) {
      parts.push(
        `The client itself used only ${f0(pass.clientCpuPercent)} % of a core in that pass, so the delay came from other ` +
          `programs taking the CPU (or too few cores), not from parsing: close them and calibrate again.`,
      );
    } else {
      parts.push('Run fewer streams per process, or give the client a core of its own.');
    }
  }
  if (c.loadAverage1m > c.cores)
    parts.push(`The machine was busy (load average ${c.loadAverage1m.toFixed(2)} on ${c.cores} cores).`);
  return parts.join(' ');
}
