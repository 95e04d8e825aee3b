/**
 * Lesson 01's narrative builders (issue #13): the sentences the notebook says about its serial
 * run, computed from the run, so that the cells show measurement code. Two stories:
 * - the remote-API pitfall: "TPOT" computed as E2E / n (or measured across a network, where TTFT
 *   holds the round trip and the server's queueing) against vLLM's TPOT = (E2E − TTFT) / (n − 1)
 *   (`vllm/benchmarks/serve.py`, `calculate_metrics`), with and without a known added delay;
 * - the roofline reading: measured TPOT against the bandwidth floor and the step-time prediction.
 */
import type { RequestRecord, RunSummary } from '../types';
import { percentile } from '../stats/percentile';
import { compareMetric, compareValues, fmtNumber, metricValues, verdictSentence, type VerdictRun } from './verdict';

/** One measured point of the pitfall: a run, and the delay added before each response (ms, 0 = none). */
export interface PitfallPoint extends VerdictRun {
  /** The delay injected in front of every response's headers, ms (a configured input, not a measurement). */
  addedDelayMs: number;
  summary?: Partial<Pick<RunSummary, 'health' | 'outputTokensPerSec'>>;
}

/** Per-request "TPOT" the naive way: E2E / output tokens, ms (successful, non-warm-up requests with n ≥ 1). */
export function naiveTpotValues(records: readonly RequestRecord[]): number[] {
  const out: number[] = [];
  for (const r of records) {
    const n = r.outputTokens;
    if (r.warmup || !r.ok || r.e2eMs === undefined || !n || n < 1) continue;
    out.push(r.e2eMs / n);
  }
  return out;
}

/** One row of `pitfallRows` (Chinese headers, English metric names kept). */
export type PitfallRow = Record<string, string | number>;

/**
 * The table of the pitfall: per point, the added delay, TTFT p50, vLLM's TPOT p50, the naive E2E/n
 * p50 and the median output length (ms, tokens). Pure.
 */
export function pitfallRows(points: readonly PitfallPoint[]): PitfallRow[] {
  return points.map((p) => {
    const n = p.records.filter((r) => !r.warmup && r.ok && r.outputTokens !== undefined).map((r) => r.outputTokens!);
    return {
      '测量点 (point)': p.label,
      '注入的延迟 added delay (ms)': p.addedDelayMs,
      '首字延迟 TTFT p50 (ms)': percentile(metricValues(p.records, 'ttftMs'), 50),
      'vLLM 的 TPOT = (E2E − TTFT)/(n − 1) p50 (ms)': percentile(metricValues(p.records, 'tpotMs'), 50),
      '朴素的 E2E / n p50 (ms)': percentile(naiveTpotValues(p.records), 50),
      '输出 token 数 n p50': n.length ? percentile(n, 50) : Number.NaN,
    };
  });
}

/**
 * Sentences of the pitfall (Simplified Chinese), computed from the runs: within `base`, E2E / n
 * against vLLM's TPOT; with `delayed` (a point whose every response was held back by a known
 * delay), which of the two moved and by how much against the prediction delay / n. Every
 * comparison goes through `compareValues`/`compareMetric` (bootstrap interval of the difference).
 */
export function pitfallSentences(base: PitfallPoint, delayed?: PitfallPoint): string[] {
  const bench = metricValues(base.records, 'tpotMs');
  const naive = naiveTpotValues(base.records);
  const within = compareValues(
    { label: 'vLLM 的 TPOT', values: bench, health: base.summary?.health },
    { label: 'E2E / n', values: naive, health: base.summary?.health },
    50,
    { name: `${base.label} 的每 token 时间` },
  );
  const ttft50 = percentile(metricValues(base.records, 'ttftMs'), 50);
  const out = [
    `${verdictSentence(within)}差值来自把首字延迟（TTFT，含预填充和 API 开销，p50 ${fmtNumber(ttft50)} ms）摊到每个 token 上：` +
      'E2E / n = TTFT / n + (E2E − TTFT) / n，n 越小、TTFT 越大，差得越多。',
  ];
  if (!delayed) return out;
  const d = delayed.addedDelayMs;
  const nMed = percentile(
    delayed.records.filter((r) => !r.warmup && r.ok && r.outputTokens).map((r) => r.outputTokens!),
    50,
  );
  const ttft = compareMetric(base, delayed, 'ttftMs', 50);
  const tpot = compareMetric(base, delayed, 'tpotMs', 50, { thresholdPct: 5 });
  const naiveCmp = compareValues(
    { label: base.label, values: naive, health: base.summary?.health },
    { label: delayed.label, values: naiveTpotValues(delayed.records), health: delayed.summary?.health },
    50,
    { name: 'E2E / n' },
  );
  out.push(
    `在每个响应前加上 ${fmtNumber(d)} ms 的已知延迟（模拟网络往返和服务器排队）：${verdictSentence(ttft)}` +
      `预测：TTFT 多出约 ${fmtNumber(d)} ms。`,
    `${verdictSentence(tpot)}预测：不变——这个延迟发生在第一个 token 之前，(E2E − TTFT) 里没有它。`,
    `${verdictSentence(naiveCmp)}预测：多出约 ${fmtNumber(d)} / ${fmtNumber(nMed)} ≈ ${fmtNumber(d / nMed)} ms——` +
      '这就是“把网络和排队算进 TPOT”：服务器一点没变慢，朴素的每 token 时间却变大了。',
  );
  return out;
}

/** What `rooflineSentences` needs: the measured TPOT/TTFT and the prediction's parts, ms. */
export interface RooflineInput {
  tpotP50Ms: number;
  floorMs: number;
  predTpotMs: number;
  /** Time lost to kernels below peak bandwidth: linear + lm_head − floor, ms. */
  etaLossMs: number;
  overheadMs: number;
  kvReadMs: number;
  maxTokens: number;
  predE2eMs: number;
  /** E2E of the requests that wrote all `maxTokens` tokens (ms, may be empty). */
  fullLengthE2eMs: readonly number[];
  simulated: boolean;
}

/** Sentences reading the measured TPOT against the bandwidth floor and the prediction (Simplified Chinese). */
export function rooflineSentences(x: RooflineInput): string[] {
  const vsPred = x.tpotP50Ms / x.predTpotMs - 1;
  const gapRun = x.tpotP50Ms - x.predTpotMs;
  const full = x.fullLengthE2eMs.length ? fmtNumber(percentile([...x.fullLengthE2eMs], 50)) : '—';
  return [
    x.tpotP50Ms >= x.floorMs
      ? `测得的 TPOT 中位数 ${x.tpotP50Ms.toFixed(2)} ms 高于纯带宽下限 ${x.floorMs.toFixed(2)} ms（是它的 ${(x.tpotP50Ms / x.floorMs).toFixed(2)} 倍）：下限守住了，任何一步都不可能比“把权重读一遍”更快。`
      : `测得的 TPOT 中位数 ${x.tpotP50Ms.toFixed(2)} ms **低于**纯带宽下限 ${x.floorMs.toFixed(2)} ms——这在物理上不可能，说明计时或 token 计数有问题。`,
    `预测的一步是 ${x.predTpotMs.toFixed(2)} ms，测量${Math.abs(vsPred) <= 0.15 ? '与预测相符（±15% 以内）' : '偏离预测超过 ±15%'}（${vsPred >= 0 ? '+' : ''}${(100 * vsPred).toFixed(1)}%）。`,
    `预测比下限多出的 ${(x.predTpotMs - x.floorMs).toFixed(2)} ms 来自两处：内核达不到峰值带宽（${x.etaLossMs.toFixed(2)} ms）和每步固定开销（${x.overheadMs.toFixed(2)} ms）；` +
      `读 KV 只占 ${x.kvReadMs.toFixed(3)} ms——短上下文、单请求时几乎不花时间。`,
    `测量比预测${gapRun >= 0 ? '多' : '少'} ${Math.abs(gapRun).toFixed(2)} ms：TPOT 是 (E2E − TTFT)/(n − 1)，除了 GPU 步时，还包含每个 token 的反分词、` +
      `HTTP 写出，以及客户端的打点误差（第 00 课第 7 节）${x.simulated ? '；在模拟器里还有它自己的计时抖动（它按真实时间睡到每一步结束）' : ''}。`,
    `E2E 的预测 ${x.predE2eMs.toFixed(0)} ms 是按 ${x.maxTokens} 个 token 算的；写满 ${x.maxTokens} 个 token 的请求实测 E2E 中位数为 ${full} ms。` +
      `课程的远程 API 手算示例（约 2050 ms，TPOT 20 ms）是它的预测，比本地 4090 的预测慢约 ${(20 / x.predTpotMs).toFixed(1)} 倍——远程网络和另一套硬件的量级。`,
  ];
}

/** What `warmupSentences` needs: the run's records, its peak in-flight count and client health. */
export interface WarmupInput {
  records: readonly RequestRecord[];
  /** Requests counted in the summary (`summary.requests`). */
  summarized: number;
  peakInFlight: number;
  /** `manifest.client`: event-loop delay, CPU, load average, cores and whether the client was the bottleneck. */
  client: Record<string, unknown>;
}

/**
 * Sentences (Simplified Chinese) on the warm-up requests: the first one's connection setup and
 * TTFT against the measured requests' medians, what the summary counted, and the client's health.
 */
export function warmupSentences(x: WarmupInput): string[] {
  const warm = x.records.filter((r) => r.warmup);
  const measured = x.records.filter((r) => !r.warmup && r.ok);
  if (!warm.length || !measured.length) return ['这次运行没有预热请求或正式请求，无从比较。'];
  const w = warm[0];
  const mQueue = percentile(
    measured.map((r) => r.queueMs),
    50,
  );
  const mTtft = percentile(metricValues(measured, 'ttftMs'), 50);
  const extra = w.queueMs + (w.ttftMs ?? Number.NaN) - mQueue - mTtft;
  const h = x.client;
  const num = (k: string) => Number(h[k]);
  const health = `客户端健康（manifest.client）：事件循环延迟 p99 ${num('eventLoopDelayP99Ms').toFixed(1)} ms、CPU ${num('cpuPercentOfOneCore').toFixed(0)}%`;
  return [
    `第一个预热请求在客户端里等了 ${w.queueMs.toFixed(2)} ms（建立连接），正式请求的中位数只有 ${mQueue.toFixed(2)} ms；` +
      `它的 TTFT 是 ${fmtNumber(w.ttftMs ?? Number.NaN)} ms，正式请求的 TTFT 中位数是 ${fmtNumber(mTtft)} ms。`,
    extra > 0
      ? `从“想发送”到第一个 token，第一个请求多花了 ${extra.toFixed(1)} ms（一个请求对中位数，没有区间）：这正是要丢掉预热请求的原因。`
      : '这次第一个请求并没有比正式请求的中位数更慢（连接建立很快）；丢掉预热请求仍然是好习惯。',
    `统计里只用了 ${x.summarized} 个正式请求（summary.requests），预热的 ${warm.length} 个被排除；同时在飞的请求最多 ${x.peakInFlight} 个。`,
    h.clientBound
      ? `${health}——这次运行的计时里含有客户端自己的延迟（${num('loadAverage1m') > num('cores') ? `机器很忙，负载 ${h.loadAverage1m}，${h.cores} 核` : '见第 00 课的校准'}），个别请求的 TTFT 和 ITL 会偏高。`
      : `${health}，客户端不是瓶颈。`,
  ];
}
