/**
 * Lesson 03 (burst): the sentences its cells used to build inline, computed from the runs (issue #13).
 * - `staticBatchStory`: static versus continuous batching on the same burst, short requests only,
 *   every "A is higher than B" through `compareMetric` (bootstrap interval of the difference).
 * - `queueStory`: where the waiting happened (client or server), from `queueVerdict` and `compareMetric`.
 * Sentences are Simplified Chinese, as the notebook's prose; no number is typed, all come from the runs.
 */
import type { RequestRecord, RunSummary } from '../types';
import { compareMetric, fmtNumber, verdictSentence, type VerdictRun } from './verdict';
import type { QueueVerdict } from './verdict-queue';

/** A measured run as the lesson holds it: a `MeasureResult` (or `LoadedRun`) with a label. */
export interface StoryRun {
  label: string;
  records: readonly RequestRecord[];
  summary: RunSummary;
}

/** Only the requests tagged `tag` of `run` (label kept, summary kept for its health flags). */
export function tagged(run: StoryRun, tag: string): VerdictRun {
  return { label: run.label, records: run.records.filter((r) => r.tag === tag), summary: run.summary };
}

/** What `staticBatchStory` found. */
export interface StaticBatchStory {
  /** Short requests' TTFT p50 and E2E p50, static against continuous; empty when the static point was skipped. */
  comparisons: ReturnType<typeof compareMetric>[];
  /** True when both short-request comparisons are surely higher under static batching. */
  hostage: boolean;
  sentences: string[];
}

/** Why the static point cannot run on a real vLLM, with the source file it rests on. */
export const NO_STATIC_IN_VLLM =
  'vLLM 没有静态批处理模式：V1 的调度器每一步都先排 RUNNING、再用剩下的预算从 WAITING 接纳新请求' +
  '（`vllm/v1/core/sched/scheduler.py` 的 `schedule()`），所以“静态批处理”这一点只能在 LoadLab 的模拟器上演示，' +
  '在真实 vLLM 上跳过。';

/**
 * Static versus continuous batching on the same burst (`cont`, `stat`: the two runs, requests tagged
 * `short`/`long`); `stat` undefined = skipped (a real vLLM). `longTokens` is the long requests' max_tokens,
 * `maxNumSeqs` the batch size both ran with. Pure.
 */
export function staticBatchStory(
  cont: StoryRun,
  stat: StoryRun | undefined,
  opts: { maxNumSeqs: number; longTokens: number; shortTokens: number },
): StaticBatchStory {
  if (!stat) return { comparisons: [], hostage: false, sentences: [NO_STATIC_IN_VLLM] };
  const ttft = compareMetric(tagged(cont, 'short'), tagged(stat, 'short'), 'ttftMs', 50, { name: '短请求 TTFT' });
  const e2e = compareMetric(tagged(cont, 'short'), tagged(stat, 'short'), 'e2eMs', 50, { name: '短请求 E2E' });
  const hostage = ttft.direction === 'higher' && e2e.direction === 'higher';
  const ratio = stat.summary.outputTokensPerSec / cont.summary.outputTokensPerSec;
  const reading = hostage
    ? `静态批处理下，一批 ${opts.maxNumSeqs} 个请求里只要有一个要生成 ${opts.longTokens} 个 token，` +
      `这一批的空位就要等它生成完才能交给下一批；排在后面批次里只要 ${opts.shortTokens} 个 token 的短请求，` +
      '首 token 和完成时间都被这个最长的请求“扣押”：这就是队头阻塞。' +
      '连续批处理每一步都把做完的请求移出、把等待的请求补进空位，短请求不必等别人的长回答。'
    : '这次的数据没有显示静态批处理让短请求更慢（见上面两句的区间）：看看下面两张甘特图和测量健康标记。';
  return {
    comparisons: [ttft, e2e],
    hostage,
    sentences: [
      verdictSentence(ttft),
      verdictSentence(e2e),
      reading,
      `同样的请求、同样的 token：静态批处理的输出吞吐是连续批处理的 ${ratio.toFixed(2)} 倍（整次运行各一个数，没有区间）。`,
      `静态批处理只是模拟器为这个演示提供的模式（\`--loadlab-static-batching\`），${NO_STATIC_IN_VLLM.slice(0, -1)}。`,
    ],
  };
}

/** Inputs of `queueStory`. */
export interface QueueStoryInput {
  /** One `queueVerdict` per run, in the order [happy (closed loop), burst, …]. */
  queues: readonly QueueVerdict[];
  burst: StoryRun;
  /** The burst's size (requests). */
  burstSize: number;
  /** The client-capped burst and the server-capped (max_num_seqs) burst, for the last comparison. */
  clientCapped: StoryRun;
  serverCapped: StoryRun;
}

/** Where the waiting happened: client or server (lesson 03 §9). Pure. */
export function queueStory(x: QueueStoryInput): string[] {
  const [happyQueue, burstQueue] = x.queues;
  const busyClient = x.burst.summary.health?.clientBound === true;
  const q = x.burst.summary.queueMs;
  // within ±20 % counts as "about the same"
  const twoCaps = compareMetric(x.clientCapped, x.serverCapped, 'ttftFromIntendedMs', 99, { thresholdPct: 20 });
  return [
    ...x.queues.map((v) => v.sentence),
    burstQueue.finding === 'none'
      ? '突发：请求在 t = 0 就离开了客户端，排队全部在服务器里，已经包含在 `ttftMs` 里。'
      : burstQueue.finding === 'undecided'
        ? '突发：客户端有没有让请求等，本次数据不足以判断（见上面突发那一句的区间）。'
        : `突发里的这段等待是负载生成器自己的，不是积压：${x.burstSize} 个请求的 \`queueMs\` 在 ` +
          `${fmtNumber(q.min)}–${fmtNumber(q.max)} ms 之间` +
          `${busyClient ? '（这次客户端被标记为瓶颈：机器繁忙，事件循环延迟高，所以发得比平时慢）' : ''}。服务器里的排队已经包含在 \`ttftMs\` 里。`,
    happyQueue.finding === 'none'
      ? '闭环：客户端在空位出现时及时补发了，两种 TTFT 重合，和设计一致。'
      : happyQueue.finding === 'queued'
        ? '闭环：按设计两种 TTFT 应当重合，但这次客户端补发晚了（见上面闭环那一句的区间），这段等待同样不在 `ttftMs` 里。'
        : '闭环：两种 TTFT 是否重合，本次数据不足以判断（见上面闭环那一句的区间）。',
    `${verdictSentence(twoCaps)}只看 \`ttftMs\`，客户端限流那一组会被误读成“很快”。`,
  ];
}
