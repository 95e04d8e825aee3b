/**
 * Lesson 02 (concurrency, N=50 and the Promise pool): the headline phenomena, read from the runs
 * the notebook saved in data/02-concurrency/. Timing on a shared machine is noisy, so every
 * assertion is a ratio with a wide margin, never a tight number. The gradient is lesson 02b
 * (test/lesson-02b.test.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromRoot } from '../src/paths';
import { comparePools, loadtestRow, tableReading, tradeoffVerdict, verdictSentence } from '../src/lesson/helpers';
import type { RequestRecord } from '../src/types';
import { loadRun, type LoadedRun } from '../src/run/loader';
import { executedProse, proseReady } from './helpers/executed-notebook';
import { lessonDataReady } from './helpers/lesson-data';
import { comparisonProblems, intervalClauses, verdictProblems } from './helpers/verdict-check';

const DIR = fromRoot('data', '02-concurrency');
const POOL_LEVELS = [1, 4, 8];
const SKIP =
  'data/02-concurrency/ is missing: execute the lesson first (`npm run lessons`, or `node bin/loadlab.js lessons --only 02-`)';
const ready = lessonDataReady(existsSync(join(DIR, 'n50-c8', 'summary.json')), DIR);

function run(name: string): LoadedRun & { summary: NonNullable<LoadedRun['summary']> } {
  const r = loadRun(join(DIR, name));
  if (!r.summary) throw new Error(`${name} has no summary.json: re-run the lesson`);
  return r as LoadedRun & { summary: NonNullable<LoadedRun['summary']> };
}
const peakInFlight = (r: LoadedRun) => Number((r.manifest.client as Record<string, unknown> | undefined)?.peakInFlight);
/** A saved run as the notebook labels it for its verdict sentences. */
const side = (name: string, label: string) => ({ ...run(name), label });
const prose = executedProse('02-concurrency');

describe.skipIf(!ready)(`lesson 02-concurrency (${ready ? 'saved runs' : SKIP})`, () => {
  it('every point completed, with the warm-up recorded but left out', () => {
    for (const name of POOL_LEVELS.map((c) => `n50-c${c}`)) {
      const r = run(name);
      expect(r.manifest.status, name).toBe('complete');
      expect(r.summary.failed, name).toBe(0);
      expect(r.records.filter((x) => x.warmup).length, name).toBe(2);
      expect(r.summary.requests, name).toBe(r.records.length - 2);
    }
    expect(run('n50-c8').summary.requests).toBe(50);
  });

  it('the pool holds exactly C requests in flight (client peak and server running)', () => {
    for (const c of POOL_LEVELS) {
      const r = run(`n50-c${c}`);
      expect(peakInFlight(r), `n50-c${c}`).toBe(c);
      const running = Math.max(0, ...(r.metrics ?? []).map((m) => m.running ?? 0));
      expect(running, `n50-c${c} server running`).toBeLessThanOrEqual(c);
    }
  });

  it('output throughput rises with concurrency (N=50): c=8 gives at least 3× c=1', () => {
    const t = (c: number) => run(`n50-c${c}`).summary.outputTokensPerSec;
    expect(t(8)).toBeGreaterThanOrEqual(3 * t(1));
    expect(t(4)).toBeGreaterThan(t(1));
  });

  it('TTFT p50 does not fall with concurrency (N=50)', () => {
    const a = (c: number) => run(`n50-c${c}`).summary.ttftMs.p50;
    expect(a(8)).toBeGreaterThan(0.9 * a(1));
  });

  it("wrote loadtest-concurrency.json with the course's columns and each run's health verdict", () => {
    const file = join(DIR, 'loadtest-concurrency.json');
    expect(existsSync(file)).toBe(true);
    const json = JSON.parse(readFileSync(file, 'utf8')) as { runs: string[]; rows: Array<Record<string, unknown>> };
    expect(json.rows.map((r) => r.concurrency)).toEqual(POOL_LEVELS);
    expect(json.runs).toEqual(POOL_LEVELS.map((c) => `n50-c${c}`));
    for (const r of json.rows) {
      const c = r.concurrency as number;
      // The course's summarizeLatency shape, E2E and TTFT kept apart (seed 000).
      for (const k of ['e2eMs', 'ttftMs']) {
        const s = r[k] as Record<string, number>;
        expect(Object.keys(s).sort(), `${k} c=${c}`).toEqual(['mean', 'n', 'p50', 'p95', 'p99']);
        for (const f of ['mean', 'p50', 'p95', 'p99']) expect(Number.isFinite(s[f]), `${k}.${f} c=${c}`).toBe(true);
        expect(s.n, `${k}.n c=${c}`).toBe(50);
        expect(s.p50).toBeLessThanOrEqual(s.p95);
        expect(s.p95).toBeLessThanOrEqual(s.p99);
      }
      expect(['ok', 'client-bound', 'sim-behind', 'client-bound+sim-behind']).toContain(
        (r.health as { verdict: string }).verdict,
      );
      // The file is what the saved run says, recomputed: nothing typed, nothing lost.
      expect(JSON.parse(JSON.stringify(loadtestRow(c, run(`n50-c${c}`))))).toEqual(r);
    }
  });

  it("the learner's Promise.race pool held the same cap as ll.createPool, and its requests are saved", () => {
    const file = join(DIR, 'race-pool-c4.json');
    expect(existsSync(file), 'race-pool-c4.json').toBe(true);
    const hand = JSON.parse(readFileSync(file, 'utf8')) as {
      concurrency: number;
      peakInFlight: number;
      records: RequestRecord[];
    };
    expect(hand.concurrency).toBe(4);
    expect(hand.records.filter((r) => !r.warmup).length).toBe(16);
    expect(hand.records.every((r) => r.ok)).toBe(true);
    expect(hand.peakInFlight).toBe(4);
    const lib = run('n50-c4');
    const cmp = comparePools(
      4,
      { label: 'racePool c=4', records: hand.records, peakInFlight: hand.peakInFlight },
      { label: 'createPool c=4', records: lib.records, peakInFlight: peakInFlight(lib), summary: lib.summary },
    );
    expect(cmp.sameCap).toBe(true);
    expect(comparisonProblems(cmp.e2e, 'racePool vs createPool')).toEqual([]);
    for (const s of cmp.sentences) expect(verdictProblems(s)).toEqual([]);
  });

  // Issue #13: the notebook's conclusions, rebuilt from the saved runs with the same helpers and arguments.
  it('no verdict claims a difference inside its own interval (N=50 trade-off per step, table reading, pools)', () => {
    const c1 = side('n50-c1', 'c=1');
    const c8 = side('n50-c8', 'c=8');
    const tradeoff = tradeoffVerdict(c1, c8, { thresholdPct: 5 });
    const reading = tableReading(c1, c8);
    const steps = [
      tradeoffVerdict(side('n50-c1', 'c=1'), side('n50-c4', 'c=4'), { thresholdPct: 5 }),
      tradeoffVerdict(side('n50-c4', 'c=4'), side('n50-c8', 'c=8'), { thresholdPct: 5 }),
    ];
    const comparisons = [tradeoff.latency, reading.ttft, reading.e2e, ...steps.map((v) => v.latency)];
    for (const c of comparisons) {
      expect(comparisonProblems(c, `${c.name} ${c.a.label}→${c.b.label}`)).toEqual([]);
      expect(verdictProblems(verdictSentence(c))).toEqual([]);
    }
    for (const s of [...tradeoff.sentences, ...reading.sentences, ...steps.flatMap((v) => v.sentences)])
      expect(verdictProblems(s)).toEqual([]);
    for (const v of [tradeoff, ...steps]) if (v.finding === 'both') expect(v.latency.interval[0]).toBeGreaterThan(0);
    if (tradeoff.finding === 'both') expect(tradeoff.latency.interval[0]).toBeGreaterThan(0);
    if (reading.finding === 'prefill-or-queue') expect(reading.ttft.interval[0]).toBeGreaterThan(0);
  });

  it("the course's table-reading rule on the N=50 data: TTFT p50 rises far more than E2E p95 (not decode-bound)", () => {
    expect(tableReading(side('n50-c1', 'c=1'), side('n50-c8', 'c=8')).finding).not.toBe('decode-too');
  });

  it.skipIf(!proseReady(prose))(
    `every interval sentence the executed lesson printed is sound (${'stale' in prose ? prose.stale : 'data/executed'})`,
    () => {
      const md = 'markdown' in prose ? prose.markdown.join('\n') : '';
      expect(intervalClauses(md).length).toBeGreaterThan(0);
      expect(verdictProblems(md)).toEqual([]);
    },
  );
});
