/**
 * What a line of `requests.jsonl` must look like to be used as a `RequestRecord`, and the
 * duplicate check. A record that fails is skipped whole (and reported by the loader with its line
 * number), so one damaged line can never make `summarizeRun` or `recordsToDataFrame` throw for
 * the others.
 */

import type { RequestRecord } from '../types';

/** Optional numeric fields; `null` is how JSON stores NaN, so it is allowed. */
const OPTIONAL_NUMBERS = [
  'status',
  'intendedStartMs',
  'headersMs',
  'firstChunkMs',
  'firstTokenMs',
  'promptTokens',
  'outputTokens',
  'cachedTokens',
  'ttftMs',
  'e2eMs',
  'tpotMs',
  'queueMs',
  'ttftFromIntendedMs',
] as const;
/** Optional arrays of finite numbers. */
const NUMBER_ARRAYS = ['chunkMs', 'chunkTokens', 'itlMs'] as const;
/** Optional strings. */
const STRINGS = ['requestId', 'api', 'tag', 'finishReason', 'session'] as const;

function show(v: unknown): string {
  const s =
    typeof v === 'string'
      ? JSON.stringify(v)
      : Array.isArray(v)
        ? 'an array'
        : v === null
          ? 'null'
          : typeof v === 'object'
            ? 'an object'
            : String(v);
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}

/**
 * Why a parsed JSON line is not a usable record, or undefined if it is one. Checks the required
 * fields (`index` an integer ≥ 0, `startMs`/`endMs` numbers, `ok` a boolean) and the type of every
 * optional field the statistics and tables read, e.g. `'itlMs' must be an array of numbers, got 5`.
 */
export function recordProblem(v: unknown): string | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'not a JSON object';
  const r = v as Record<string, unknown>;
  for (const f of ['index', 'startMs', 'endMs'] as const) {
    if (typeof r[f] !== 'number')
      return r[f] === undefined ? `missing number '${f}'` : `'${f}' must be a number, got ${show(r[f])}`;
  }
  if (!Number.isInteger(r.index) || (r.index as number) < 0) return `'index' must be an integer ≥ 0, got ${show(r.index)}`;
  if (typeof r.ok !== 'boolean')
    return r.ok === undefined ? `missing boolean 'ok'` : `'ok' must be true or false, got ${show(r.ok)}`;
  if (r.warmup !== undefined && r.warmup !== null && typeof r.warmup !== 'boolean') {
    return `'warmup' must be true or false, got ${show(r.warmup)}`;
  }
  for (const f of OPTIONAL_NUMBERS) {
    const x = r[f];
    if (x !== undefined && x !== null && typeof x !== 'number') return `'${f}' must be a number, got ${show(x)}`;
  }
  for (const f of NUMBER_ARRAYS) {
    const x = r[f];
    if (x === undefined || x === null) continue;
    if (!Array.isArray(x) || !x.every((g) => typeof g === 'number')) return `'${f}' must be an array of numbers, got ${show(x)}`;
  }
  for (const f of STRINGS) {
    const x = r[f];
    if (x !== undefined && x !== null && typeof x !== 'string') return `'${f}' must be a string, got ${show(x)}`;
  }
  const turn = r.turn; // multi-turn runs only; older runs have none
  if (turn !== undefined && turn !== null && !(Number.isInteger(turn) && (turn as number) >= 0)) {
    return `'turn' must be an integer ≥ 0, got ${show(turn)}`;
  }
  const e = r.error;
  if (e !== undefined && e !== null && (typeof e !== 'object' || typeof (e as { code?: unknown }).code !== 'string')) {
    return `'error' must be an object with a string 'code', got ${show(e)}`;
  }
  return undefined;
}

/**
 * A checker that flags the second and later lines of the same request (same `requestId`, else
 * same `index`), e.g. a file concatenated twice: `duplicate of line 3 (request id 'r2')`.
 * Call it with each accepted record and its 1-based line, in file order.
 */
export function duplicateChecker(): (record: Record<string, unknown>, line: number) => string | undefined {
  const seen = new Map<string, number>();
  return (record, line) => {
    const id = typeof record.requestId === 'string' ? `id:${record.requestId}` : `index:${String(record.index)}`;
    const first = seen.get(id);
    if (first !== undefined) {
      const what = id.startsWith('id:') ? `request id '${record.requestId}'` : `index ${String(record.index)}`;
      return `duplicate of line ${first} (${what}); the request is counted once`;
    }
    seen.set(id, line);
    return undefined;
  };
}

/** Back to the record type: NaN written as null → undefined for optional numbers, NaN for required. */
export function reviveRecord(raw: Record<string, unknown>): RequestRecord {
  for (const [k, v] of Object.entries(raw)) if (v === null) delete raw[k];
  const r = raw as unknown as RequestRecord;
  r.warmup ??= false;
  r.chunkMs ??= [];
  r.chunkTokens ??= [];
  r.itlMs ??= [];
  r.intendedStartMs ??= NaN;
  r.queueMs ??= NaN;
  return r;
}
