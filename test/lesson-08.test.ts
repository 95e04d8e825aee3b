/**
 * Lesson 08 (simulator vs real): read back what the notebook saved in data/08-sim-vs-real/ and check
 * that every point completed, that the calibration file says what it was fitted against (simulated
 * when it was), that the error table it printed is what the saved runs give, that no sentence claims
 * a difference inside its own interval, and that the target's runs are labelled as the hidden-profile
 * simulator (never as a GPU). Skipped until the lesson has been executed (`npm run lessons`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CALIBRATED_LABEL,
  HIDDEN_TARGET_LABEL,
  compareMetric,
  errorRows,
  errorSentences,
  fitRows,
  recovery,
  targetLabelOf,
  whatIfSentence,
  type CalibratedDocLike,
  type ErrorRow,
} from '../src/lesson/helpers';
import { DEFAULT_PROFILE } from '../src/sim/engine/profile';
import { fromRoot } from '../src/paths';
import { loadRun, type LoadedRun } from '../src/run/loader';
import { percentile } from '../src/stats/percentile';
import { executedProse, proseReady } from './helpers/executed-notebook';
import { lessonDataReady } from './helpers/lesson-data';
import { comparisonProblems, verdictProblems } from './helpers/verdict-check';

const dir = fromRoot('data', '08-sim-vs-real');
const POINTS = ['c1', 'c4', 'c16', 'c64', 'long-short'];
const RUNS = POINTS.flatMap((p) => [`target-${p}`, `cal-${p}`]);
const ready = lessonDataReady(
  RUNS.every((r) => existsSync(join(dir, r, 'summary.json'))) &&
    existsSync(join(dir, 'calibrated-08.json')) &&
    existsSync(join(dir, 'error-table.json')),
  dir,
);

interface Saved {
  thresholdPct: number;
  target: string;
  points: { point: string; target: string; calibrated: string }[];
  rows: ErrorRow[];
  sentences: string[];
  verdicts: string[];
}
const readJson = <T>(file: string): T => JSON.parse(readFileSync(join(dir, file), 'utf8')) as T;
const run = (name: string): LoadedRun => loadRun(join(dir, name));
const measured = (r: LoadedRun) => r.records.filter((x) => !x.warmup && x.ok);
/** Relative error recomputed from the records (TTFT, TPOT) and the summary (throughput), percent. */
function recomputed(t: LoadedRun, c: LoadedRun, metric: string): [number, number] {
  const pick = (r: LoadedRun): number => {
    const xs = (k: 'ttftMs' | 'tpotMs') => measured(r).flatMap((x) => (x[k] === undefined ? [] : [x[k] as number]));
    if (metric.startsWith('TTFT p50')) return percentile(xs('ttftMs'), 50);
    if (metric.startsWith('TTFT p95')) return percentile(xs('ttftMs'), 95);
    if (metric.startsWith('TPOT p50')) return percentile(xs('tpotMs'), 50);
    return r.summary!.outputTokensPerSec;
  };
  return [pick(t), pick(c)];
}

describe.skipIf(!ready)(
  `lesson 08 saved runs (${ready ? dir : 'not found: run `npm run lessons` first to execute the notebooks'})`,
  () => {
    it('every point of both servers completed', () => {
      for (const name of RUNS) {
        const r = run(name);
        expect(r.manifest.status, name).toBe('complete');
        expect(r.summary!.failed, name).toBe(0);
        expect(r.summary!.completed, name).toBe(r.summary!.requests);
      }
    });

    it('the calibration file is calibrated and says what it was fitted against', () => {
      const doc = readJson<{ status: string; calibration: { against: { simulated: boolean; simProfile?: string } } }>(
        'calibrated-08.json',
      );
      expect(doc.status).toBe('calibrated');
      const targetSimulated = run('target-c1').manifest.target.simulated;
      expect(doc.calibration.against.simulated).toBe(targetSimulated);
      if (targetSimulated) expect(doc.calibration.against.simProfile ?? '').toMatch(/^hidden-/);
    });

    it('the target runs are labelled from their manifests: the hidden-profile simulator, never a GPU', () => {
      const saved = readJson<Saved>('error-table.json');
      for (const p of POINTS) {
        const t = run(`target-${p}`).manifest.target;
        const c = run(`cal-${p}`).manifest.target;
        expect(c.simulated, p).toBe(true);
        expect(targetLabelOf(c), p).toBe(CALIBRATED_LABEL);
        if (t.simulated) {
          expect(t.simProfile?.id ?? '', p).toMatch(/^hidden-/);
          expect(targetLabelOf(t), p).toBe(HIDDEN_TARGET_LABEL);
        } else expect(targetLabelOf(t), p).toMatch(/^真实 vLLM/);
      }
      expect(saved.target).toBe(targetLabelOf(run('target-c1').manifest.target));
    });

    it('the error table the notebook printed is what the saved runs give', () => {
      const saved = readJson<Saved>('error-table.json');
      expect(saved.rows.length).toBe(4 * POINTS.length);
      for (const row of saved.rows) {
        const pair = saved.points.find((p) => p.point === row['负载点 point'])!;
        const [t, c] = recomputed(run(pair.target), run(pair.calibrated), row['指标 metric']);
        const what = `${row['负载点 point']} ${row['指标 metric']}`;
        expect(row['目标 target'], what).toBeCloseTo(t, 6);
        expect(row['标定模拟器 calibrated'], what).toBeCloseTo(c, 6);
        expect(row['相对误差 relative error (%)'], what).toBeCloseTo((100 * (c - t)) / t, 6);
      }
      // The threshold sentence counts what the table holds.
      const inside = saved.rows.filter((r) => Math.abs(r['相对误差 relative error (%)']) <= saved.thresholdPct).length;
      expect(saved.sentences[0]).toContain(`${saved.rows.length} 个数里，${inside} 个`);
    });

    it('no sentence claims a difference inside its own interval', () => {
      const saved = readJson<Saved>('error-table.json');
      for (const s of [...saved.sentences, ...saved.verdicts]) expect(verdictProblems(s), s).toEqual([]);
      for (const p of saved.points) {
        for (const m of ['ttftMs', 'tpotMs'] as const) {
          const c = compareMetric({ label: '目标', ...run(p.target) }, { label: '标定模拟器', ...run(p.calibrated) }, m, 50, {
            thresholdPct: saved.thresholdPct,
          });
          expect(comparisonProblems(c, `${p.point} ${m}`)).toEqual([]);
        }
      }
      const prose = executedProse('08-sim-vs-real');
      if (proseReady(prose)) for (const text of prose.markdown) expect(verdictProblems(text)).toEqual([]);
    });
  },
);

describe('lesson 08 story builders', () => {
  const dist = (p50: number, p95: number) => ({ p50, p95 }) as never;
  const summary = (ttft: number, tput: number) => ({
    ttftMs: dist(ttft, 2 * ttft),
    tpotMs: dist(10, 12),
    outputTokensPerSec: tput,
  });

  it('labels the hidden-profile simulator as a simulator standing in for a GPU, never as a GPU', () => {
    expect(targetLabelOf({ simulated: true, simProfile: { id: 'hidden-unknown-gpu-8' } })).toBe(HIDDEN_TARGET_LABEL);
    expect(targetLabelOf({ simulated: true, simProfile: { id: 'x', status: 'calibrated' } })).toBe(CALIBRATED_LABEL);
    expect(targetLabelOf({ simulated: undefined, simProfile: { id: 'l40s' } })).toContain('模拟器');
    expect(targetLabelOf({ simulated: false, serverVersion: '0.11.0' })).toBe('真实 vLLM 0.11.0');
  });

  it('error rows and threshold sentences: counts from the table, no "higher/lower" claim without an interval', () => {
    const rows = errorRows([
      { point: 'c=1', target: summary(100, 1000), calibrated: summary(102, 990) },
      { point: 'c=4', target: summary(100, 1000), calibrated: summary(150, 1000) },
    ]);
    expect(rows).toHaveLength(8);
    expect(rows[0]['相对误差 relative error (%)']).toBeCloseTo(2, 9);
    const s = errorSentences(rows, 5, ['c=4 目标 测量时模拟器落后于实时']);
    const inside = rows.filter((r) => Math.abs(r['相对误差 relative error (%)']) <= 5).length;
    expect(s[0]).toContain(`8 个数里，${inside} 个`);
    expect(s[0]).toContain('c=4 的 TTFT p50 (ms)：50.0%');
    expect(s.join('')).not.toMatch(/比 \S+ [高低] /);
    expect(s.join('')).toContain('请以 p50 为准');
  });

  it('the fit table keeps unidentified parameters at their reason, and recovery compares identified ones only', () => {
    const perf = DEFAULT_PROFILE.perf as unknown as Record<string, number>;
    const doc: CalibratedDocLike = {
      status: 'calibrated',
      perf: Object.fromEntries(
        Object.entries(perf).map(([k, v]) => [
          k,
          { value: v * 1.01, note: `NOT IDENTIFIED by loadlab calibrate (collinear with x); prior ${v}` },
        ]),
      ),
      calibration: {
        against: { simulated: true },
        intervals: { etaWeights: { low: perf.etaWeights, high: perf.etaWeights * 1.02 } },
        notIdentified: ['stepOverheadMs'],
      },
    };
    const rows = fitRows(doc, DEFAULT_PROFILE.perf);
    expect(rows.find((r) => r['参数 parameter'] === 'etaWeights')!['认出 identified']).toBe('是');
    expect(rows.find((r) => r['参数 parameter'] === 'stepOverheadMs')!['认出 identified']).toBe('否：collinear with x');
    const rec = recovery(doc, DEFAULT_PROFILE.perf);
    expect(rec.n).toBe(1);
    expect(rec.worstPct).toBeCloseTo(1, 6);
    expect(rec.covered).toBe(1);
    expect(rec.sentence).toContain('循环');
  });

  it('the what-if is labelled a prediction and judged against the stated threshold', () => {
    const small = whatIfSentence({ budgets: [2048, 8192], calibrated: [100, 102], thresholdPct: 5 });
    expect(small).toContain('预测');
    expect(small).toContain('之内');
    const big = whatIfSentence({ budgets: [2048, 8192], calibrated: [100, 80], hidden: [100, 81], thresholdPct: 5 });
    expect(big).toContain('超出');
    expect(big).toContain('隐藏配置');
  });
});
