/**
 * Conclusions built from several comparisons (./verdict), each stated only as far as the
 * intervals allow:
 * - `tableReading`: the course's table-reading rule (seed 000, "三档对照表读法"): "若 TTFT 涨幅
 *   远超 p95 涨幅，说明瓶颈在 prefill/排队而非 decode", with "far" a stated factor and both rises
 *   taken at the cautious end of their intervals;
 * - `tradeoffVerdict`: "延迟变差、吞吐变好" only when the latency rise is decided and the
 *   throughput gain passes a stated threshold (a run's throughput is one number, no interval);
 * - `trendVerdict`: "rises at every step" only when every neighbouring difference excludes 0.
 * Sentences are Simplified Chinese, as the notebooks' prose.
 */

import {
  compareMetric,
  fmtNumber,
  verdictSentence,
  type CompareOptions,
  type Comparison,
  type VerdictMetric,
  type VerdictRun,
} from './verdict';

/** What `tableReading` found. */
export interface TableReading {
  /** TTFT p50, B against A. */
  ttft: Comparison;
  /** E2E p95 (p50 when a run was disturbed), B against A. */
  e2e: Comparison;
  /** The stated factor for "far larger"; default 3. */
  factor: number;
  /** `prefill-or-queue`: the TTFT rise is surely ≥ factor × the E2E rise; `decode-too`: surely not; else `undecided`. */
  finding: 'prefill-or-queue' | 'decode-too' | 'undecided';
  /** The two comparison sentences, then the reading. */
  sentences: string[];
}

/** Interval ends of a comparison as percent of A's value. */
const relPct = (c: Comparison): [number, number] => [(100 * c.interval[0]) / c.a.value, (100 * c.interval[1]) / c.a.value];

/**
 * The course's rule for a concurrency table, applied to runs A (lower load) and B (higher load):
 * when TTFT p50 rises far more than E2E p95 (at least `factor` times, default 3), the bottleneck is
 * prefill or queueing, not decode. The TTFT rise is taken at the low end of its interval and the
 * E2E rise at the high end, so the rule fires only when the data leave no doubt; it is refuted
 * only when the TTFT rise's high end is below `factor` × the E2E rise's low end. Pure.
 * @throws RangeError when `factor` is not a number > 1.
 */
export function tableReading(
  a: VerdictRun,
  b: VerdictRun,
  opts: { factor?: number; bootstrap?: CompareOptions['bootstrap'] } = {},
): TableReading {
  const factor = opts.factor ?? 3;
  if (!(Number.isFinite(factor) && factor > 1)) throw new RangeError(`factor must be a number > 1 (e.g. 3), got ${factor}`);
  const boot = opts.bootstrap ? { bootstrap: opts.bootstrap } : {};
  const ttft = compareMetric(a, b, 'ttftMs', 50, boot);
  const e2e = compareMetric(a, b, 'e2eMs', 95, boot);
  const [ttftLo, ttftHi] = relPct(ttft);
  const [e2eLo, e2eHi] = relPct(e2e);
  const rule = `读表（课程的规则：“若 TTFT 涨幅远超 p95 涨幅，说明瓶颈在 prefill/排队而非 decode”；“远超”这里取 ${factor} 倍）`;
  let finding: TableReading['finding'] = 'undecided';
  let reading: string;
  if (ttft.direction !== 'higher') {
    reading = `${rule}：TTFT p50 没有可以确定的上涨，这条规则用不上。`;
  } else if (ttftLo >= factor * Math.max(0, e2eHi)) {
    finding = 'prefill-or-queue';
    reading =
      `${rule}：TTFT p50 至少涨了 ${fmtNumber(ttftLo)}%，E2E p${e2e.pct} 至多涨了 ${fmtNumber(Math.max(0, e2eHi))}%` +
      `（都取 95% 区间里对结论不利的一端），前者超过后者的 ${factor} 倍：瓶颈在预填充（prefill）和排队，不在解码（decode）。`;
  } else if (ttftHi < factor * e2eLo) {
    finding = 'decode-too';
    reading =
      `${rule}：TTFT p50 至多涨了 ${fmtNumber(ttftHi)}%，E2E p${e2e.pct} 至少涨了 ${fmtNumber(e2eLo)}%，` +
      `TTFT 的涨幅没有远超 E2E：不能把瓶颈只归到预填充和排队，解码也在变慢。`;
  } else {
    reading =
      `${rule}：TTFT p50 的涨幅在 ${fmtNumber(ttftLo)}% 到 ${fmtNumber(ttftHi)}% 之间，E2E p${e2e.pct} 在 ` +
      `${fmtNumber(e2eLo)}% 到 ${fmtNumber(e2eHi)}% 之间，区间太宽，本次数据不足以判断是否“远超”。`;
  }
  return { ttft, e2e, factor, finding, sentences: [verdictSentence(ttft), verdictSentence(e2e), reading] };
}

/** What `tradeoffVerdict` found. */
export interface TradeoffVerdict {
  /** The latency comparison (default E2E p95), B against A. */
  latency: Comparison;
  /** Output throughput of B ÷ A (whole runs, no interval). */
  throughputRatio: number;
  /** The stated throughput threshold, percent; default 10. */
  minThroughputGainPct: number;
  /** `both`: latency surely worse and throughput past the threshold; `throughput-only`: latency not worse; `undecided`: latency cannot be decided; `no-gain`: throughput below the threshold. */
  finding: 'both' | 'throughput-only' | 'undecided' | 'no-gain';
  /** The latency sentence, then the conclusion. */
  sentences: string[];
}

/** Options of `tradeoffVerdict`. */
export interface TradeoffOptions extends Pick<CompareOptions, 'bootstrap' | 'thresholdPct'> {
  /** The latency compared; default `{ metric: 'e2eMs', pct: 95 }`. */
  latency?: { metric: VerdictMetric; pct: number };
  /** Throughput must rise by at least this percent to count as better; default 10. */
  minThroughputGainPct?: number;
}

/**
 * "延迟变差、吞吐变好" for runs A (lower load) and B (higher load), claimed only when the latency
 * rise's interval excludes 0 (and, with `thresholdPct`, is not within the threshold) and B's output
 * throughput is at least `minThroughputGainPct` (default 10) percent above A's. Pure.
 * @throws RangeError when a run has no `summary.outputTokensPerSec`, or for bad comparison options.
 */
export function tradeoffVerdict(a: VerdictRun, b: VerdictRun, opts: TradeoffOptions = {}): TradeoffVerdict {
  const { metric, pct } = opts.latency ?? { metric: 'e2eMs', pct: 95 };
  const min = opts.minThroughputGainPct ?? 10;
  const ta = a.summary?.outputTokensPerSec;
  const tb = b.summary?.outputTokensPerSec;
  if (ta === undefined || tb === undefined) {
    throw new RangeError('tradeoffVerdict needs both runs with summary.outputTokensPerSec: pass a MeasureResult or a LoadedRun');
  }
  const latency = compareMetric(a, b, metric, pct, { bootstrap: opts.bootstrap, thresholdPct: opts.thresholdPct });
  const ratio = tb / ta;
  const lat = `${latency.name} p${latency.pct}`;
  const tput = `${b.label} 的输出吞吐是 ${a.label} 的 ${ratio.toFixed(2)} 倍`;
  let finding: TradeoffVerdict['finding'];
  let text: string;
  if (!(ratio >= 1 + min / 100)) {
    finding = 'no-gain';
    text = `${tput}，不到设定的 +${min}% 门槛，“吞吐变好”不成立：先看两边的负载和输出长度是否可比。`;
  } else if (latency.direction === 'higher' && !latency.negligible) {
    finding = 'both';
    text = `“延迟变差、吞吐变好”同时成立：${tput}（超过设定的 +${min}% 门槛），${lat} 的上涨也确定（差值区间不含 0）。`;
  } else if (latency.direction === 'undecided' && !latency.negligible) {
    finding = 'undecided';
    text = `${tput}，但 ${lat} 是否变差，本次数据不足以判断：还不能说“延迟变差、吞吐变好”同时成立（多测几轮、加大 N 再看）。`;
  } else {
    finding = 'throughput-only';
    text = `${tput}，而 ${lat} ${latency.negligible ? '没有实质变化' : '反而更低'}：这次只有“吞吐变好”成立。`;
  }
  return { latency, throughputRatio: ratio, minThroughputGainPct: min, finding, sentences: [verdictSentence(latency), text] };
}

/** What `trendVerdict` found. */
export interface TrendVerdict {
  /** Each neighbouring pair, later against earlier. */
  steps: Comparison[];
  /** True when every step is `higher` (and none within a stated threshold). */
  rising: boolean;
  /** The summary sentence, then one sentence per step. */
  sentences: string[];
}

/**
 * Does `metric` at `pct` rise along `runs` (in load order)? Each neighbouring pair is compared;
 * "逐档上升" is said only when every difference's interval lies above 0. Pure.
 * @throws RangeError with fewer than 2 runs, or for bad comparison options.
 */
export function trendVerdict(
  runs: readonly VerdictRun[],
  metric: VerdictMetric,
  pct: number,
  opts: CompareOptions = {},
): TrendVerdict {
  if (runs.length < 2) throw new RangeError(`trendVerdict needs at least 2 runs in load order, got ${runs.length}`);
  const steps = runs.slice(1).map((r, i) => compareMetric(runs[i], r, metric, pct, opts));
  const rising = steps.every((s) => s.direction === 'higher' && !s.negligible);
  const name = `${steps[0].name} p${pct}`;
  const path = runs.map((r) => r.label).join(' → ');
  const switched = steps.some((s) => s.pct !== s.requestedPct) ? '（受干扰的档位改比 p50，见下）' : '';
  const notRising = steps.filter((s) => !(s.direction === 'higher' && !s.negligible));
  const head = rising
    ? `${name} 沿 ${path} 逐档上升${switched}：每一对相邻档位的差值区间都在 0 之上。`
    : `不能说 ${name} 沿 ${path} 逐档上升${switched}：${notRising.map((s) => `${s.a.label} → ${s.b.label}`).join('、')} ` +
      `这几步的差值区间没有全在 0 之上（见下）。`;
  return { steps, rising, sentences: [head, ...steps.map(verdictSentence)] };
}
