/**
 * Lesson 02b (02b-gradient): the sentences the notebook prints about its concurrency gradient
 * (throughput, saturation, TTFT trend, prediction) and about the capacity answer under an SLO,
 * built from the runs with the verdict helpers (./verdict, ./verdict-reading). Pure.
 */
import type { RequestRecord, RunSummary } from '../types';
import { compareMetric, verdictSentence } from './verdict';
import { trendVerdict } from './verdict-reading';

/** One gradient point as the notebook holds it. */
export interface GradientPoint {
  concurrency: number;
  run: { records: readonly RequestRecord[]; summary: RunSummary };
}

/** What `gradientSentences` needs besides the runs. */
export interface GradientContext {
  /** Strict saturation (gain per doubling < strictGain) found in the data, if any. */
  saturation?: number;
  /** The knee (gain per doubling < kneeGain) found in the data, if any. */
  knee?: number;
  /** The roofline's strict saturation point and knee (predictions). */
  predictedSaturation?: number;
  predictedKnee?: number;
  strictGain: number;
  kneeGain: number;
  /** Measured ÷ predicted closed-loop throughput, one per point. */
  ratios: number[];
}

const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '—');
const pct = (g: number) => `${+(g * 100).toFixed(1)}%`;
const disturbed = (s: RunSummary) => !!(s.health?.clientBound || s.health?.simBehind);

/**
 * The gradient's conclusions: throughput from the first to the last point, the TTFT p99 and E2E
 * p95 verdicts between the ends, saturation and knee against the roofline, measured/predicted,
 * the TTFT p50 trend step by step, the experiment report's "P99 TTFT stays stable" against the
 * data, and which points were measured while the machine was busy.
 * @throws RangeError with fewer than two points.
 */
export function gradientSentences(points: readonly GradientPoint[], ctx: GradientContext): string[] {
  if (points.length < 2) throw new RangeError('gradientSentences needs at least two gradient points, e.g. c=1 and c=256');
  const runs = points.map((p) => ({ ...p.run, label: `c=${p.concurrency}` }));
  const a = points[0];
  const z = points[points.length - 1];
  const ta = a.run.summary.outputTokensPerSec;
  const tz = z.run.summary.outputTokensPerSec;
  const ttftEnds = compareMetric(runs[0], runs[runs.length - 1], 'ttftMs', 99);
  const trend = trendVerdict(runs, 'ttftMs', 50);
  const lo = Math.min(...ctx.ratios);
  const hi = Math.max(...ctx.ratios);
  const y = points[points.length - 2];
  const lastGain = (tz / y.run.summary.outputTokensPerSec) ** (1 / Math.log2(z.concurrency / y.concurrency)) - 1;
  const busy = points.filter((p) => disturbed(p.run.summary)).map((p) => p.concurrency);
  return [
    `从 c=${a.concurrency} 到 c=${z.concurrency}，输出吞吐从 ${f0(ta)} 涨到 ${f0(tz)} tok/s（**${(tz / ta).toFixed(1)} 倍**）。`,
    verdictSentence(ttftEnds),
    verdictSentence(compareMetric(runs[0], runs[runs.length - 1], 'e2eMs', 95)),
    ctx.saturation !== undefined
      ? `按严格定义（翻倍增幅 < ${pct(ctx.strictGain)}），吞吐在 c=${ctx.saturation} 饱和：平台是测出来的，不是外推的（屋顶线预测 ${ctx.predictedSaturation ?? '256 以上'}）。`
      : `按严格定义（翻倍增幅 < ${pct(ctx.strictGain)}），到 c=${z.concurrency} 吞吐还没有饱和（屋顶线预测的严格饱和点是 ${ctx.predictedSaturation ?? '256 以上'}）；最后一段 c=${y.concurrency} → ${z.concurrency} 每翻倍还多 ${pct(lastGain)}。`,
    ctx.knee !== undefined
      ? `拐点（翻倍增幅 < ${pct(ctx.kneeGain)}）在 c=${ctx.knee}（屋顶线预测 ${ctx.predictedKnee ?? '—'}）：从这里再翻倍，吞吐的增幅明显变小。`
      : `梯度内没有出现“翻倍增幅 < ${pct(ctx.kneeGain)}”的拐点（屋顶线预测 ${ctx.predictedKnee ?? '—'}）。`,
    `实测吞吐是闭环预测的 ${lo.toFixed(2)}–${hi.toFixed(2)} 倍${lo > 0.8 && hi < 1.2 ? '，两者接近' : '，差距来自预测忽略的东西：客户端与服务器之间的 HTTP、每波请求到达时间的错开、预填充和解码挤在同一步'}。`,
    trend.sentences[0] +
      (trend.rising ? '这和预测一致（一波里挤在同一步的预填充越来越多）。' : '预测说它应当逐档上升；下面逐步列出每一步的区间。'),
    ...trend.sentences.slice(1),
    ttftEnds.direction === 'higher'
      ? `实验报告预期 “P99 TTFT 保持相对稳定，只有轻微增加”；这里 c=${z.concurrency} 的 TTFT p${ttftEnds.pct} 是 c=${a.concurrency} 的 ${ttftEnds.ratio.toFixed(1)} 倍（区间见上）。回答一样长时，C 个请求一波一波同时到达，每一波的预填充挤在同一步里，C 越大这一步越长；报告脚本每一档一次性发出 c 个请求（\`asyncio.gather\`），情形相同。`
      : `实验报告预期 “P99 TTFT 保持相对稳定，只有轻微增加”；这次两端的 TTFT p${ttftEnds.pct} 谁高谁低，本次数据不足以判断（区间见上）。`,
    busy.length
      ? `注意：c=${busy.join('、')} 这几档测量时机器繁忙（见健康表），它们的数可能偏慢。`
      : '所有档位的测量条件都正常。',
  ];
}

/** One row of the capacity table. */
export interface CapacityRow {
  concurrency: number;
  p95: number;
  meets: boolean;
  meetsHigh: boolean;
  tokensPerSec: number;
}

/**
 * The capacity answer under "p95 of `metricName` ≤ `limitMs`": walking up from the lowest
 * concurrency, the last one before the first failure (point estimate, and with the interval's
 * high end too); a failure followed by a pass is named as a disturbed point. Pure.
 */
export function capacitySentences(
  rows: readonly CapacityRow[],
  metricName: string,
  limitMs: number,
): { capacity?: number; sentences: string[] } {
  const highest = (ok: (r: CapacityRow) => boolean) => {
    let best: number | undefined;
    for (const r of rows) {
      if (!ok(r)) break;
      best = r.concurrency;
    }
    return best;
  };
  const capacity = highest((r) => r.meets);
  const sure = highest((r) => r.meetsHigh);
  const next = rows.find((r) => !r.meets);
  const cap = rows.find((r) => r.concurrency === capacity);
  const suspicious = rows.filter((r, i) => !r.meets && rows.slice(i + 1).some((h) => h.meets));
  const realFail = rows.find((r) => !r.meets && !suspicious.includes(r));
  const wouldBe = rows.filter((r) => r.meets && (!realFail || r.concurrency < realFail.concurrency)).pop()?.concurrency;
  const out: string[] = [];
  if (capacity === undefined || !cap) {
    out.push(
      `在 p95 ${metricName} ≤ ${limitMs} ms 下，连 c=${rows[0]?.concurrency} 都不满足（p95 = ${f0(rows[0]?.p95 ?? NaN)} ms）。`,
    );
  } else {
    out.push(
      `**在 p95 ${metricName} ≤ ${limitMs} ms 的 SLO 下，这个单实例在测过的档位里最多扛 c=${capacity}**（p95 = ${f0(cap.p95)} ms，此时输出吞吐 ${f0(cap.tokensPerSec)} tok/s）。`,
    );
    if (!next || !suspicious.includes(next)) {
      out.push(
        next
          ? `下一档 c=${next.concurrency} 的 p95 是 ${f0(next.p95)} ms，超标；真正的上限在 ${capacity} 和 ${next.concurrency} 之间，要更准就在这中间再测几档。`
          : `所有档位都满足；上限在 ${capacity} 以上，要找到它得继续加并发。`,
      );
    }
  }
  if (suspicious.length) {
    out.push(
      `但数据自相矛盾：c=${suspicious.map((r) => r.concurrency).join('、')} 超标，更高的并发却满足 SLO。同样的请求、更多的并发不会让延迟变低，所以是这几档测量时受了干扰（见健康表）。用 \`LOADLAB_FORCE=1\` 重测这几档；如果它们正常，答案会是 c=${wouldBe ?? '—'}。`,
    );
  } else if (capacity !== undefined) {
    out.push(
      sure === capacity
        ? '连 bootstrap 区间的上界也在 SLO 以内（闭环的区间偏窄，换一次运行的波动要靠重跑来看）。'
        : `但按区间上界算只有 ${sure === undefined ? '没有一档' : `c=${sure}`} 有把握——离 SLO 太近的档位，换一次运行可能就翻转。`,
    );
  }
  return { capacity, sentences: out };
}
