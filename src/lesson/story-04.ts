/**
 * Lesson 04 (chunked prefill): the sentences its cells used to build inline, computed from the runs (issue #13).
 * - `caseStory`: the course's Case A / Case B against the V1 arithmetic and the measured short-prompt p99 TTFT.
 * - `mixTtftStory`: the 90/10 mix's short-request P99 TTFT with chunking off and on (what the experiment
 *   report asks), and whether chunking redistributes prefill cost rather than removing it: TPOT and E2E
 *   unchanged within a stated threshold, TTFT worse (medians of per-request paired differences,
 *   `pairedMedianChange`); each part said only as far as its interval allows.
 * - `mixItlStory`: the decode ITL of the short requests (the streams already producing tokens).
 * Sentences are Simplified Chinese; the numbers come from the runs and the lesson's own predictions.
 */
import { bootstrapPercentileCI } from '../stats/bootstrap';
import { percentile } from '../stats/percentile';
import { compareMetric, compareValues, disturbance, fmtInterval, fmtNumber, verdictSentence, type Comparison } from './verdict';
import { type StoryRun, tagged } from './story-03';

/** Inputs of `caseStory`: measured short-prompt p99 TTFT and long-prompt TTFT per setting, and the predictions (ms). */
export interface CaseStoryInput {
  shortP99: { off: number; chunk512: number; chunk512t128: number };
  longTtft: { off: number; chunk512t128: number };
  predicted: { off: number; chunk512t128: number };
  /** Client-side send delay (`queueMs` max) of the short requests, per setting, ms. */
  maxQueueMs: number[];
}

/** Measured within ±30 % of predicted: the lesson's stated tolerance for "the arithmetic held". */
const within = (m: number, p: number) => Math.abs(m - p) / p <= 0.3;

/** The course's Case A / Case B checked against this run (lesson 04 §5). Pure. */
export function caseStory(x: CaseStoryInput): string[] {
  const { shortP99: p99, longTtft, predicted } = x;
  const ratio512 = p99.chunk512 / p99.off;
  const ratioT = p99.chunk512t128 / p99.off;
  return [
    `课程 Case A：关闭分块时短请求 p99 TTFT = ${fmtNumber(p99.off)} ms，长请求 TTFT = ${fmtNumber(longTtft.off)} ms —— ` +
      `短请求确实被整段预填充堵住（V1 算术预测 ≈ ${fmtNumber(predicted.off)} ms，${within(p99.off, predicted.off) ? '相差在 30% 以内' : '相差超过 30%'}）。`,
    `课程 Case B：只开分块（预算 512）时短请求 p99 TTFT = ${fmtNumber(p99.chunk512)} ms，是关闭时的 ${ratio512.toFixed(2)} 倍。` +
      (ratio512 > 0.7
        ? '“短请求插队、TTFT 显著降低”没有发生：正在进行的预填充每步先拿走全部预算（V1 如此，V0 的分块调度器 `_schedule_chunked_prefill` 也先排 RUNNING）。'
        : '短请求的 TTFT 明显下降，与 V1 的算术预测不符，值得检查服务器版本与参数。'),
    `加上 --long-prefill-token-threshold 128 后短请求 p99 TTFT = ${fmtNumber(p99.chunk512t128)} ms，是关闭时的 ${ratioT.toFixed(2)} 倍` +
      `（V1 算术预测 ≈ ${fmtNumber(predicted.chunk512t128)} ms）。` +
      (ratioT <= 1 / 3 ? '真正让短请求“插队”的是阈值，不是分块本身。' : '阈值的效果比预测弱。'),
    `代价：长请求的 TTFT 从 ${fmtNumber(longTtft.off)} ms（关闭）变为 ${fmtNumber(longTtft.chunk512t128)} ms（512 + 阈值 128）。`,
    `（客户端发出短请求的最大延误依次为 ${x.maxQueueMs.map(fmtNumber).join(' / ')} ms；短请求到达时长 prompt 都还在预填充，结论不受影响。）`,
  ];
}

/**
 * Request by request: both runs sent the same seeded workload on the same seeded arrival schedule, so the
 * short request with index i is the same request in `off` and `on`. B against A at the median of the
 * per-request differences `on_i − off_i` (bootstrap interval of that median, 2000 iterations, 95 %, seed 1);
 * `a.value`/`b.value` are each side's median over the paired requests. A tighter test than comparing two
 * independent samples, which on a loaded machine leaves most of these intervals around 0. Pure.
 */
export function pairedMedianChange(
  off: StoryRun,
  on: StoryRun,
  metric: 'ttftMs' | 'tpotMs' | 'e2eMs',
  opts: { name: string; thresholdPct?: number },
): Comparison {
  const pick = (run: StoryRun) =>
    new Map(
      run.records
        .filter((r) => !r.warmup && r.ok && r.tag === 'short' && r[metric] !== undefined)
        .map((r) => [r.index, r[metric]!]),
    );
  const a = pick(off);
  const b = pick(on);
  const keys = [...a.keys()].filter((k) => b.has(k));
  const va = keys.map((k) => a.get(k)!);
  const vb = keys.map((k) => b.get(k)!);
  const ci = bootstrapPercentileCI(
    keys.map((k) => b.get(k)! - a.get(k)!),
    50,
    { iterations: 2000, confidence: 0.95, seed: 1 },
  );
  const aValue = keys.length ? percentile(va, 50) : NaN;
  const t = opts.thresholdPct;
  const band = t !== undefined ? (Math.abs(aValue) * t) / 100 : NaN;
  const negligible = t !== undefined && Number.isFinite(band) && ci.lo >= -band && ci.hi <= band;
  const direction = !Number.isFinite(ci.estimate) ? 'undecided' : ci.lo > 0 ? 'higher' : ci.hi < 0 ? 'lower' : 'undecided';
  const iv = `逐个请求配对之差的中位数，95% 区间 ${fmtInterval([ci.lo, ci.hi])} ms`;
  const reason = !keys.length
    ? '两次运行没有可以配对的请求，无法比较'
    : negligible
      ? `${iv} 落在设定的 ±${t}% 阈值之内`
      : direction === 'undecided'
        ? `${iv} 含 0`
        : `${iv} 不含 0`;
  const wa = disturbance(off.label, off.summary.health);
  const wb = disturbance(on.label, on.summary.health);
  const same = wa && wb && wa.slice(off.label.length) === wb.slice(on.label.length);
  const why = same ? [`${off.label} 和 ${on.label}${wa.slice(off.label.length)}`] : [wa, wb].filter((x): x is string => !!x);
  return {
    name: opts.name,
    requestedPct: 50,
    pct: 50,
    a: { label: off.label, value: aValue, n: keys.length },
    b: { label: on.label, value: keys.length ? percentile(vb, 50) : NaN, n: keys.length },
    diff: ci.estimate,
    interval: [ci.lo, ci.hi],
    confidence: 0.95,
    ratio: percentile(vb, 50) / aValue,
    direction,
    ...(t !== undefined ? { thresholdPct: t } : {}),
    negligible,
    disturbed: why,
    reason,
  };
}

/**
 * The sentence of a `pairedMedianChange`: a decided change names the median of the per-request differences
 * (which is not the difference of the two medians, printed after it); otherwise as `verdictSentence`. Pure.
 */
export function pairedSentence(c: Comparison): string {
  if (c.negligible || c.direction === 'undecided' || !Number.isFinite(c.diff)) return verdictSentence(c);
  const note = c.disturbed.length ? `（${c.disturbed.join('；')}；中位数受的影响比尾部小。）` : '';
  return (
    `${c.name}：${c.b.label} 比 ${c.a.label} ${c.direction === 'higher' ? '高' : '低'} ${fmtNumber(Math.abs(c.diff))} ms（${c.reason}）。` +
    `两边各自的中位数：${fmtNumber(c.a.value)} → ${fmtNumber(c.b.value)} ms。${note}`
  );
}

/** What `mixTtftStory` found. */
export interface MixTtftStory {
  /** Short-request TTFT p99 (p50 when a run was disturbed), chunked against off: two independent samples. */
  p99: Comparison;
  /** Short-request TTFT, TPOT and E2E, chunked against off, paired request by request (`pairedMedianChange`). */
  ttft50: Comparison;
  tpot: Comparison;
  e2e: Comparison;
  /** `redistributed`: TPOT and E2E within the threshold and TTFT surely higher; `partly`: some of it; `no`: none. */
  finding: 'redistributed' | 'partly' | 'no';
  sentences: string[];
}

/**
 * The 90/10 mix, short requests only, `on` (chunked) against `off`: P99 TTFT (the report's observable), then
 * the redistribution test, paired request by request. `thresholdPct` (default 10) is the stated margin for
 * "no meaningful change". Pure.
 */
export function mixTtftStory(off: StoryRun, on: StoryRun, opts: { thresholdPct?: number } = {}): MixTtftStory {
  const thr = opts.thresholdPct ?? 10;
  const p99 = compareMetric(tagged(off, 'short'), tagged(on, 'short'), 'ttftMs', 99, { name: '短请求 TTFT' });
  const ttft50 = pairedMedianChange(off, on, 'ttftMs', { name: '短请求 TTFT（逐请求配对）' });
  const tpot = pairedMedianChange(off, on, 'tpotMs', { name: '短请求 TPOT（逐请求配对）', thresholdPct: thr });
  const e2e = pairedMedianChange(off, on, 'e2eMs', { name: '短请求 E2E（逐请求配对）', thresholdPct: thr });
  const same = [tpot, e2e].filter((c) => c.negligible).length;
  const worse = ttft50.direction === 'higher' && !ttft50.negligible;
  const finding: MixTtftStory['finding'] = same === 2 && worse ? 'redistributed' : same > 0 || worse ? 'partly' : 'no';
  const which = p99.pct === 99 ? 'P99 TTFT' : `TTFT（运行受了干扰，尾部不可信，改比 p${p99.pct}）`;
  const report =
    p99.direction === 'lower'
      ? `课程要对比的“开启前后的 P99 TTFT”：开启分块后短请求的 ${which} 更低。`
      : p99.direction === 'higher'
        ? `课程要对比的“开启前后的 P99 TTFT”：开启分块后短请求的 ${which} 反而更高——分块没有让新来的短请求插队（第 3 节同理）。`
        : `课程要对比的“开启前后的 P99 TTFT”：两边的 ${which} 谁高，本次数据不足以判断（见上一句的区间）。`;
  const unchanged = (c: Comparison, what: string) =>
    c.negligible
      ? `${what}在 ±${thr}% 以内没变`
      : c.direction === 'undecided'
        ? `${what}的区间太宽，不能说在 ±${thr}% 以内没变`
        : `${what}反而${c.direction === 'higher' ? '更高' : '更低'}，且不能说在 ±${thr}% 以内没变（区间见上）`;
  const conclusion =
    finding === 'redistributed'
      ? `所以分块是把预填充的代价重新分配了，而不是把它去掉：同一个短请求，开启前后的 TPOT 和 E2E 都在 ±${thr}% 以内没有实质变化，` +
        'TTFT 却更高——长 prompt 的预填充被切成很多步，每一步都占着预算，新来的短请求要多等几步才能开始；' +
        '正在解码的请求则不再遇到一整段长预填充的停顿（见上面 6.1 的 ITL）。'
      : finding === 'partly'
        ? `“分块只是重新分配预填充的代价”只有一部分得到数据支持：${[
            unchanged(tpot, 'TPOT '),
            unchanged(e2e, 'E2E '),
            worse ? 'TTFT 更高' : 'TTFT 没有确定地变高',
          ].join('，')}。`
        : `这次的数据不支持“分块只是重新分配预填充的代价”：${unchanged(tpot, 'TPOT ')}，${unchanged(e2e, 'E2E ')}，TTFT 也没有确定地变高。`;
  return {
    p99,
    ttft50,
    tpot,
    e2e,
    finding,
    sentences: [verdictSentence(p99), report, pairedSentence(ttft50), pairedSentence(tpot), pairedSentence(e2e), conclusion],
  };
}

/** Inputs of `mixItlStory`: decode ITL gaps of the short requests (ms) and the predicted stalls (ms). */
export interface MixItlInput {
  itl: { off: number[]; chunk512: number[]; v1default: number[] };
  labels: { off: string; chunk512: string; v1default: string };
  predictedStall: { off: number; chunk512: number; v1default: number };
  /** Gap (ms) above which a gap can only be a whole long prefill. */
  longGapMs: number;
  health?: { off?: StoryRun['summary']['health']; chunk512?: StoryRun['summary']['health'] };
}

/** The decode side of the 90/10 mix (lesson 04 §6.1). Pure. */
export function mixItlStory(x: MixItlInput): string[] {
  const side = (k: 'off' | 'chunk512') => ({ label: x.labels[k], values: x.itl[k], health: x.health?.[k] });
  const tail = compareValues(side('off'), side('chunk512'), 99, { name: '短请求解码 ITL' });
  const body = compareValues(side('off'), side('chunk512'), 50, { name: '短请求解码 ITL' });
  const share = (v: number[]) => (100 * v.filter((g) => g > x.longGapMs).length) / v.length;
  const keys = ['off', 'chunk512', 'v1default'] as const;
  const maxC512 = Math.max(...x.itl.chunk512);
  return [
    `关闭分块时预测的整段预填充一步 ≈ ${fmtNumber(x.predictedStall.off)} ms，实测最长的解码间隔 ${fmtNumber(Math.max(...x.itl.off))} ms。`,
    verdictSentence(tail) +
      (tail.direction === 'lower' && tail.ratio <= 1 / 3 ? '分块让正在解码的请求不再为整段长预填充停顿。' : ''),
    `比 V1 默认的一步（2048 token，预测 ≈ ${fmtNumber(x.predictedStall.v1default)} ms）还长一半以上（> ${x.longGapMs} ms）的解码间隔占比：` +
      keys.map((k) => `${x.labels[k]} ${share(x.itl[k]).toFixed(1)}%`).join('，') +
      (share(x.itl.chunk512) === 0 && share(x.itl.v1default) === 0
        ? '。只有关闭分块时，才会出现“一整段长预填充”那么长的停顿。'
        : '。'),
    (body.pct === tail.pct ? '' : verdictSentence(body)) +
      (body.direction === 'higher'
        ? '中位数变长了：长 prompt 的每一块都和解码挤在同一步里，分块期间每个 token 都慢一些（见 ITL 时间图里那一段抬高的点），停顿被摊成了一长段小的减速。'
        : ''),
    maxC512 > 2 * x.predictedStall.chunk512
      ? `预算 512 时最长的解码间隔仍有 ${fmtNumber(maxC512)} ms，超过一步 512 token 的预测（≈ ${fmtNumber(x.predictedStall.chunk512)} ms）：` +
        '排在一个正在预填充的请求之后进入 RUNNING 的解码请求，可能连续几步分不到预算（V1 按 RUNNING 顺序分配）。'
      : `预算 512 时最长的解码间隔 ${fmtNumber(maxC512)} ms，与一步 512 token 的预测（≈ ${fmtNumber(x.predictedStall.chunk512)} ms）同一量级。`,
  ];
}
