/**
 * Lesson 08 (simulator vs real): the narrative builders. How a run's target reads (the hidden-profile
 * simulator is never called a GPU), the fit table from a saved calibrated profile file, how far a fit
 * to a simulator came from the values it hid, the error table (target vs calibrated simulator, per
 * point and metric) and its sentences against a stated threshold, and the what-if sentence (a
 * prediction). Pure functions over saved data; every sentence is Simplified Chinese.
 */
import type { RunSummary } from '../types';
import { FIT_PARAMS, type FitParam } from '../fit/step-model';
import { fmtNumber } from './verdict';

/** How the lesson names a simulator started with a hidden "unknown GPU" profile: never a GPU. */
export const HIDDEN_TARGET_LABEL = '模拟器（隐藏配置，代替真实 GPU）';
/** How the lesson names the simulator started from the calibrated profile file. */
export const CALIBRATED_LABEL = '标定后的模拟器（calibrated sim）';

/** The parts of a run manifest's `target` that say what served it. */
export interface TargetLike {
  simulated?: boolean;
  serverVersion?: string;
  simProfile?: { id: string; status?: string };
}

/**
 * The label of a run's server, from its manifest: the hidden-profile simulator (id `hidden-…`),
 * the calibrated simulator (status `calibrated`), another simulator profile, or a real vLLM.
 */
export function targetLabelOf(t: TargetLike): string {
  if (t.simulated !== false) {
    const id = t.simProfile?.id ?? '';
    if (id.startsWith('hidden-')) return HIDDEN_TARGET_LABEL;
    if (t.simProfile?.status === 'calibrated') return CALIBRATED_LABEL;
    return `模拟器（${id || '未知配置'}）`;
  }
  return `真实 vLLM${t.serverVersion ? ` ${t.serverVersion}` : ''}`;
}

/** The parts of a calibrated profile file (`loadlab-sim-profile/1`, status `calibrated`) the lesson reads. */
export interface CalibratedDocLike {
  status?: string;
  perf: Record<string, { value: number; unit?: string; note?: string }>;
  calibration: {
    against: { simulated?: boolean; simProfile?: string; model?: string; startedAt?: string; wallSeconds?: number };
    intervals: Record<string, { low: number; high: number }>;
    notIdentified: string[];
  };
}

/** One row of the fit table (Chinese headers). */
export type FitRow = {
  '参数 parameter': string;
  '单位 unit': string;
  '先验 prior': string;
  '拟合值 fitted': string;
  '95% 区间 interval': string;
  '认出 identified': string;
};

const num = (v: number) => (Math.abs(v) >= 1e6 ? v.toExponential(3) : String(Number(v.toPrecision(4))));

/** The reason a parameter was not identified, from its note in the file (`NOT IDENTIFIED by … (reason); …`). */
function reasonOf(note: string | undefined): string {
  const m = /NOT IDENTIFIED by loadlab calibrate \((.*?)\); prior/.exec(note ?? '');
  return m ? m[1] : '见文件里的 note';
}

/** The fit table: one row per fitted parameter, prior from `prior` (the prior profile's perf values). */
export function fitRows(doc: CalibratedDocLike, prior: Readonly<Record<FitParam, number>>): FitRow[] {
  const missing = new Set(doc.calibration.notIdentified);
  return FIT_PARAMS.filter((p) => doc.perf[p.name] !== undefined).map((p) => {
    const iv = doc.calibration.intervals[p.name];
    const ok = !missing.has(p.name) && iv !== undefined;
    return {
      '参数 parameter': p.name,
      '单位 unit': p.unit,
      '先验 prior': num(prior[p.name]),
      '拟合值 fitted': num(doc.perf[p.name].value),
      '95% 区间 interval': ok ? `[${num(iv.low)}, ${num(iv.high)}]` : '—',
      '认出 identified': ok ? '是' : `否：${reasonOf(doc.perf[p.name].note)}`,
    };
  });
}

/** How far a fit to the hidden-profile simulator came from the values it hid. */
export interface Recovery {
  /** Identified parameters compared. */
  n: number;
  /** The largest |fitted / hidden − 1|, percent, and its parameter. */
  worstPct: number;
  worst: string;
  /** Identified parameters whose hidden value lies inside the fit's 95 % interval. */
  covered: number;
  sentence: string;
}

/** Compare the identified fitted values with the hidden ones (only possible on a simulator: a GPU hides no answer key). */
export function recovery(doc: CalibratedDocLike, hidden: Readonly<Record<FitParam, number>>): Recovery {
  const names = FIT_PARAMS.map((p) => p.name).filter(
    (n) => !doc.calibration.notIdentified.includes(n) && doc.calibration.intervals[n] && hidden[n] !== undefined,
  );
  let worstPct = 0;
  let worst = '—';
  let covered = 0;
  for (const n of names) {
    const e = 100 * Math.abs(doc.perf[n].value / hidden[n] - 1);
    if (e >= worstPct) [worstPct, worst] = [e, n];
    const iv = doc.calibration.intervals[n];
    if (hidden[n] >= iv.low && hidden[n] <= iv.high) covered++;
  }
  const skipped = doc.calibration.notIdentified;
  const sentence =
    `标定认出（identified）的 ${names.length} 个参数，与隐藏配置的真值相差最多 ${fmtNumber(worstPct)}%（${worst}），` +
    `其中 ${covered} 个真值落在各自的 95% 区间里` +
    (skipped.length ? `；${skipped.length} 个参数没有被认出（${skipped.join('、')}），它们的值不是测量。` : '。') +
    '这是循环的：用模拟器去拟合模拟器，步长模型的形式本来就对，找回参数是构造使然；它演示的是方法，不是对任何 GPU 的精度。' +
    '在真卡上没有这张“答案表”，能检验的只有下面的误差表。';
  return { n: names.length, worstPct, worst, covered, sentence };
}

/** Summary fields the error table reads. */
export type SummaryLike = Pick<RunSummary, 'ttftMs' | 'tpotMs' | 'outputTokensPerSec'>;

/** The error table's metrics: header and how to read it from a summary. */
export const ERROR_METRICS: readonly { metric: string; value: (s: SummaryLike) => number }[] = [
  { metric: 'TTFT p50 (ms)', value: (s) => s.ttftMs.p50 },
  { metric: 'TTFT p95 (ms)', value: (s) => s.ttftMs.p95 },
  { metric: 'TPOT p50 (ms)', value: (s) => s.tpotMs.p50 },
  { metric: '输出吞吐 output (tok/s)', value: (s) => s.outputTokensPerSec },
];

/** One row of the error table. */
export type ErrorRow = {
  '负载点 point': string;
  '指标 metric': string;
  '目标 target': number;
  '标定模拟器 calibrated': number;
  '相对误差 relative error (%)': number;
};

/** Relative error of the calibrated simulator against the target, percent: 100 · (cal − target) / target. */
export function relativeErrorPct(target: number, calibrated: number): number {
  return (100 * (calibrated - target)) / target;
}

/** The error table: per point and metric, target vs calibrated simulator and the relative error. */
export function errorRows(points: readonly { point: string; target: SummaryLike; calibrated: SummaryLike }[]): ErrorRow[] {
  return points.flatMap((p) =>
    ERROR_METRICS.map((m) => {
      const t = m.value(p.target);
      const c = m.value(p.calibrated);
      return {
        '负载点 point': p.point,
        '指标 metric': m.metric,
        '目标 target': t,
        '标定模拟器 calibrated': c,
        '相对误差 relative error (%)': relativeErrorPct(t, c),
      };
    }),
  );
}

/**
 * Sentences on the error table against a stated threshold (percent): how many numbers lie within it,
 * per metric, and the largest error. Single-run point estimates: they say "within the threshold or
 * not", never which side is higher. `flagged` names runs whose health flags were set (their tails are suspect).
 */
export function errorSentences(rows: readonly ErrorRow[], thresholdPct: number, flagged: readonly string[] = []): string[] {
  const err = (r: ErrorRow) => Math.abs(r['相对误差 relative error (%)']);
  const finite = rows.filter((r) => Number.isFinite(err(r)));
  const inside = finite.filter((r) => err(r) <= thresholdPct).length;
  const perMetric = ERROR_METRICS.map((m) => {
    const rs = finite.filter((r) => r['指标 metric'] === m.metric);
    return `${m.metric} ${rs.filter((r) => err(r) <= thresholdPct).length}/${rs.length}`;
  }).join('，');
  const worst = [...finite].sort((a, b) => err(b) - err(a))[0];
  const out = [
    `按设定的阈值 ±${thresholdPct}%：误差表的 ${finite.length} 个数里，${inside} 个的相对误差在阈值之内（${perMetric}）。` +
      (worst
        ? `最大的是 ${worst['负载点 point']} 的 ${worst['指标 metric']}：${fmtNumber(worst['相对误差 relative error (%)'])}%。`
        : ''),
    '每格是两次单独运行的点估计，没有区间：它只说明“在阈值之内或之外”，不说明哪一边更高。',
  ];
  if (finite.length < rows.length) out.push(`${rows.length - finite.length} 个数无法计算（目标为 0 或缺失）。`);
  if (flagged.length) out.push(`${flagged.join('；')}：这些运行的尾部（p95）含测量者自己的延迟，请以 p50 为准。`);
  return out;
}

/** Input of `whatIfSentence`: engine-side TTFT p50 predictions (ms) of one mix under two budgets. */
export interface WhatIfInput {
  /** The budget now and the one asked about, tokens. */
  budgets: [number, number];
  /** Calibrated profile's prediction at each budget, ms. */
  calibrated: [number, number];
  /** The hidden profile's own answer at each budget (simulator targets only), ms. */
  hidden?: [number, number];
  /** The stated threshold for "no meaningful change", percent. */
  thresholdPct: number;
}

/** The what-if answer, labelled a prediction; "changes" only beyond the stated threshold. */
export function whatIfSentence(x: WhatIfInput): string {
  const [b0, b1] = x.budgets;
  const [c0, c1] = x.calibrated;
  const change = relativeErrorPct(c0, c1);
  const verdict =
    Math.abs(change) <= x.thresholdPct
      ? `变化 ${fmtNumber(change)}%，在设定的 ±${x.thresholdPct}% 之内，算不上实质变化`
      : `变化 ${fmtNumber(change)}%，超出设定的 ±${x.thresholdPct}%`;
  let s =
    `预测（prediction，不是测量）：按标定后的配置，把 --max-num-batched-tokens 从 ${b0} 改成 ${b1}，` +
    `90/10 混合的 TTFT p50（引擎内，不含 API 开销）从 ${fmtNumber(c0)} ms 到 ${fmtNumber(c1)} ms，${verdict}。`;
  if (x.hidden) {
    const [h0, h1] = x.hidden;
    s +=
      ` 因为目标是模拟器，这里还能问隐藏配置本身：它给出 ${fmtNumber(h0)} ms 和 ${fmtNumber(h1)} ms，` +
      `标定的预测与它相差 ${fmtNumber(relativeErrorPct(h0, c0))}% 和 ${fmtNumber(relativeErrorPct(h1, c1))}%。`;
  }
  return s;
}
