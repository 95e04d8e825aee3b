/**
 * story-03 / story-04 on hand-built records: the sentences lessons 03 and 04 print say only what
 * their intervals allow, pairing is by request index, and a real vLLM skips the static-batching point.
 */
import { describe, expect, it } from 'vitest';
import {
  compareMetric,
  mixTtftStory,
  NO_STATIC_IN_VLLM,
  pairedMedianChange,
  pairedSentence,
  staticBatchStory,
  type StoryRun,
} from '../src/lesson/helpers';
import type { RequestRecord } from '../src/types';
import { rec, summary } from './helpers/view-fixtures';
import { comparisonProblems, verdictProblems } from './helpers/verdict-check';

/** Short request `i` with TTFT `ttft` and E2E `e2e` (ms) over 16 tokens. */
function short(i: number, ttft: number, e2e: number): RequestRecord {
  const chunks = Array.from({ length: 16 }, (_, k) => ttft + ((e2e - ttft) * k) / 15);
  const r = rec(i, { start: 0, chunks, tag: 'short' });
  r.tpotMs = (e2e - ttft) / 15;
  return r;
}

/** 40 short requests whose TTFT and E2E vary a lot from request to request (arrival-dependent). */
function run(label: string, f: (i: number) => [number, number], extra: RequestRecord[] = []): StoryRun {
  const records = Array.from({ length: 40 }, (_, i) => short(i, ...f(i))).concat(extra);
  return { label, records, summary: summary(1) };
}
const base = (i: number): [number, number] => [100 + ((i * 37) % 11) * 40, 900 + ((i * 53) % 13) * 60];

describe('lesson stories 03/04', () => {
  it('paired: the same requests each 20 ms later to their first token, same end → TTFT higher, TPOT and E2E unchanged', () => {
    const off = run('关闭分块', base);
    const on = run('分块', (i) => [base(i)[0] + 20, base(i)[1] + 1]);
    const story = mixTtftStory(off, on, { thresholdPct: 10 });
    expect(story.ttft50.direction).toBe('higher');
    expect(story.tpot.negligible).toBe(true);
    expect(story.e2e.negligible).toBe(true);
    expect(story.finding).toBe('redistributed');
    // Request-to-request spread hides the same shift from two independent samples.
    const independent = compareMetric({ label: 'a', records: off.records }, { label: 'b', records: on.records }, 'ttftMs', 50);
    expect(independent.interval[1] - independent.interval[0]).toBeGreaterThan(
      story.ttft50.interval[1] - story.ttft50.interval[0],
    );
    for (const c of [story.p99, story.ttft50, story.tpot, story.e2e]) expect(comparisonProblems(c, c.name)).toEqual([]);
    for (const s of story.sentences) expect(verdictProblems(s)).toEqual([]);
  });

  it('paired: E2E 50 % longer and TTFT unchanged → the redistribution claim is refused', () => {
    const off = run('关闭分块', base);
    const on = run('分块', (i) => [base(i)[0], base(i)[1] * 1.5]);
    const story = mixTtftStory(off, on, { thresholdPct: 10 });
    expect(story.e2e.direction).toBe('higher');
    expect(story.e2e.negligible).toBe(false);
    expect(story.finding).not.toBe('redistributed');
    for (const s of story.sentences) expect(verdictProblems(s)).toEqual([]);
  });

  it('pairs by request index only; requests missing from one run are left out', () => {
    const off = run('a', base, [short(99, 5000, 9000)]);
    const on = run('b', base);
    const c = pairedMedianChange(off, on, 'ttftMs', { name: 'TTFT' });
    expect(c.a.n).toBe(40);
    expect(c.diff).toBe(0);
    expect(verdictProblems(pairedSentence(c))).toEqual([]);
  });

  it('a real vLLM skips the static point, with the vLLM source file the reason rests on', () => {
    const cont = run('连续批处理', base);
    const s = staticBatchStory(cont, undefined, { maxNumSeqs: 8, longTokens: 128, shortTokens: 16 });
    expect(s.sentences).toEqual([NO_STATIC_IN_VLLM]);
    expect(NO_STATIC_IN_VLLM).toContain('vllm/v1/core/sched/scheduler.py');
    expect(s.comparisons).toEqual([]);
  });
});
