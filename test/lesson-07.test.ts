/**
 * Lesson 07 (replot): its conclusions about two saved runs go through the verdict helpers
 * (issue #13). Rebuilt here from the committed simulated sample (data/sample/, always present),
 * with the notebook's arguments; the executed copy's prose is checked when it is current.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareMetric, compareValues, tradeoffVerdict, verdictSentence } from '../src/lesson/helpers';
import { fromRoot } from '../src/paths';
import { loadRun } from '../src/run/loader';
import { executedProse, proseReady } from './helpers/executed-notebook';
import { comparisonProblems, intervalClauses, verdictProblems } from './helpers/verdict-check';

const SAMPLE = fromRoot('data', 'sample');
const side = (name: string, label: string) => ({ ...loadRun(join(SAMPLE, name)), label });
const shortTtft = (name: string) =>
  loadRun(join(SAMPLE, name))
    .records.filter((r) => !r.warmup && r.ok && r.tag === 'short' && r.ttftMs !== undefined)
    .map((r) => r.ttftMs as number);
const prose = executedProse('07-replot');

describe('lesson 07-replot verdicts (data/sample)', () => {
  it('concurrency 1 vs 8: no verdict claims a difference inside its own interval', () => {
    const c1 = side('c1', 'c=1');
    const c8 = side('c8', 'c=8');
    const tradeoff = tradeoffVerdict(c1, c8, { thresholdPct: 5 });
    const comparisons = [
      tradeoff.latency,
      compareMetric(c1, c8, 'tpotMs', 50, { thresholdPct: 5 }),
      compareMetric(c1, c8, 'ttftMs', 50),
    ];
    for (const c of comparisons) {
      expect(comparisonProblems(c, c.name)).toEqual([]);
      expect(verdictProblems(verdictSentence(c))).toEqual([]);
    }
    for (const s of tradeoff.sentences) expect(verdictProblems(s)).toEqual([]);
    if (tradeoff.finding === 'both') expect(tradeoff.latency.interval[0]).toBeGreaterThan(0);
  });

  it('chunked prefill off vs on: the short-request TTFT verdict stands on its interval', () => {
    const c = compareValues(
      { label: 'off', values: shortTtft('chunked-off') },
      { label: 'on', values: shortTtft('chunked-512-t128') },
      99,
      {
        name: '短请求 TTFT',
      },
    );
    expect(comparisonProblems(c, c.name)).toEqual([]);
    expect(verdictProblems(verdictSentence(c))).toEqual([]);
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
