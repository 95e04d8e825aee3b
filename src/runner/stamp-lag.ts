/**
 * How late did the client stamp what the simulator sent? The simulator logs when it wrote each token
 * chunk (`POST /loadlab/send-log`, src/sim/http/send-log.ts) on CLOCK_MONOTONIC, which every process
 * of the machine shares (src/proc/mono-clock.ts). Per chunk, arrival stamp − send time is the loopback
 * hop plus every delay of the client's own: its event loop, parsing, GC, and waits for a core.
 *
 * The event-loop delay only estimates that delay (a timer's lateness stands in for a chunk's), and
 * can read high while the chunks were stamped on time, or low while a burst of chunks waited behind
 * each other. Against the simulator the client-bound verdict is therefore judged on the stamps
 * themselves ({@link judgeStampLag}); real vLLM has no send log, and its runs keep the loop's verdict.
 */
import { pastBound, type StampLag } from '../client-stall';
import { fetchText } from '../client/fetch-text';
import { targetHeaders, type TargetAuth } from '../client/url';
import { percentilesInPlace } from '../stats/select';
import type { RequestRecord } from '../types';
import { SIM_SEND_LOG_CLOCK, SIM_SEND_LOG_PATH } from '../wire/sim-series';
import { type ClientHealth, DEFAULT_HEALTH_THRESHOLDS, LOOP_DELAY_REASON } from './health';
import { stallSentence } from './stall-sentence';
import { originMonoMs } from './thread-clock';
import type { WorkerHealth } from './worker-health';

export type { StampLag } from '../client-stall';

/** Fewer token chunks than this and the verdict stays the event loop's: a p99 would rest on one or two chunks. */
export const STAMP_LAG_MIN_CHUNKS = 100;

/** Below this many token chunks, the stamp-lag sentence says how many of the latest chunks its p99 rests on. */
export const FEW_CHUNKS = 1000;

/** How the sentence counts the chunks: with few, the p99 (numpy's linear rule) lies between the latest k−1 and k. */
function chunksWords(n: number): string {
  if (n >= FEW_CHUNKS) return `${n} chunks`;
  const k = n - Math.floor(0.99 * (n - 1));
  return `only ${n} chunks, so the p99 rests on the latest ${k}`;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const f1 = (x: number) => x.toFixed(1);

/**
 * The send log of `records`' streams from the simulator at `rootUrl` (which then forgets them), or
 * undefined when there is none (not the simulator, an older one, or a slice unanswered within 5 s).
 */
export async function fetchSendLog(
  rootUrl: string,
  records: readonly Pick<RequestRecord, 'requestId' | 'chunkMs'>[],
  auth: TargetAuth = {},
): Promise<Record<string, number[]> | undefined> {
  const ids = records.filter((r) => r.chunkMs.length > 0).map((r) => r.requestId);
  if (ids.length === 0) return undefined;
  const sends: Record<string, number[]> = {};
  // In slices, so no one answer holds the simulator's loop (or this one) for long.
  for (let i = 0; i < ids.length; i += SEND_LOG_SLICE) {
    const part = await sendLogSlice(rootUrl, ids.slice(i, i + SEND_LOG_SLICE), auth);
    if (!part) return undefined;
    Object.assign(sends, part);
  }
  return sends;
}

/** Stream ids asked for per `POST /loadlab/send-log`. */
const SEND_LOG_SLICE = 256;

async function sendLogSlice(rootUrl: string, ids: string[], auth: TargetAuth): Promise<Record<string, number[]> | undefined> {
  try {
    const res = await fetchText(`${rootUrl}${SIM_SEND_LOG_PATH}`, {
      method: 'POST',
      headers: { ...targetHeaders(auth), 'content-type': 'application/json' },
      body: JSON.stringify({ request_ids: ids }),
      signal: AbortSignal.timeout(5_000),
    });
    if (res.status !== 200) return undefined;
    const body = JSON.parse(res.text) as { clock?: string; sends?: Record<string, number[]> };
    return body.clock === SIM_SEND_LOG_CLOCK && body.sends ? body.sends : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Compare each measured request's token-chunk stamps (run clock, ms since the origin) with the
 * simulator's send times (CLOCK_MONOTONIC ms); `originMonoMs` is the run's time 0 on CLOCK_MONOTONIC.
 * Requests whose chunk count differs from the log (or whose id was used twice) are left out. Pure.
 */
export function stampLagOf(
  records: readonly Pick<RequestRecord, 'requestId' | 'chunkMs' | 'ok' | 'warmup'>[],
  sends: Record<string, number[]>,
  originMonoMs: number,
): StampLag | undefined {
  const seen = new Map<string, number>();
  for (const r of records) seen.set(r.requestId, (seen.get(r.requestId) ?? 0) + 1);
  const matched = records.filter((r) => {
    if (r.warmup || !r.ok || r.chunkMs.length === 0) return false;
    const s = sends[r.requestId];
    return s !== undefined && s.length === r.chunkMs.length && seen.get(r.requestId) === 1;
  });
  const unmatched = records.filter((r) => !r.warmup && r.ok && r.chunkMs.length > 0).length - matched.length;
  // Typed arrays of the final size, their percentiles by selection: a 128 × 600-token run has 76,800 chunks, and
  // `percentile` copies and sorts its input on every call (bench/README.md §21).
  let n = 0;
  for (const r of matched) n += r.chunkMs.length;
  if (n === 0) return undefined;
  const lag = new Float64Array(n);
  const gapMeasured = new Float64Array(n - matched.length);
  const gapSent = new Float64Array(n - matched.length);
  let k = 0;
  let g = 0;
  for (const r of matched) {
    const s = sends[r.requestId];
    for (let i = 0; i < s.length; i++) {
      lag[k++] = r.chunkMs[i] + originMonoMs - s[i];
      if (i > 0) {
        gapMeasured[g] = r.chunkMs[i] - r.chunkMs[i - 1];
        gapSent[g++] = s[i] - s[i - 1];
      }
    }
  }
  let max = Number.NEGATIVE_INFINITY;
  let min = Number.POSITIVE_INFINITY;
  for (const x of lag) {
    if (x > max) max = x;
    if (x < min) min = x;
  }
  const [p50, p99] = percentilesInPlace(lag, [50, 99]);
  return {
    chunks: n,
    requests: matched.length,
    unmatched,
    p50Ms: r3(p50),
    p99Ms: r3(p99),
    maxMs: r3(max),
    minMs: r3(min),
    itlP99Ms: { measured: r3(percentilesInPlace(gapMeasured, [99])[0]), sent: r3(percentilesInPlace(gapSent, [99])[0]) },
  };
}

/** The sentence of a run whose chunks were stamped late at p99. */
export function stampLagSentence(lag: StampLag, limitMs: number): string {
  const itl = Number.isFinite(lag.itlP99Ms.measured)
    ? ` ITL p99 was ${f1(lag.itlP99Ms.measured)} ms as measured and ${f1(lag.itlP99Ms.sent)} ms as the simulator sent the same chunks.`
    : '';
  return (
    `The load generator was the bottleneck: checked against the simulator's own send times, token chunks were stamped ` +
    `late by ${pastBound(lag.p99Ms, limitMs)} at p99 (p50 ${f1(lag.p50Ms)}, max ${f1(lag.maxMs)} ms, ${chunksWords(lag.chunks)}). ` +
    `TTFT and E2E include that much of the client's own delay.${itl}`
  );
}

/** Is this reason the event loop's (health.ts words it with this mark; with workers it is prefixed `worker N: `)? */
const isLoopReason = (r: string) => r.includes(LOOP_DELAY_REASON);

/**
 * The client-bound verdict judged on the stamps: with at least {@link STAMP_LAG_MIN_CHUNKS} chunks,
 * the event loop's reasons give way to one on the stamp lag (raised when its p99 exceeds `limitMs`,
 * the loop's threshold, with the stall blame saying why); the CPU reasons stay. Pure.
 */
export function judgeStampLag<H extends ClientHealth>(
  h: H,
  lag: StampLag | undefined,
  limitMs = DEFAULT_HEALTH_THRESHOLDS.delayP99Ms,
): H & { stampLag?: StampLag } {
  if (!lag) return h;
  if (lag.chunks < STAMP_LAG_MIN_CHUNKS) return { ...h, stampLag: lag };
  const others = h.reasons.filter((r) => !isLoopReason(r));
  const why = h.stall ? ` ${stallSentence(h.stall, h.cpuPercentOfOneCore, h.cores)}` : '';
  const reasons = lag.p99Ms > limitMs ? [`${stampLagSentence(lag, limitMs)}${why}`, ...others] : others;
  return { ...h, stampLag: lag, clientBound: reasons.length > 0, reasons };
}

/**
 * Fetch the simulator's send log for `records` and judge `health` on it; `health` unchanged when there is no
 * log. With worker threads (`workerOf` says who sent request `index`), each worker is judged on its own chunks too.
 */
export async function withStampLag<H extends ClientHealth>(
  health: H,
  records: readonly RequestRecord[],
  rootUrl: string,
  originPerfMs: number,
  auth: TargetAuth = {},
  workerOf?: (index: number) => number | undefined,
): Promise<H & { stampLag?: StampLag }> {
  const sends = await fetchSendLog(rootUrl, records, auth);
  if (!sends) return health;
  const origin = originMonoMs(originPerfMs);
  const judged = judgeStampLag(health, stampLagOf(records, sends, origin));
  if (!workerOf || !('workers' in judged)) return judged;
  const mine = (w: number) => records.filter((r) => workerOf(r.index) === w);
  const workers = (judged.workers as WorkerHealth[]).map((w) => judgeStampLag(w, stampLagOf(mine(w.worker), sends, origin)));
  return { ...judged, workers };
}
