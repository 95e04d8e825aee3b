/**
 * Workload builders: WHAT is sent. Each returns `RequestSpec`s (src/types.ts) with a `tag`
 * that stats and plots can group by: `'short'`/`'long'`, `'shared'`/`'unique'`.
 * All builders are pure and seeded where they draw anything.
 */

import { seededRng } from '../rng';
import type { Api, RequestSpec } from '../types';
import { HELLO_PROMPT, LONG_PROMPT } from './prompts';
import { timeline, type TimelineShape } from '../schedule/shapes';

/** Options shared by the builders. */
export interface SpecOptions {
  /** Endpoint; default `'chat'`. */
  api?: Api;
  /** Output cap (`max_tokens`). */
  maxTokens?: number;
  /** Force exactly `maxTokens` output tokens (`ignore_eos` + `min_tokens`); default false. */
  fixedOutput?: boolean;
  /** Sampling temperature; default: the server's. */
  temperature?: number;
  tag?: string;
  /** A system prompt (chat: a system message; completions: prepended with a blank line). */
  system?: string;
}

/** One request for `text`, as a chat user message (default) or a completions prompt. */
export function makeRequest(text: string, opts: SpecOptions = {}): RequestSpec {
  const api = opts.api ?? 'chat';
  const spec: RequestSpec = { api };
  if (api === 'chat') {
    spec.messages = opts.system
      ? [
          { role: 'system', content: opts.system },
          { role: 'user', content: text },
        ]
      : [{ role: 'user', content: text }];
  } else {
    spec.prompt = opts.system ? `${opts.system}\n\n${text}` : text;
  }
  if (opts.maxTokens !== undefined) {
    if (!Number.isInteger(opts.maxTokens) || opts.maxTokens < 1) {
      throw new TypeError(`maxTokens must be an integer ≥ 1, got ${opts.maxTokens}`);
    }
    spec.maxTokens = opts.maxTokens;
  }
  if (opts.fixedOutput) {
    if (spec.maxTokens === undefined) throw new TypeError('fixedOutput needs maxTokens: say how many tokens to force');
    spec.fixedOutput = true;
  }
  if (opts.temperature !== undefined) spec.temperature = opts.temperature;
  if (opts.tag !== undefined) spec.tag = opts.tag;
  return spec;
}

/** `n` copies of one request (the course's "same prompt N times"). */
export function repeatRequest(n: number, text: string, opts: SpecOptions = {}): RequestSpec[] {
  checkN(n);
  const spec = makeRequest(text, opts);
  return Array.from({ length: n }, () => ({ ...spec }));
}

function checkN(n: number): void {
  if (!Number.isInteger(n) || n < 1) throw new TypeError(`n must be an integer ≥ 1, got ${n}`);
}

/** Options of `longPlusShort`. */
export interface LongPlusShortOptions extends Omit<SpecOptions, 'tag' | 'system'> {
  /** Default the course's ≈4k-token `LONG_PROMPT`. */
  longPrompt?: string;
  /** Default `'你好'`. */
  shortPrompt?: string;
  /** Short requests; default 20. */
  shortCount?: number;
  /** When the shorts are sent, ms after the long one; default 50. */
  shortAtMs?: number;
}

/**
 * The course's chunked-prefill timeline: one long prompt at 0 ms (tag `'long'`), then
 * `shortCount` short ones together at `shortAtMs` (tag `'short'`), all with max_tokens 10
 * by default. Pass it as the run's `shape`; it carries its own requests.
 */
export function longPlusShort(opts: LongPlusShortOptions = {}): TimelineShape {
  const shortCount = opts.shortCount ?? 20;
  const shortAtMs = opts.shortAtMs ?? 50;
  checkN(shortCount);
  const base = { ...opts, maxTokens: opts.maxTokens ?? 10 };
  const long = makeRequest(opts.longPrompt ?? LONG_PROMPT, { ...base, tag: 'long' });
  const short = makeRequest(opts.shortPrompt ?? HELLO_PROMPT, { ...base, tag: 'short' });
  return timeline([
    { atMs: 0, request: long },
    ...Array.from({ length: shortCount }, () => ({ atMs: shortAtMs, request: { ...short } })),
  ]);
}

/** Options of `shortLongMix`. */
export interface MixOptions extends Omit<SpecOptions, 'tag'> {
  /** Fraction of long requests; default 0.1 (the course's 90/10). */
  longFraction?: number;
  /** Default `'你好'`. */
  shortPrompt?: string;
  /** Default the course's ≈4k-token `LONG_PROMPT`. */
  longPrompt?: string;
  /** Seed of the positions of the long ones; default 0. */
  seed?: number;
}

/**
 * `n` requests, `round(n·longFraction)` of them long (tag `'long'`) at seeded random
 * positions, the rest short (tag `'short'`). The exact count keeps small runs at 90/10.
 * maxTokens defaults to 10, as the course's mix.
 */
export function shortLongMix(n: number, opts: MixOptions = {}): RequestSpec[] {
  checkN(n);
  const f = opts.longFraction ?? 0.1;
  if (!(f >= 0 && f <= 1)) throw new TypeError(`longFraction must be in [0, 1], got ${f}`);
  const base = { ...opts, maxTokens: opts.maxTokens ?? 10 };
  const long = makeRequest(opts.longPrompt ?? LONG_PROMPT, { ...base, tag: 'long' });
  const short = makeRequest(opts.shortPrompt ?? HELLO_PROMPT, { ...base, tag: 'short' });
  const idx = Array.from({ length: n }, (_, i) => i);
  const rng = seededRng(opts.seed ?? 0);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  const longAt = new Set(idx.slice(0, Math.round(n * f)));
  return Array.from({ length: n }, (_, i) => ({ ...(longAt.has(i) ? long : short) }));
}

/** Questions that follow a (shared or unique) system prompt. */
export const FOLLOW_UP_QUESTIONS: readonly string[] = [
  '请用三句话总结上面的要点。',
  '上面提到的方法有哪些局限？',
  '如果显存减半，会发生什么？',
  '请给出一个具体的例子。',
  '这对推理延迟有什么影响？',
];

/** Options of the prefix-caching builders. */
export interface PrefixOptions extends Omit<SpecOptions, 'tag' | 'system'> {
  /** The system prompt (1–3k tokens for the lesson; build one with `promptOfTokens`). */
  systemPrompt: string;
  /** User questions, cycled; default `FOLLOW_UP_QUESTIONS`. Each gets its request number. */
  questions?: readonly string[];
}

function question(i: number, qs: readonly string[]): string {
  return `${qs[i % qs.length]}（第 ${i + 1} 问）`;
}

/**
 * `n` requests that share one system prompt (tag `'shared'`): with prefix caching the
 * server computes that prefix's KV once and later requests hit the cache.
 */
export function sharedPrefixRequests(n: number, opts: PrefixOptions): RequestSpec[] {
  checkN(n);
  const qs = opts.questions ?? FOLLOW_UP_QUESTIONS;
  return Array.from({ length: n }, (_, i) => makeRequest(question(i, qs), { ...opts, system: opts.systemPrompt, tag: 'shared' }));
}

/**
 * `n` requests whose system prompts are the same length but unique (tag `'unique'`): each
 * starts with its own marker. Prefix-cache blocks are hashed in a chain from the FIRST token,
 * so a difference at the start makes every block a miss.
 */
export function uniquePrefixRequests(n: number, opts: PrefixOptions): RequestSpec[] {
  checkN(n);
  const qs = opts.questions ?? FOLLOW_UP_QUESTIONS;
  return Array.from({ length: n }, (_, i) =>
    makeRequest(question(i, qs), { ...opts, system: `[会话 ${i + 1}] ${opts.systemPrompt}`, tag: 'unique' }),
  );
}
