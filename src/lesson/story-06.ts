/**
 * Lesson 06's narrative builder (issue #13): what the three prefix-caching runs say against the
 * prediction (hit tokens from the tokenizer, TTFT from the step-time model). Comparisons of two
 * runs go through `compareValues`/`verdictSentence` (bootstrap interval of the difference, a
 * stated threshold), never a bare "A > B".
 */
import type { RunSummary } from '../types';
import { compareValues, fmtNumber, verdictSentence } from './verdict';

/** One run of lesson 06, reduced to what the sentences use. */
export interface PrefixPoint {
  /** How the sentences name the run, e.g. `'shared prefix, cache on'`. */
  label: string;
  /** TTFT of every request after the first (ms): the first one always misses. */
  ttftAfterFirst: readonly number[];
  /** TTFT of the first request (ms). */
  firstTtftMs: number;
  /** Prompt tokens looked up in the prefix cache over the run (`vllm:prefix_cache_queries_total`). */
  queriedTokens: number;
  /** Prompt tokens found there (`vllm:prefix_cache_hits_total`). */
  hitTokens: number;
  health?: RunSummary['health'];
}

/** What `prefixVerdictSentences` needs. */
export interface PrefixVerdictInput {
  unique: PrefixPoint;
  shared: PrefixPoint;
  nocache: PrefixPoint;
  /** Server hit rate of the shared run after its first request, 0..1 (NaN without the counters). */
  sharedHitRateAfterFirst: number;
  /** Predicted hit tokens per shared request, and its prompt length (tokens). */
  predictedHitTokens: number;
  promptTokens: number;
  /** Predicted TTFT with the prefix cached / without a hit (ms). */
  predHitMs: number;
  predMissMs: number;
}

const side = (p: PrefixPoint) => ({ label: p.label, values: p.ttftAfterFirst, health: p.health });

/**
 * The lesson's reading of its runs (Simplified Chinese, one paragraph each): hit rate against the
 * prediction (±5 percentage points), TTFT shared vs unique, the cache-off control vs unique (a
 * stated ±30 % "no meaningful change" band), and why the unique prefixes never hit.
 */
export function prefixVerdictSentences(x: PrefixVerdictInput): string[] {
  const predRate = x.predictedHitTokens / x.promptTokens;
  const rate = x.sharedHitRateAfterFirst;
  const sharedVsUnique = compareValues(side(x.unique), side(x.shared), 50, { name: 'TTFT' });
  const controlVsUnique = compareValues(side(x.unique), side(x.nocache), 50, { name: 'TTFT', thresholdPct: 30 });
  return [
    Number.isNaN(rate)
      ? '**命中率**：这个服务器的 `/metrics` 没有前缀缓存的 token 计数器（vLLM V0 只有命中率仪表 `vllm:gpu_prefix_cache_hit_rate`，见第 3 节前的说明），所以这里读不出命中率，只能看下面的 TTFT。'
      : `**命中率**：共享前缀时，第一个请求之后服务器的命中率为 ${(100 * rate).toFixed(1)}%（预测 ${(100 * predRate).toFixed(1)}%：每个请求 ${x.promptTokens} 个 token 里命中 ${x.predictedHitTokens} 个）。` +
        (Math.abs(rate - predRate) < 0.05 ? '与预测一致（相差不到 5 个百分点）。' : '与预测相差超过 5 个百分点。'),
    `**TTFT**（第一个请求之后）：${verdictSentence(sharedVsUnique)}` +
      `预测：共享 ${fmtNumber(x.predHitMs)} ms，独立 ${fmtNumber(x.predMissMs)} ms。` +
      `共享组的第一个请求 TTFT = ${fmtNumber(x.shared.firstTtftMs)} ms：它要把整段前缀算一遍，和独立前缀一样慢。`,
    `**对照组**（前缀缓存关闭）：查询 ${x.nocache.queriedTokens} token、命中 ${x.nocache.hitTokens} token。${verdictSentence(controlVsUnique)}` +
      '关掉缓存后，共享前缀的请求和独立前缀一样要整段预填充：省下的时间来自缓存，而不是请求内容本身。',
    `**独立前缀**也开着缓存，但命中 ${x.unique.hitTokens} token：块哈希从第一个 token 开始链式计算（\`vllm/v1/core/kv_cache_utils.py\` 的 \`hash_block_tokens\`），开头差一个字，后面整段都不命中。` +
      '所以要让前缀缓存生效，共享的部分必须放在 prompt 的**最前面**，而且逐字相同（时间戳、请求编号之类放到后面）。',
  ];
}
