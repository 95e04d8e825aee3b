/**
 * Lesson 05's narrative builders (issue #13): what the KV-pressure runs say against the
 * calculator's prediction and the course's diagnosis rule ("P99 TPOT > 200 ms ⇒ severe
 * swapping"), and what `nvidia-smi` can show on this target. Sentences are computed from the
 * runs; comparisons of two runs go through `compareValues`/`verdictSentence` (interval of the
 * difference, stated threshold), never a bare "A > B".
 */
import { percentile } from '../stats/percentile';
import type { RunSummary } from '../types';
import { compareValues, fmtNumber, verdictSentence } from './verdict';

/** One measured point of lesson 05, reduced to what the sentences use (times in ms). */
export interface KvPoint {
  /** How the sentences name the point, e.g. `'util 0.95 (fits)'`. */
  label: string;
  /** Increase of `vllm:num_preemptions_total` over the run. */
  preemptions: number;
  /** Highest KV-cache usage seen in `/metrics`, 0..1. */
  maxKv: number;
  /** Most requests running at once (`/metrics`). */
  maxRunning: number;
  /** Inter-token gaps longer than the stall threshold. */
  stalls: number;
  /** Per request, the course's TPOT: E2E / output tokens. */
  courseTpot: readonly number[];
  /** Per request, vLLM's TPOT: (E2E − TTFT)/(n − 1) (`vllm/benchmarks/serve.py`). */
  benchTpot: readonly number[];
  /** Every inter-token gap of the run. */
  itl: readonly number[];
  /** The same gaps by request; when both points have them, the ITL verdict resamples requests, not gaps. */
  itlByRequest?: readonly (readonly number[])[];
  /** TTFT of every successful request. */
  ttft: readonly number[];
  /** The run's health flags (a disturbed run is compared at p50). */
  health?: RunSummary['health'];
}

/** What `kvVerdictSentences` needs besides the points. */
export interface KvVerdictInput {
  fits: KvPoint;
  recompute: KvPoint;
  /** Every measured point, in table order (fits, recompute, and swap when measured). */
  all: readonly KvPoint[];
  fitUtil: number;
  tightBlocks: number;
  /** Requests that fit at their peak in `tightBlocks`. */
  peakFit: number;
  /** Requests whose whole prompt fits in `tightBlocks` at once. */
  promptsThatFit: number;
  stallMs: number;
  /** Predicted time to prefill every prompt of the burst, ms. */
  drainMs: number;
  /** Predicted length of one full 2048-token step, ms. */
  fullStepMs: number;
  outputTokens: number;
}

const sample = (p: KvPoint, values: readonly number[]) => ({ label: p.label, values, health: p.health });
const itlSample = (p: KvPoint) => ({ ...sample(p, p.itl), ...(p.itlByRequest ? { groups: p.itlByRequest } : {}) });

/** The course's diagnosis rule against both TPOT definitions, for every measured point. */
function courseRuleSentence(x: KvVerdictInput): string {
  const p99 = (xs: readonly number[]) => percentile(xs, 99);
  const says = x.all.filter((p) => p99(p.courseTpot) > 200);
  const preempted = x.all.filter((p) => p.preemptions > 0);
  const tpot = compareValues(sample(x.fits, x.fits.benchTpot), sample(x.recompute, x.recompute.benchTpot), 50, {
    name: 'vLLM 的 TPOT',
    thresholdPct: 10,
  });
  return (
    `**课程的诊断规则**（P99 TPOT > 200 ms ⇒ 严重 swapping）：按课程自己的 TPOT 定义（E2E / n），${x.all.map((p) => p.label).join(' / ')} 的 P99 分别为 ` +
    `${x.all.map((p) => fmtNumber(p99(p.courseTpot))).join(' / ')} ms；按 vLLM 的定义（(E2E − TTFT)/(n − 1)）为 ` +
    `${x.all.map((p) => fmtNumber(p99(p.benchTpot))).join(' / ')} ms。` +
    (says.length
      ? `规则在 ${says.map((p) => p.label).join('、')} 上成立。`
      : `没有一次超过 200 ms${preempted.length ? `——包括真的发生了抢占的 ${preempted.length} 个测量点` : ''}。每个请求的 TPOT 是 ${x.outputTokens} 个间隔的平均，一两次长停顿被摊薄了。`) +
    `${verdictSentence(tpot)}要发现抢占，看 \`num_preemptions\`、ITL 的最大值和时间线上的停顿，不要看平均 TPOT。`
  );
}

/**
 * The lesson's reading of its runs (Simplified Chinese, one paragraph each): the fitting point,
 * the tight point, the course's rule, and queueing (TTFT p50 and ITL p99 of the two points
 * compared with a stated ±25 % "no meaningful change" band).
 */
export function kvVerdictSentences(x: KvVerdictInput): string[] {
  const { fits, recompute } = x;
  const itlMax = Math.max(...recompute.itl);
  const itlP50 = percentile(recompute.itl, 50);
  const ttft = compareValues(sample(fits, fits.ttft), sample(recompute, recompute.ttft), 50, { name: 'TTFT', thresholdPct: 25 });
  const itl = compareValues(itlSample(fits), itlSample(recompute), 99, { name: 'ITL', thresholdPct: 25 });
  return [
    `**装得下（利用率 ${x.fitUtil}）**：抢占 ${fits.preemptions} 次，KV 使用率最高 ${(100 * fits.maxKv).toFixed(1)}%。` +
      (fits.preemptions === 0 ? '与计算器的预测一致：课程的设置在 4090 + Int4 上根本触发不了 swap。' : '与计算器的预测不符。'),
    `**装不下（${x.tightBlocks} 块，重算）**：抢占 ${recompute.preemptions} 次，KV 使用率最高 ${(100 * recompute.maxKv).toFixed(1)}%，` +
      `同时运行的请求最多 ${recompute.maxRunning} 个（装得下时 ${fits.maxRunning} 个；峰值时只容纳 ${x.peakFit} 个，prompt 放得下 ${x.promptsThatFit} 个）；` +
      `最长的 token 间隔 ${fmtNumber(itlMax)} ms，是 ITL 中位数的 ${(itlMax / itlP50).toFixed(0)} 倍，` +
      `超过两步阈值（${fmtNumber(x.stallMs)} ms）的间隔 ${recompute.stalls} 个（装得下时 ${fits.stalls} 个）。` +
      (recompute.preemptions > 0 ? '预测的抢占发生了。' : '没有发生抢占，与预测不符。'),
    courseRuleSentence(x),
    `**排队**：预测的预填充排队（与 KV 无关）让 TTFT p50 ≈ ${fmtNumber(x.drainMs / 2)} ms，ITL p99 约等于一个 2048-token 步（≈ ${fmtNumber(x.fullStepMs)} ms）。` +
      `${verdictSentence(ttft)}${verdictSentence(itl)}` +
      'V1 用“整段 prompt 放得下才接纳”把其余请求挡在 WAITING 里，块用完时才抢占最新的请求：KV 压力首先改变的是“同时运行的请求数”和少数被抢占请求的长停顿。',
  ];
}

/** What `gpuWatchNote` needs: is this the simulator, and did the runs sample `nvidia-smi`. */
export interface GpuWatchInput {
  simulated: boolean;
  /** Number of `nvidia-smi` samples over the measured runs. */
  gpuSamples: number;
}

/**
 * The short guide to watching the GPU during lesson 05 (Simplified Chinese): on the simulator,
 * that there is nothing to watch; on a real GPU, the `nvidia-smi dmon -s put` columns and what
 * recompute and swap look like there; the long version is `docs/autodl.md`.
 */
export function gpuWatchNote(x: GpuWatchInput): string[] {
  if (x.simulated) {
    return [
      '这台服务器是**模拟器**：没有 GPU，也没有 PCIe 流量，所以这一节没有可看的，`nvidia-smi` 看到的（如果有）是别的程序。' +
        '模拟器里 swap 的 PCIe 搬运只是按带宽计费的时间，不会出现在任何硬件计数器上。',
      '在真实的 4090 上重跑本课时，另开一个终端运行 `nvidia-smi dmon -s put -d 1`，读法见 `docs/autodl.md` 的“看 GPU”一节。',
    ];
  }
  return [
    '另开一个终端运行 `nvidia-smi dmon -s put -d 1`（每秒一行）：`sm` % 是“有内核在跑”的时间比例（不是算力利用率），' +
      '`mem` % 是显存控制器忙的时间比例（不是显存占用），`rxpci` / `txpci` 是 PCIe 接收（主机 → GPU）/ 发送（GPU → 主机）的 MB/s。',
    '普通解码和重算时 PCIe 几乎不动；只有 V0 的 swap 会在换出时让 `txpci`、换入时让 `rxpci` 出现尖峰。' +
      '显存占用（`watch -n 0.5 nvidia-smi`）在 KV 压力下几乎不变：KV 缓存在启动时就整块分配好了，KV 用了多少要看 `/metrics`。详见 `docs/autodl.md`。',
    x.gpuSamples > 0
      ? `LoadLab 在这几次测量中采了 ${x.gpuSamples} 个 \`nvidia-smi\` 样本（利用率、显存，以及每秒一次的 PCIe），下表是它们的汇总。`
      : '这次测量没有 `nvidia-smi` 样本（这台机器上找不到 `nvidia-smi`）：LoadLab 不会编造 GPU 数据。',
  ];
}

/** What `kvPredictionSentences` needs: the calculator's numbers (tokens, blocks, GiB). */
export interface KvPredictionInput {
  n: number;
  fitUtil: number;
  /** KV tokens at `fitUtil` (4090 profile estimate) and what all `n` requests need at their peak. */
  fitTokens: number;
  demandTokens: number;
  weightsGiB: number;
  tightBlocks: number;
  peakFit: number;
  blocksPerRequest: number;
  blockSize: number;
  promptBlocks: number;
  outputTokens: number;
  promptsThatFit: number;
  admitSteps: number;
  /** KV blocks at utilisation 0.4 (estimate) and the lowest utilisation that starts at `maxModelLen`. */
  util04Blocks: number;
  minUtil: number;
  maxModelLen: number;
}

/** The calculator's predictions, said before measuring (Simplified Chinese, three paragraphs). */
export function kvPredictionSentences(x: KvPredictionInput): string[] {
  const k = (t: number) => (t / 1000).toFixed(0);
  return [
    `**预测（装得下）。** 在课程的 \`gpu_memory_utilization=${x.fitUtil}\` 下，按 4090 配置估算 KV 能装约 ${k(x.fitTokens)}k 个 token，` +
      `而 ${x.n} 个请求全部停在峰值也只要约 ${k(x.demandTokens)}k 个：**完全装得下，不会发生抢占，也就不会有 swap**。` +
      `课程没有算这笔账：4090 上的 Int4 模型只占约 ${x.weightsGiB.toFixed(1)} GiB，剩下的大部分显存都给了 KV。`,
    `**预测（装不下）。** \`--num-gpu-blocks-override ${x.tightBlocks}\`（${x.peakFit} × ${x.blocksPerRequest} + 1，约 ${k(x.tightBlocks * x.blockSize)}k 个 token）` +
      `在峰值时只容纳 ${x.peakFit} 个请求。但 V1 接纳一个请求时只检查它的整段 prompt（${x.promptBlocks} 块）放不放得下，不为之后的 ${x.outputTokens} 个 token 预留：` +
      `可用块放得下 ${x.promptsThatFit} 个请求的 prompt，预填充（prefill）它们只要约 ${x.admitSteps} 步，远少于生成 ${x.outputTokens} 个 token 的 ${x.outputTokens} 步，` +
      `所以在第一个请求结束之前，就有 ${x.promptsThatFit} 个请求一起变长；到峰值它们共需 ${x.promptsThatFit * x.blocksPerRequest} 块，多于可用的 ${x.tightBlocks - 1} 块：` +
      `${x.promptsThatFit > x.peakFit ? '**生成途中一定会有请求被抢占**。' : '预测不会抢占（检查 PEAK_FIT）。'}`,
    `对照：降低利用率也能让它装不下——按 4090 配置，利用率 0.4 约给 ${x.util04Blocks} 块（峰值时容纳 ${Math.floor(Math.max(0, x.util04Blocks - 1) / x.blocksPerRequest)} 个请求）；` +
      `max_model_len ${x.maxModelLen} 时利用率至少约 ${x.minUtil.toFixed(3)} 才能启动。但这些块数是估计值，换一张卡就变；指定块数则在任何 GPU 上都一样。`,
  ];
}

/** What `recoverySentences` needs (ms; `swap` absent where it was not measured). */
export interface RecoveryInput {
  recompute: KvPoint;
  swap?: KvPoint;
  /** `'V0'` when the swap point ran on a real vLLM V0, else it was simulated. */
  swapHow?: string;
  recomputeMs: number;
  swapRoundTripMs: number;
  swapBlocks: { out?: number; in?: number; maxSwappedRequests?: number };
}

/** Swap against recompute: the prediction, the longest stalls, and the ITL p99 verdict (Simplified Chinese). */
export function recoverySentences(x: RecoveryInput): string[] {
  const longest = (p: KvPoint) => Math.max(...p.itl);
  const rt = x.swapRoundTripMs.toFixed(1);
  const predicted = `预测：一次重算约 ${fmtNumber(x.recomputeMs)} ms 的 GPU 时间，一次 swap 往返约 ${rt} ms 的 PCIe 时间。`;
  if (!x.swap) {
    return [
      predicted,
      `实测最长停顿（重算）：${fmtNumber(longest(x.recompute))} ms` +
        (longest(x.recompute) > 3 * x.recomputeMs
          ? '，远大于一次重算本身：停顿主要是被抢占的请求在 WAITING 里等空闲块的时间。'
          : '，与一次重算本身的代价同一量级。') +
        '这个服务器上没有测 swap（见 2.1 节），所以没有可比的 swap 停顿。',
    ];
  }
  const b = x.swapBlocks;
  const itl = compareValues(itlSample(x.recompute), itlSample(x.swap), 99, {
    name: 'ITL',
    thresholdPct: 10,
  });
  return [
    predicted +
      (b.out !== undefined ? `这次 swap 模式共换出 ${b.out} 块、换入 ${b.in} 块（模拟器计数）。` : '') +
      (b.maxSwappedRequests !== undefined
        ? `vLLM V0 的 \`/metrics\` 采样里，同时处于换出状态的请求最多 ${b.maxSwappedRequests} 个（\`vllm:num_requests_swapped\`）。`
        : ''),
    `实测最长停顿（${x.swapHow === 'V0' ? 'vLLM V0，真实测量' : '模拟'}）：重算 ${fmtNumber(longest(x.recompute))} ms，swap ${fmtNumber(longest(x.swap))} ms。` +
      (Math.min(longest(x.recompute), longest(x.swap)) > 3 * x.recomputeMs
        ? '两者都远大于一次重算或一次搬运本身：停顿主要是被抢占的请求在 WAITING 里等空闲块的时间，恢复方式只决定其中一小部分。'
        : '停顿与一次恢复本身的代价同一量级。') +
      verdictSentence(itl),
    (x.swapHow === 'V0'
      ? '这是真实的 V0：swap 真的经过 PCIe（3.4 节 nvidia-smi 的 PCIe 吞吐）。'
      : '在模拟器里，swap 按 4090 的 PCIe 4.0 x16（约 25 GB/s）和每次拷贝的固定开销计费。swap 确实要走 PCIe（课程说“拼的是 PCIe 带宽”），但') +
      `按预测，一次往返只要约 ${rt} ms；停顿比它长得多时，决定停顿长短的是排队，而不是 PCIe。`,
  ];
}
