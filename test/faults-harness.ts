/**
 * Shared pieces of the fault tests (test/faults-*.test.ts): read the simulator's injected-fault
 * counters, tally client error codes, read a run folder back, grep it for a secret, and watch
 * for unhandled rejections.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createFaults, FAULT_KINDS, type FaultKind, type FaultSettings } from '../src/sim/http/faults';
import type { Reply, RequestInfo } from '../src/sim/http/reply';
import type { RequestRecord } from '../src/types';

/** A distinctive fake API key: it must never appear in anything LoadLab writes. */
export const FAKE_KEY = 'sk-test-LoadLabHygiene-7f3e9a1c5b';

/** `loadlab:sim_faults_injected_total` by kind, read from `/metrics`. */
export async function injectedOnMetrics(baseUrl: string): Promise<Record<FaultKind, number>> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const out = {} as Record<FaultKind, number>;
  for (const k of FAULT_KINDS) {
    const line = text.split('\n').find((l) => l.startsWith('loadlab:sim_faults_injected_total{') && l.includes(`kind="${k}"`));
    out[k] = line ? Number(line.split(' ').pop()) : Number.NaN;
  }
  return out;
}

/** Per-kind difference `after − before`. */
export function delta(after: Record<FaultKind, number>, before: Record<FaultKind, number>): Record<FaultKind, number> {
  return Object.fromEntries(FAULT_KINDS.map((k) => [k, after[k] - before[k]])) as Record<FaultKind, number>;
}

/** How many records have each error code (`ok` for successes), plus 500/503 split by status. */
export function tally(records: RequestRecord[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of records) {
    const key = r.ok ? 'ok' : r.error!.code === 'http_5xx' ? `http_${r.status}` : r.error!.code;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/**
 * The fault counts the simulator will inject into its first `n` completion requests after a
 * (re)seed with `seed`: the same decisions, drawn by a local injector through its hooks.
 */
export async function predictedCounts(settings: FaultSettings, seed: number, n: number): Promise<Record<FaultKind, number>> {
  const f = createFaults({ settings: { ...settings, slowHeadersS: 0, stallS: 0 }, seed }); // same draws, no waiting
  const info: RequestInfo = { method: 'POST', path: '/v1/completions', headers: {} };
  for (let i = 0; i < n; i++) {
    const sink = recordingReply();
    const r = f.hooks.wrap!(sink, info);
    if (!(await f.hooks.intercept!(r, info))) {
      // Stream far enough for a mid-stream fault to strike.
      r.startStream();
      for (let k = 0; k < 4; k++) r.event('{"choices":[]}');
      r.done();
    }
    sink.abortAll();
  }
  f.close();
  return f.injected();
}

/** A `Reply` that only records calls (for driving the fault hooks without a socket). */
export function recordingReply(): Reply & { calls: string[]; abortAll(): void } {
  const calls: string[] = [];
  const aborts: Array<() => void> = [];
  let closed = false;
  return {
    calls,
    abortAll() {
      closed = true;
      for (const fn of aborts.splice(0)) fn();
    },
    get closed() {
      return closed;
    },
    onAbort(fn) {
      aborts.push(fn);
    },
    json(status) {
      calls.push(`json ${status}`);
      closed = true;
    },
    text(status) {
      calls.push(`text ${status}`);
      closed = true;
    },
    error(err) {
      calls.push(`error ${err.status}`);
      closed = true;
    },
    startStream() {
      calls.push('start');
    },
    event(json) {
      calls.push(`event ${json}`);
    },
    streamError(err) {
      calls.push(`streamError ${err.status}`);
    },
    done() {
      calls.push('done');
      closed = true;
    },
    destroy() {
      calls.push('destroy');
      closed = true;
    },
  };
}

/** The records of a run folder's `requests.jsonl`. */
export function readRecords(dir: string): RequestRecord[] {
  return readFileSync(join(dir, 'requests.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RequestRecord);
}

/** Every file under `dir` (recursive) whose bytes contain `needle`. */
export function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (readFileSync(p).includes(needle)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

/** Collects `unhandledRejection`s from now until `stop()`. */
export function watchRejections(): { seen: unknown[]; stop(): void } {
  const seen: unknown[] = [];
  const fn = (reason: unknown) => seen.push(reason);
  process.on('unhandledRejection', fn);
  return { seen, stop: () => process.off('unhandledRejection', fn) };
}
