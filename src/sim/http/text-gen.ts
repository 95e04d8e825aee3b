/**
 * A seeded generator of plausible output tokens (common English or Chinese words, commas and
 * sentence ends), and the language check that picks which of the two a prompt gets.
 */
import type { Rng } from '../../rng';
import { EOS_TOKEN_ID } from './chat-template';

/** Output language of the pseudo-text generator. */
export type TextLang = 'en' | 'zh';

/** Produces output tokens and their text, one engine step at a time. */
export interface TextGen {
  /**
   * The next `count` token ids and the text they add. With `eos`, the last token is EOS,
   * which is counted but adds no text (as vLLM skips the EOS text).
   */
  next(count: number, eos: boolean): { ids: number[]; text: string };
}

const EN_WORDS = (
  'the of and to in is that for it as with on be by this are from at an or which can not but all more ' +
  'one when there their will each about how up out them then she many some so these would other into has two time ' +
  'could no make than first been its who now people my made over did down only way find use may water long little ' +
  'very after words called just where most know get through back much before go good new write our used me man too ' +
  'any day same right look think also around another came come work three word must because does part even place ' +
  'well such here take why things help put years different away again off went old number great tell men say small ' +
  'every found still between name should home big give air line set own under read last never us left end along while ' +
  'might next sound below saw something thought both few those always looked show large often together asked house ' +
  'world going want school important until form food keep children feet land side without boy once animals life enough ' +
  'took sometimes four head above kind began almost live page got earth need far hand high year mother light parts ' +
  'country father let night following picture being study second eyes soon times story boys since white days ever paper ' +
  'hard near sentence better best across during today others however sure means knew its try told young miles sun ways ' +
  'thing whole hear example heard several change answer room sea against top turned learn point city play toward five ' +
  'using himself usually model memory server token batch request cache system data time performance'
).split(' ');
const EN_STARTERS = ['The', 'This', 'It', 'In', 'We', 'A', 'When', 'For'];
const ZH_WORDS = (
  '的 是 在 我们 一个 这个 可以 模型 计算 能力 系统 数据 时间 性能 问题 方法 需要 通过 进行 使用 非常 重要 ' +
  '因为 所以 如果 但是 以及 其中 已经 可能 没有 自己 他们 什么 这些 那些 工作 生活 发展 研究 技术 信息 社会 经济 文化 ' +
  '中国 世界 国家 人们 时候 现在 今天 一些 更加 主要 不同 相关 方面 影响 结果 过程 提高 增加 减少 保持 理解 学习 服务 ' +
  '请求 缓存 显存 带宽 内存 处理 生成 输出 输入 速度 效率 资源 任务 用户 环境 条件 情况 部分 整个 简单 复杂 有效 具体 ' +
  '例如 同时 之后 之前 然后 最后 首先 其次 另外 总之 和 与 也 都 就 还 又 很 更 最 不 会 要 能 说 看 做 有 到 对 从 为 把 被 让'
).split(' ');

/** A pool token and its text. */
export interface Tok {
  id: number;
  text: string;
}

/** The tokens a generator draws from, per language. */
export type TextPools = Record<TextLang, { words: Tok[]; first: Tok[]; starters: Tok[]; comma: Tok; stop: Tok }>;

/** The pools, built with `single` (which keeps the candidates that are one token and decode back to themselves). */
export function textPools(single: (candidates: string[]) => Tok[]): TextPools {
  return {
    en: {
      words: single(EN_WORDS.map((w) => ` ${w}`)),
      first: single(EN_STARTERS),
      starters: single(EN_STARTERS.map((w) => ` ${w}`)),
      comma: single([','])[0],
      stop: single(['.'])[0],
    },
    zh: { words: single(ZH_WORDS), first: [], starters: [], comma: single(['，'])[0], stop: single(['。'])[0] },
  };
}

/** Which language a prompt is in: Chinese when ≥ 20 % of its non-space characters are CJK ideographs. */
export function detectLanguage(text: string): TextLang {
  let cjk = 0;
  let other = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if ((c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf)) cjk++;
    else if (c > 0x20) other++;
  }
  return cjk > 0 && cjk >= 0.2 * (cjk + other) ? 'zh' : 'en';
}

/**
 * A seeded generator of output tokens from `pool`: common words, commas and sentence ends.
 * Every pool token decodes to complete UTF-8 on its own, so per-step text is exact and
 * concatenating the steps' text equals decoding all ids at once.
 */
export function createTextGen(pool: TextPools[TextLang], rng: Rng): TextGen {
  let sinceStop = 0;
  let sentenceLen = 0;
  let started = false;
  let afterComma = false;
  const pick = (list: Tok[]) => list[Math.floor(rng() * list.length)];
  const one = (): Tok => {
    if (sinceStop === 0) {
      sentenceLen = 8 + Math.floor(rng() * 14);
      sinceStop = 1;
      const starters = started ? pool.starters : pool.first;
      started = true;
      return pick(starters.length > 0 ? starters : pool.words);
    }
    if (sinceStop >= sentenceLen) {
      sinceStop = 0;
      return pool.stop;
    }
    sinceStop++;
    const comma = !afterComma && sinceStop > 2 && sinceStop < sentenceLen - 1 && rng() < 0.08;
    afterComma = comma;
    return comma ? pool.comma : pick(pool.words);
  };
  return {
    next(count, eos) {
      const ids: number[] = [];
      let text = '';
      for (let i = 0; i < count; i++) {
        if (eos && i === count - 1) {
          ids.push(EOS_TOKEN_ID);
          break;
        }
        const t = one();
        ids.push(t.id);
        text += t.text;
      }
      return { ids, text };
    },
  };
}
