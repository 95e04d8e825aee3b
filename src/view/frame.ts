/**
 * Records as a table: one flat row per request (`recordRow`, no dependencies) and a danfojs
 * DataFrame of those rows (`recordsToDataFrame`).
 *
 * danfojs pulls in TensorFlow.js, which takes seconds to import, so it is loaded on the first
 * call of `recordsToDataFrame` and never by merely importing LoadLab. The load goes through
 * `createRequire` rooted at the package (not `import.meta`, not a bare `require`), which works
 * the same under tsx/vitest (ESM) and under tslab (CommonJS loaded through `require(esm)`).
 */

import { createRequire } from 'node:module';
import type { DataFrame } from 'danfojs';
import { fromRoot } from '../paths';
import type { RequestRecord } from '../types';

/**
 * Columns of `recordsToDataFrame`, in order, with their danfo dtypes. The record's `index` is the
 * column `requestIndex`: danfo makes every column a property of the frame, and a column named
 * `index` would shadow `DataFrame.index` and break `print()`, `loc` and plotting.
 */
export const RECORD_COLUMNS = {
  requestIndex: 'int32',
  requestId: 'string',
  tag: 'string',
  warmup: 'boolean',
  ok: 'boolean',
  status: 'float32',
  errorCode: 'string',
  intendedStartMs: 'float32',
  startMs: 'float32',
  firstTokenMs: 'float32',
  endMs: 'float32',
  ttftMs: 'float32',
  tpotMs: 'float32',
  e2eMs: 'float32',
  queueMs: 'float32',
  ttftFromIntendedMs: 'float32',
  promptTokens: 'float32',
  outputTokens: 'float32',
  cachedTokens: 'float32',
  finishReason: 'string',
  chunks: 'int32',
  itlMeanMs: 'float32',
  itlMaxMs: 'float32',
} as const;

/** A row of `recordsToDataFrame`: numbers (NaN when missing), strings (null when missing), booleans. */
export type RecordRow = Record<keyof typeof RECORD_COLUMNS, number | string | boolean | null>;

/** One flat row per record (the DataFrame's rows, usable without danfo). */
export function recordRow(r: RequestRecord): RecordRow {
  const num = (v: number | undefined) => (typeof v === 'number' ? v : NaN);
  // null, not undefined: danfo cannot read back a column whose first value is undefined.
  const str = (v: string | undefined) => (typeof v === 'string' ? v : null);
  const itl = Array.isArray(r.itlMs) ? r.itlMs : [];
  let sum = 0;
  let max = -Infinity;
  for (const g of itl) {
    sum += g;
    if (g > max) max = g;
  }
  return {
    requestIndex: r.index,
    requestId: str(r.requestId),
    tag: str(r.tag),
    warmup: r.warmup,
    ok: r.ok,
    status: num(r.status),
    errorCode: str(r.error?.code),
    intendedStartMs: num(r.intendedStartMs),
    startMs: num(r.startMs),
    firstTokenMs: num(r.firstTokenMs),
    endMs: num(r.endMs),
    ttftMs: num(r.ttftMs),
    tpotMs: num(r.tpotMs),
    e2eMs: num(r.e2eMs),
    queueMs: num(r.queueMs),
    ttftFromIntendedMs: num(r.ttftFromIntendedMs),
    promptTokens: num(r.promptTokens),
    outputTokens: num(r.outputTokens),
    cachedTokens: num(r.cachedTokens),
    finishReason: str(r.finishReason),
    chunks: Array.isArray(r.chunkMs) ? r.chunkMs.length : 0,
    itlMeanMs: itl.length ? sum / itl.length : NaN,
    itlMaxMs: itl.length ? max : NaN,
  };
}

type Danfo = typeof import('danfojs');
let danfo: Danfo | undefined;

/** danfojs, loaded on first use (seconds: it loads TensorFlow.js). */
export function loadDanfo(): Danfo {
  if (!danfo) {
    const req = createRequire(fromRoot('package.json'));
    danfo = req('danfojs') as Danfo;
  }
  return danfo;
}

/**
 * danfojs DataFrame with one row per record, in the given order (row labels 0..n−1), and the
 * scalar columns of `RECORD_COLUMNS` (`requestIndex` = the record's `index`; times in ms on the
 * run clock; `chunks` = token chunks; `itlMeanMs`/`itlMaxMs` over the record's gaps). Missing
 * numbers are NaN so numeric columns stay numeric; missing strings are null. Danfo labels float
 * columns `float32` but keeps the JS doubles. Zero records → 0 rows, same columns. The first call
 * loads danfojs (a few seconds).
 */
export function recordsToDataFrame(records: readonly RequestRecord[]): DataFrame {
  const { DataFrame: Frame } = loadDanfo();
  const columns = Object.keys(RECORD_COLUMNS) as Array<keyof typeof RECORD_COLUMNS>;
  const dtypes = columns.map((c) => RECORD_COLUMNS[c]);
  if (records.length === 0) return new Frame([], { columns, dtypes });
  const rows = records.map(recordRow);
  const data: Record<string, unknown[]> = {};
  for (const c of columns) data[c] = rows.map((row) => row[c]);
  return new Frame(data, { columns, dtypes });
}
