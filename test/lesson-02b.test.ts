/**
 * Lesson 02b (the concurrency gradient and capacity): the headline phenomena, read from the runs
 * the notebook saved in data/02b-gradient/. Timing on a shared machine is noisy, so every
 * assertion is a ratio with a wide margin, never a tight number.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromRoot } from '../src/paths';
import { compareMetric, gradientSentences, tableReading, trendVerdict, verdictSentence } from '../src/lesson/helpers';
import { loadRun, type LoadedRun } from '../src/run/loader';
import { findSaturation, scalingPoints, scalingTitle } from '../src/view/charts-scaling';
import { executedProse, proseReady } from './helpers/executed-notebook';
import { lessonDataReady } from './helpers/lesson-data';
import { comparisonProblems, intervalClauses, verdictProblems } from './helpers/verdict-check';

const DIR = fromRoot('data', '02b-gradient');
const GRADIENT = [1, 8, 16, 32, 64, 128, 256];
const SKIP =
  'data/02b-gradient/ is missing: execute the lesson first (`npm run lessons`, or `node bin/loadlab.js lessons --only 02b`)';
const ready = lessonDataReady(existsSync(join(DIR, 'grad-c256', 'summary.json')), DIR);

type Run = LoadedRun & { summary: NonNullable<LoadedRun['summary']> };
function run(name: string): Run {
  const r = loadRun(join(DIR, name));
  if (!r.summary) throw new Error(`${name} has no summary.json: re-run the lesson`);
  return r as Run;
}
const peakInFlight = (r: LoadedRun) => Number((r.manifest.client as Record<string, unknown> | undefined)?.peakInFlight);
const tput = (c: number) => run(`grad-c${c}`).summary.outputTokensPerSec;
const side = (c: number) => ({ ...run(`grad-c${c}`), label: `c=${c}` });
const points = () => scalingPoints(GRADIENT.map((c) => ({ concurrency: c, summary: run(`grad-c${c}`).summary })));
const prose = executedProse('02b-gradient');

describe.skipIf(!ready)(`lesson 02b-gradient (${ready ? 'saved runs' : SKIP})`, () => {
  it('the gradient runs from 1 to 256, every point complete, at least three waves from c=128 up', () => {
    for (const c of GRADIENT) {
      const r = run(`grad-c${c}`);
      expect(r.manifest.status, `c=${c}`).toBe('complete');
      expect(r.summary.failed, `c=${c}`).toBe(0);
      expect(r.records.filter((x) => x.warmup).length, `c=${c}`).toBe(2);
      if (c >= 128) expect(r.summary.requests, `c=${c}`).toBeGreaterThanOrEqual(3 * c);
      // ignore_eos + min_tokens: every measured answer has exactly max_tokens tokens.
      for (const x of r.records.filter((y) => !y.warmup)) expect(x.outputTokens, `c=${c}`).toBe(128);
    }
  });

  it('the pool holds exactly C requests in flight (client peak and server running)', () => {
    for (const c of GRADIENT) {
      const r = run(`grad-c${c}`);
      expect(peakInFlight(r), `grad-c${c}`).toBe(c);
      const running = Math.max(0, ...(r.metrics ?? []).map((m) => m.running ?? 0));
      expect(running, `grad-c${c} server running`).toBeLessThanOrEqual(c);
    }
  });

  it('output throughput rises with concurrency: c=256 gives at least 5× c=1, and no step loses much', () => {
    expect(tput(256)).toBeGreaterThanOrEqual(5 * tput(1));
    for (let i = 1; i < GRADIENT.length; i++) {
      expect(tput(GRADIENT[i]), `c=${GRADIENT[i]} vs c=${GRADIENT[i - 1]}`).toBeGreaterThan(0.85 * tput(GRADIENT[i - 1]));
    }
  });

  it('throughput flattens: the last doubling (128→256) adds far less than the first ones', () => {
    // A busy-machine point comes out slow, so each side takes the estimate one slow point cannot
    // fake: the larger early gain and the smaller late gain.
    const gain = (a: number, b: number) => (tput(b) / tput(a)) ** (1 / Math.log2(b / a)) - 1;
    const firstGain = Math.max(gain(1, 8), gain(1, 16));
    const lastGain = Math.min(gain(128, 256), gain(64, 256));
    expect(firstGain).toBeGreaterThan(0.5);
    expect(lastGain).toBeLessThan(0.5 * firstGain);
  });

  it("the headline chart's title is computed from these runs (and says what the data say)", () => {
    const file = join(DIR, 'charts', 'throughput-vs-concurrency.html');
    expect(existsSync(file)).toBe(true);
    // The title sits in the page's <title> (HTML-escaped) and in plotly's JSON (\u003c for '<').
    const html = readFileSync(file, 'utf8')
      .replace(/\\u003c/g, '<')
      .replace(/&lt;/g, '<');
    const title = scalingTitle(points(), { gainBelow: 0.1 });
    expect(html.includes(title), title).toBe(true);
    const sat = findSaturation(points(), { gainBelow: 0.1 });
    if (sat === undefined) expect(title).toContain('未见平台');
    else expect(title).toContain(`c=${sat}`);
    expect(html).not.toContain('then flattens');
  });

  it('TTFT p50 rises with concurrency', () => {
    const p50 = (c: number) => run(`grad-c${c}`).summary.ttftMs.p50;
    expect(p50(256)).toBeGreaterThan(2 * p50(1));
    for (const c of [16, 32, 64, 128, 256]) expect(p50(c), `c=${c}`).toBeGreaterThan(p50(1));
  });

  // Issue #13: the notebook's conclusions, rebuilt from the saved runs with the same helpers and arguments.
  it('no verdict claims a difference inside its own interval (trend, ends, table reading per step)', () => {
    const grad = GRADIENT.map(side);
    const trend = trendVerdict(grad, 'ttftMs', 50);
    const ends = [
      compareMetric(grad[0], grad[grad.length - 1], 'ttftMs', 99),
      compareMetric(grad[0], grad[grad.length - 1], 'e2eMs', 95),
    ];
    const readings = [...grad.slice(1).map((b, i) => tableReading(grad[i], b)), tableReading(grad[0], grad[grad.length - 1])];
    const comparisons = [...trend.steps, ...ends, ...readings.flatMap((r) => [r.ttft, r.e2e])];
    for (const c of comparisons) {
      expect(comparisonProblems(c, `${c.name} ${c.a.label}→${c.b.label}`)).toEqual([]);
      expect(verdictProblems(verdictSentence(c))).toEqual([]);
    }
    for (const s of [...trend.sentences, ...readings.flatMap((r) => r.sentences)]) expect(verdictProblems(s)).toEqual([]);
    if (trend.rising) for (const s of trend.steps) expect(s.interval[0]).toBeGreaterThan(0);
    for (const r of readings) if (r.finding === 'prefill-or-queue') expect(r.ttft.interval[0]).toBeGreaterThan(0);
    const sentences = gradientSentences(
      GRADIENT.map((c) => ({ concurrency: c, run: run(`grad-c${c}`) })),
      { strictGain: 0.1, kneeGain: 0.6, ratios: [1], saturation: findSaturation(points(), { gainBelow: 0.1 }) },
    );
    for (const s of sentences) expect(verdictProblems(s)).toEqual([]);
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
