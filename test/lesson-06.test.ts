/**
 * Lesson 06 (prefix caching): read from the runs the notebook saved in data/06-prefix-caching/.
 * Skipped until the lesson has been executed (`npm run lessons`).
 *
 * - Shared system prompt, caching on: the server's prefix-cache hit rate (Δhits/Δqueries from
 *   metrics.jsonl) after the first request is > 80 %, and TTFT p50 is far below the unique-prefix run.
 * - Caching off: zero hits (and zero lookups); unique prefixes: zero hits.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromRoot } from '../src/paths';
import { counterIncrease } from '../src/stats/counters';
import { loadRun, type LoadedRun } from '../src/run/loader';
import { percentile } from '../src/stats/percentile';
import type { MetricsSample } from '../src/types';
import { lessonDataReady } from './helpers/lesson-data';

const dir = fromRoot('data', '06-prefix-caching');
const POINTS = ['unique', 'shared', 'shared-nocache'];
const ready = lessonDataReady(
  POINTS.every((p) => existsSync(join(dir, p, 'summary.json'))),
  dir,
);

function run(point: string): LoadedRun {
  const r = loadRun(join(dir, point));
  expect(r.manifest.status, `${point} did not complete`).toBe('complete');
  return r;
}

const byIndex = (r: LoadedRun) => r.records.filter((x) => !x.warmup && x.ok).sort((a, b) => a.index - b.index);

/** Δhits/Δqueries from the first scrape at or after `fromMs` to the last scrape. */
function hitRateSince(metrics: MetricsSample[], fromMs: number): { queries: number; hits: number } {
  const s = metrics.filter((m) => m.prefixHitsTotal !== undefined && m.prefixQueriesTotal !== undefined);
  const from = s.find((m) => m.tMs >= fromMs)!;
  const last = s[s.length - 1];
  return { queries: last.prefixQueriesTotal! - from.prefixQueriesTotal!, hits: last.prefixHitsTotal! - from.prefixHitsTotal! };
}

describe.skipIf(!ready)(
  `lesson 06 saved runs (${ready ? dir : 'not found: run `npm run lessons` first to execute the notebooks'})`,
  () => {
    it('every request completed', () => {
      for (const p of POINTS) {
        const r = run(p);
        expect(r.summary!.failed, p).toBe(0);
        expect(r.summary!.completed, p).toBe(r.summary!.requests);
      }
    });

    it('shared prefix: hit rate > 80 % after the first request', () => {
      const r = run('shared');
      const first = byIndex(r)[0];
      const { queries, hits } = hitRateSince(r.metrics ?? [], first.firstTokenMs!);
      expect(queries).toBeGreaterThan(0);
      expect(hits / queries).toBeGreaterThan(0.8);
    });

    it('shared prefix: TTFT p50 (after the first request) well below unique prefixes', () => {
      const p50 = (point: string) =>
        percentile(
          byIndex(run(point))
            .slice(1)
            .map((x) => x.ttftMs!),
          50,
        );
      expect(p50('shared')).toBeLessThan(p50('unique') / 3);
      expect(p50('shared')).toBeLessThan(p50('shared-nocache') / 3);
    });

    it('no hits with caching off, and none for unique prefixes', () => {
      const m = (point: string) => run(point).metrics ?? [];
      expect(m('shared-nocache').length).toBeGreaterThan(1);
      expect(counterIncrease(m('shared-nocache'), 'prefixHitsTotal')).toBe(0);
      expect(counterIncrease(m('shared-nocache'), 'prefixQueriesTotal')).toBe(0);
      expect(counterIncrease(m('unique'), 'prefixHitsTotal')).toBe(0);
      expect(counterIncrease(m('unique'), 'prefixQueriesTotal')).toBeGreaterThan(0);
    });
  },
);
