/**
 * LoadLab request records rebuilt from the per-request lists of a `vllm bench serve --save-detailed`
 * result (vllm/benchmarks/serve.py at commit 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1; per-request
 * fields from vllm/benchmarks/lib/endpoint_request_func.py `RequestFuncOutput`).
 *
 * What is measured and what is reconstructed (the manifest's `imported.timing` says it too):
 * - measured by vLLM's client and kept exactly (seconds → ms): TTFT, every ITL, latency (E2E),
 *   `client_queue_time`, prompt and output token counts;
 * - reconstructed: the send time `startMs` = `start_times[i]` (vLLM's `time.perf_counter()`) shifted
 *   so the earliest arrival is 0; the intended send time = send − `queue_times[i]` (vLLM's
 *   `request_arrival_time`: when its pacer released the request, before the concurrency semaphore);
 *   token chunk times = send + TTFT + cumulative ITLs; `endMs` = send + latency (send for a failed request,
 *   whose latency vLLM leaves at 0); `chunkTokens` = 1 per chunk (vLLM does not keep them).
 * A file without `start_times` cannot place requests in time, so it is refused: no stamp is invented.
 * vLLM's chat TTFT is the first chunk with `choices` (the role chunk), so its first ITL is the
 * role→token gap; the records keep vLLM's values as they are.
 */

import { STATUS_CODES } from 'node:http';
import type { Api, ErrorCode, RequestRecord } from '../types';
import { type PER_REQUEST_KEYS, type VllmResult, VllmResultError } from './vllm-result-file';

const MS = 1000;

/** Reason phrase → status (`Internal Server Error` → 500), from Node's table of HTTP reasons. */
const REASONS = new Map(Object.entries(STATUS_CODES).map(([code, reason]) => [String(reason).toLowerCase(), Number(code)]));

/** Patterns of vLLM's error strings (aiohttp reasons and Python tracebacks) and the LoadLab code each becomes. */
const ERROR_PATTERNS: Array<[RegExp, ErrorCode]> = [
  [
    /^(http_4xx|http_5xx|stream_error|connection_refused|connection_reset|timeout|idle_timeout|parse|incomplete|aborted): /,
    'parse',
  ],
  [/Never received a valid chunk/i, 'stream_error'],
  [/TimeoutError|ServerTimeoutError/, 'timeout'],
  [/ClientConnectorError|Cannot connect to host|ConnectionRefusedError/, 'connection_refused'],
  [/ServerDisconnectedError|ClientPayloadError|ConnectionResetError|ClientOSError/, 'connection_reset'],
  [/JSONDecodeError/, 'parse'],
  [/CancelledError/, 'aborted'],
];

/**
 * A stable LoadLab error code for one of vLLM's error strings, and the HTTP status when it is a
 * reason phrase. `known: false` when nothing matched (then `stream_error`, and the import says so).
 */
export function errorCodeOf(message: string): { code: ErrorCode; status?: number; known: boolean } {
  const status = REASONS.get(message.trim().toLowerCase());
  if (status !== undefined && status >= 400) return { code: status < 500 ? 'http_4xx' : 'http_5xx', status, known: true };
  for (const [re, code] of ERROR_PATTERNS) {
    const m = re.exec(message);
    if (m) return { code: m[1] ? (m[1] as ErrorCode) : code, known: true };
  }
  return { code: 'stream_error', known: false };
}

/** What `recordsOfVllm` returns: the records and what the import must say about them. */
export interface VllmRecords {
  records: RequestRecord[];
  /** How the times were made, for `manifest.imported.timing`. */
  timing: string;
  /** Failed requests whose error string matched no known pattern (coded `stream_error`). */
  unrecognisedErrors: number;
  /** The records' own window (earliest intended send to latest end), seconds. */
  recordsWindowS: number;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const nums = (v: unknown): number[] => (Array.isArray(v) ? v.map(num) : []);

/**
 * The requests of a checked result (`lists` from `perRequestLists`) as LoadLab records, in the
 * file's order (vLLM's send order). A request succeeded when its error string is empty and a token
 * arrived (`ttft` > 0 or an ITL); the count must equal the file's `completed`.
 * @throws VllmResultError when `start_times` are absent or the success count disagrees with `completed`.
 */
export function recordsOfVllm(
  r: VllmResult,
  lists: Record<(typeof PER_REQUEST_KEYS)[number], unknown[] | undefined>,
  where: string,
): VllmRecords {
  const starts = lists.start_times;
  if (!starts) {
    throw new VllmResultError(
      `${where} has no start_times (vLLM versions before they were saved): LoadLab cannot place its requests in time ` +
        'and will not invent send times; run vllm bench serve from a vLLM that writes start_times',
    );
  }
  const queue = lists.queue_times;
  const n = starts.length;
  const q = (i: number) => (queue ? num(queue[i]) : 0);
  let origin = Infinity;
  for (let i = 0; i < n; i++) origin = Math.min(origin, num(starts[i]) - q(i));
  const api: Api = String(r.backend ?? r.endpoint_type).includes('chat') ? 'chat' : 'completions';
  const records: RequestRecord[] = [];
  let unrecognisedErrors = 0;
  for (let i = 0; i < n; i++) {
    const rec = recordOf(i, { r, lists, api, startMs: (num(starts[i]) - origin) * MS, queueMs: q(i) * MS });
    if (rec.error && !errorCodeOf(rec.error.message).known) unrecognisedErrors++;
    records.push(rec);
  }
  const completed = records.filter((x) => x.ok).length;
  if (completed !== r.completed) {
    throw new VllmResultError(
      `${where}: ${completed} requests have no error and a token, but the file says completed = ${String(r.completed)}`,
    );
  }
  let first = Infinity;
  let last = -Infinity;
  for (const x of records) {
    first = Math.min(first, x.intendedStartMs);
    last = Math.max(last, x.endMs);
  }
  const timing =
    'reconstructed from vllm bench serve: send = start_times (perf_counter, shifted so the earliest arrival is 0), ' +
    `intended send = send − queue_times${queue ? '' : ' (absent: taken as 0)'}, token chunks = send + ttft + cumulative itls, ` +
    'end = send + latency; TTFT, ITL, latency and token counts are vLLM’s measurements';
  return { records, timing, unrecognisedErrors, recordsWindowS: n > 0 ? (last - first) / MS : 0 };
}

interface RecordInput {
  r: VllmResult;
  lists: Record<(typeof PER_REQUEST_KEYS)[number], unknown[] | undefined>;
  api: Api;
  startMs: number;
  queueMs: number;
}

/** One record: vLLM's measurements (ms) on the reconstructed send time. */
function recordOf(i: number, x: RecordInput): RequestRecord {
  const { lists, startMs, queueMs } = x;
  const errorText = typeof lists.errors![i] === 'string' ? (lists.errors![i] as string) : '';
  const ttftS = num(lists.ttfts![i]);
  const itlS = nums(lists.itls![i]);
  const ok = errorText === '' && (ttftS > 0 || itlS.length > 0);
  const base = {
    index: i,
    requestId: `vllm-bench-${i}`,
    warmup: false,
    api: x.api,
    intendedStartMs: startMs - queueMs,
    startMs,
    queueMs,
    promptTokens: num(lists.input_lens![i]),
  };
  if (!ok) {
    const e = errorCodeOf(errorText);
    const message = errorText || 'vllm bench serve recorded a failure with an empty error string';
    const first = ttftS > 0 ? { firstTokenMs: startMs + ttftS * MS, ttftMs: ttftS * MS } : {};
    return {
      ...base,
      ok: false,
      ...(e.status !== undefined ? { status: e.status } : {}),
      ...first,
      chunkMs: [],
      chunkTokens: [],
      itlMs: [],
      endMs: startMs,
      error: { code: e.code, message },
    };
  }
  const ttftMs = ttftS * MS;
  const latencyS = lists.latencies ? num(lists.latencies[i]) : ttftS + itlS.reduce((a, b) => a + b, 0);
  const chunkMs = [startMs + ttftMs];
  let t = ttftS;
  for (const gap of itlS) chunkMs.push(startMs + (t += gap) * MS);
  const outputTokens = num(lists.output_lens![i]);
  return {
    ...base,
    ok: true,
    firstChunkMs: startMs + ttftMs,
    firstTokenMs: startMs + ttftMs,
    chunkMs,
    chunkTokens: chunkMs.map(() => 1),
    endMs: startMs + latencyS * MS,
    outputTokens,
    ttftMs,
    e2eMs: latencyS * MS,
    ...(outputTokens > 1 ? { tpotMs: ((latencyS - ttftS) / (outputTokens - 1)) * MS } : {}),
    itlMs: itlS.map((g) => g * MS),
    ttftFromIntendedMs: ttftMs + queueMs,
  };
}
