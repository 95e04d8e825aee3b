/**
 * Verdicts about two measurements that respect noise (issue #13): a generated sentence may say
 * "B is higher than A" only when the bootstrap interval of the difference excludes 0, and it
 * prints that interval; otherwise it says the data cannot decide ("本次数据不足以判断").
 *
 * - The interval is `bootstrapDiffCI` (src/stats/bootstrap.ts), samples resampled independently and
 *   seeded (default 2000 iterations, 95 %, seed 1): the same runs always give the same sentence. Gaps
 *   given by request (`groups`, ITL) resample requests (src/stats/cluster-bootstrap.ts), not single gaps.
 * - An optional stated threshold (`thresholdPct`, percent of A's value): when the whole interval lies
 *   within ±threshold, the sentence says "没有实质变化" and names the threshold.
 * - A disturbed run (its summary's health flags: client-bound, or the simulator behind real
 *   time) has tails that include the measurer's own delay, so a tail percentile (> p50) is
 *   replaced by p50 and the sentence says why.
 * The sentences are Simplified Chinese, as the notebooks' prose.
 */

import type { BootstrapOptions } from '../stats/bootstrap';
import { bootstrapSampleDiffCI, type Groups } from '../stats/cluster-bootstrap';
import { checkPercentile, percentile } from '../stats/percentile';
import type { RequestRecord, RunSummary } from '../types';

/** Per-request latency fields a verdict can compare (ms). */
export type VerdictMetric = 'ttftMs' | 'tpotMs' | 'e2eMs' | 'queueMs' | 'ttftFromIntendedMs';

const METRIC_NAMES: Record<VerdictMetric, string> = {
  ttftMs: 'TTFT',
  tpotMs: 'TPOT',
  e2eMs: 'E2E',
  queueMs: '客户端排队 queueMs',
  ttftFromIntendedMs: '从计划时刻算的 TTFT',
};

/** One side of a comparison: a run (a `MeasureResult` or `LoadedRun` with a `label` added fits). */
export interface VerdictRun {
  /** How the sentence names this side, e.g. `'c=8'`. */
  label: string;
  /** The run's records; warm-up and failed requests are left out. */
  records: readonly RequestRecord[];
  /** The run's summary; its `health` flags decide whether the run was disturbed. */
  summary?: Partial<Pick<RunSummary, 'health' | 'outputTokensPerSec'>>;
}

/** One side given as values (ms), e.g. one run's `ttftMs` against its own `ttftFromIntendedMs`. */
export interface VerdictSample {
  label: string;
  values: readonly number[];
  /** The same values by request (each request's ITL gaps): when both sides have them, requests are resampled. */
  groups?: Groups;
  /** The health flags of the run the values came from; flagged → tails are not trusted. */
  health?: RunSummary['health'];
}

/** Options of `compareMetric` / `compareValues`. */
export interface CompareOptions {
  /** A stated threshold, percent of A's value: an interval within ±threshold is "no meaningful change". Default: none. */
  thresholdPct?: number;
  /** Bootstrap settings; default 2000 iterations, 95 % confidence, seed 1. */
  bootstrap?: BootstrapOptions;
  /** Replace a tail percentile by p50 when a side is disturbed; default true. */
  respectHealth?: boolean;
  /** How the sentence names the metric; default from the metric (`'E2E'`, `'TTFT'`, …). */
  name?: string;
}

/** The outcome of comparing B against A at one percentile; every time in ms. */
export interface Comparison {
  /** The metric's name in sentences, e.g. `'E2E'`. */
  name: string;
  /** The percentile asked for (0..100). */
  requestedPct: number;
  /** The percentile compared: `requestedPct`, or 50 when a side was disturbed. */
  pct: number;
  a: { label: string; value: number; n: number };
  b: { label: string; value: number; n: number };
  /** `b.value − a.value`, ms. */
  diff: number;
  /** Bootstrap interval of the difference, ms. */
  interval: [number, number];
  /** Coverage of the interval, e.g. 0.95. */
  confidence: number;
  /** `b.value / a.value`. */
  ratio: number;
  /** `higher`: the interval lies above 0 (B is higher); `lower`: below 0; else `undecided`. */
  direction: 'higher' | 'lower' | 'undecided';
  /** The stated threshold, percent of A, when one was given. */
  thresholdPct?: number;
  /** True when a threshold was given and the whole interval lies within ±threshold of A's value. */
  negligible: boolean;
  /** Why tails were not trusted, in plain words: one clause per disturbed side, or one for both (empty when healthy). */
  disturbed: string[];
  /** Why the verdict is what it is, in plain words (Chinese), with the interval. */
  reason: string;
}

const DEFAULT_BOOT: BootstrapOptions = { iterations: 2000, confidence: 0.95, seed: 1 };

/**
 * A number for prose, never rounded to a misleading 0: ≥ 100 → no decimals, ≥ 1 → one decimal,
 * smaller → two significant digits; `'—'` when not finite. Pure.
 */
export function fmtNumber(x: number): string {
  if (!Number.isFinite(x)) return '—';
  const ax = Math.abs(x);
  if (ax >= 100) return x.toFixed(0);
  if (ax >= 1) return x.toFixed(1);
  return x === 0 ? '0' : String(Number(x.toPrecision(2)));
}

/** `[lo, hi]` formatted with `fmtNumber`, as every verdict prints it (tests parse this shape). */
export function fmtInterval([lo, hi]: readonly [number, number]): string {
  return `[${fmtNumber(lo)}, ${fmtNumber(hi)}]`;
}

/** The measured values of `metric` in a run: successful, non-warm-up requests where it is defined. */
export function metricValues(records: readonly RequestRecord[], metric: VerdictMetric): number[] {
  const out: number[] = [];
  for (const r of records) {
    const v = r[metric];
    if (!r.warmup && r.ok && typeof v === 'number' && Number.isFinite(v)) out.push(v);
  }
  return out;
}

/** What disturbed a run, from its health flags (Chinese), or undefined when they are clear. */
function disturbedBy(health: RunSummary['health'] | undefined): string | undefined {
  const why = [health?.clientBound ? '客户端是瓶颈' : '', health?.simBehind ? '模拟器落后于实时' : ''].filter(Boolean);
  return why.length ? why.join('、') : undefined;
}

/** Why a run's tails are not trusted (Chinese clause), or undefined when its health flags are clear. */
export function disturbance(label: string, health: RunSummary['health'] | undefined): string | undefined {
  const why = disturbedBy(health);
  return why ? `${label} 测量时${why}` : undefined;
}

/** The disturbance clauses of two sides: one clause when both were disturbed the same way. */
function disturbances(a: VerdictSample, b: VerdictSample): string[] {
  const wa = disturbedBy(a.health);
  const wb = disturbedBy(b.health);
  if (wa && wa === wb) return [`${a.label} 和 ${b.label} 测量时都受了干扰（${wa}）`];
  return [disturbance(a.label, a.health), disturbance(b.label, b.health)].filter((x): x is string => !!x);
}

function checkOptions(pct: number, opts: CompareOptions): void {
  checkPercentile(pct);
  const t = opts.thresholdPct;
  if (t !== undefined && !(Number.isFinite(t) && t > 0))
    throw new RangeError(`thresholdPct must be a percent > 0 (e.g. 5 for ±5 %), or left out; got ${t}`);
}

function reasonOf(c: Omit<Comparison, 'reason'>): string {
  const iv = `差值的 ${Math.round(c.confidence * 100)}% 区间 ${fmtInterval(c.interval)} ms`;
  if (!Number.isFinite(c.diff)) return `至少一边没有可用的数据（n = ${c.a.n} / ${c.b.n}），无法比较`;
  if (c.negligible) return `${iv} 落在设定的 ±${c.thresholdPct}% 阈值之内`;
  return c.direction === 'undecided' ? `${iv} 含 0` : `${iv} 不含 0`;
}

/**
 * Compare B against A at percentile `pct` of two samples (ms). See the module comment for the
 * rules; `bootstrapDiffCI` resamples the two sides independently, which for paired values (one
 * run's `ttftMs` against its own `ttftFromIntendedMs`) gives a wider, more cautious interval.
 * @throws RangeError for `pct` outside 0..100 or a threshold that is not a percent > 0.
 */
export function compareValues(a: VerdictSample, b: VerdictSample, pct: number, opts: CompareOptions = {}): Comparison {
  checkOptions(pct, opts);
  const disturbed = disturbances(a, b);
  const used = opts.respectHealth !== false && disturbed.length > 0 && pct > 50 ? 50 : pct;
  const boot = { ...DEFAULT_BOOT, ...opts.bootstrap };
  const ci = bootstrapSampleDiffCI(a, b, used, boot);
  const va = a.values.length ? percentile(a.values, used) : NaN;
  const vb = b.values.length ? percentile(b.values, used) : NaN;
  const interval: [number, number] = [ci.lo, ci.hi];
  const direction = ci.lo > 0 ? 'higher' : ci.hi < 0 ? 'lower' : 'undecided';
  const t = opts.thresholdPct;
  const band = t !== undefined ? (Math.abs(va) * t) / 100 : NaN;
  const negligible = t !== undefined && Number.isFinite(band) && ci.lo >= -band && ci.hi <= band;
  const c: Omit<Comparison, 'reason'> = {
    name: opts.name ?? 'value',
    requestedPct: pct,
    pct: used,
    a: { label: a.label, value: va, n: a.values.length },
    b: { label: b.label, value: vb, n: b.values.length },
    diff: ci.estimate,
    interval,
    confidence: ci.confidence,
    ratio: vb / va,
    direction: Number.isFinite(ci.estimate) ? direction : 'undecided',
    ...(t !== undefined ? { thresholdPct: t } : {}),
    negligible,
    disturbed,
  };
  return { ...c, reason: reasonOf(c) };
}

/**
 * Compare run B against run A on `metric` at percentile `pct` (e.g. `compareMetric(c1, c8, 'e2eMs', 95)`):
 * the difference `b − a` with its bootstrap interval, the direction only when the interval excludes 0,
 * p50 instead of a tail when a run's health flags say it was disturbed. Defaults: see `CompareOptions`.
 * @throws RangeError for `pct` outside 0..100 or a threshold that is not a percent > 0.
 */
export function compareMetric(
  a: VerdictRun,
  b: VerdictRun,
  metric: VerdictMetric,
  pct: number,
  opts: CompareOptions = {},
): Comparison {
  const side = (r: VerdictRun): VerdictSample => ({
    label: r.label,
    values: metricValues(r.records, metric),
    health: r.summary?.health,
  });
  return compareValues(side(a), side(b), pct, { ...opts, name: opts.name ?? METRIC_NAMES[metric] });
}

const signedPct = (ratio: number, p = (ratio - 1) * 100): string =>
  Number.isFinite(p) ? `${p >= 0 ? '+' : ''}${fmtNumber(p)}%` : '—';

/** The clause saying which percentile was used and why, when a side was disturbed ('' otherwise). */
function healthNote(c: Comparison): string {
  if (c.disturbed.length === 0) return '';
  const who = c.disturbed.join('；');
  if (c.pct !== c.requestedPct) return `（${who}：尾部百分位含测量者自己的延迟，这里改比 p${c.pct}，不比 p${c.requestedPct}。）`;
  return c.pct <= 50 ? `（${who}；p${c.pct} 受的影响比尾部小。）` : `（${who}：p${c.pct} 含测量者自己的延迟，读数要打折扣。）`;
}

/**
 * One Simplified-Chinese sentence for a comparison, with its interval, e.g.
 * "E2E p95：c=8 比 c=1 高 81 ms（916 → 997 ms，×1.09；差值的 95% 区间 [40, 120] ms 不含 0）。" or
 * "E2E p95：c=1 916 ms，c=8 917 ms，本次数据不足以判断（差值的 95% 区间 [-14, 15] ms 含 0）。"
 * A disturbed comparison adds why it uses p50. Pure.
 */
export function verdictSentence(c: Comparison): string {
  const head = `${c.name} p${c.pct}`;
  const { a, b } = c;
  const note = healthNote(c);
  if (!Number.isFinite(c.diff)) return `${head}：${c.reason}。${note}`;
  if (c.negligible) {
    return `${head}：${a.label} ${fmtNumber(a.value)} ms，${b.label} ${fmtNumber(b.value)} ms（${signedPct(c.ratio)}），没有实质变化（${c.reason}）。${note}`;
  }
  if (c.direction === 'undecided') {
    return `${head}：${a.label} ${fmtNumber(a.value)} ms，${b.label} ${fmtNumber(b.value)} ms，本次数据不足以判断（${c.reason}）。${note}`;
  }
  const word = c.direction === 'higher' ? '高' : '低';
  return (
    `${head}：${b.label} 比 ${a.label} ${word} ${fmtNumber(Math.abs(c.diff))} ms` +
    `（${fmtNumber(a.value)} → ${fmtNumber(b.value)} ms，×${c.ratio.toFixed(2)}；${c.reason}）。${note}`
  );
}
