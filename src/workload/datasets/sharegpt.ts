/**
 * ShareGPT-format conversations: a JSON array of `{id, conversations: [{from, value}, ...]}`.
 *
 * Single-turn use follows vLLM's `ShareGPTDataset` (vllm/benchmarks/datasets/sharegpt.py): keep
 * entries with ≥ 2 turns, shuffle them with the seed, take the FIRST turn as the prompt and the
 * second turn's length as the output length (unless `outputLen` is given, vLLM's
 * `--sharegpt-output-len`), and drop pairs that `is_valid_sequence` rejects (prompt or output
 * under 4 tokens, prompt over 1024, both over 2048; vllm/benchmarks/datasets/utils.py), then
 * oversample to `numPrompts`. Deviation: lengths are `estimateTokens` estimates, not the model
 * tokenizer's counts, so an entry near a bound may be kept or dropped differently than vLLM would.
 *
 * Multi-turn: `conversationRequests` turns a conversation into one request per user turn, each
 * carrying the earlier turns (the dataset's own answers) as history: all sent independently.
 * `sessionScripts` feeds the `sessions` load shape (src/schedule/sessions.ts) instead: each turn is
 * sent after the live answer to the previous one, with the live answers as history, as vLLM's
 * benchmarks/multi_turn/benchmark_serving_multi_turn.py does.
 */

import { seededRng } from '../../rng';
import type { SessionScript } from '../../schedule/sessions';
import type { ChatMessage } from '../../types';
import { estimateTokens } from '../prompts';
import { arrayEntryLines, DatasetError, parseJsonAt, readDatasetText } from './dataset-error';
import { type SampleRequest, shuffled, takeOrOversample } from './sample';

/** One conversation, roles mapped to the chat API's. */
export interface Conversation {
  /** The entry's `id`, else its position (`#3`). */
  id: string;
  /** Turns in order: ShareGPT `human`/`user` → user, `gpt`/`chatgpt`/`bard`/`bing`/`assistant` → assistant. */
  turns: ChatMessage[];
}

const ROLES: Record<string, ChatMessage['role']> = {
  human: 'user',
  user: 'user',
  gpt: 'assistant',
  chatgpt: 'assistant',
  bard: 'assistant',
  bing: 'assistant',
  assistant: 'assistant',
  system: 'system',
};

const SHAPE =
  'a ShareGPT file is a JSON array of {"id": "...", "conversations": [{"from": "human", "value": "..."}, {"from": "gpt", "value": "..."}]}';

/** Parse ShareGPT JSON text (see the module comment); a wrong shape throws DatasetError naming the entry. */
export function parseShareGpt(text: string, file: string): Conversation[] {
  const data = parseJsonAt(text, file, SHAPE);
  if (!Array.isArray(data)) throw new DatasetError(`expected a JSON array at the top; ${SHAPE}`, { file, line: 1 });
  const lines = arrayEntryLines(text);
  return data.map((entry: unknown, i): Conversation => {
    const where = `entry ${i}`;
    const at = { file, ...(lines[i] !== undefined ? { line: lines[i] } : {}) };
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new DatasetError(`${where} is not an object; ${SHAPE}`, at);
    }
    const e = entry as { id?: unknown; conversations?: unknown };
    const id = typeof e.id === 'string' || typeof e.id === 'number' ? String(e.id) : `#${i}`;
    if (e.conversations === undefined) return { id, turns: [] }; // vLLM skips it
    if (!Array.isArray(e.conversations)) {
      throw new DatasetError(`${where} (id ${id}): "conversations" must be an array of {"from", "value"}`, at);
    }
    const turns = e.conversations.map((t: unknown, k): ChatMessage => {
      const turn = t as { from?: unknown; value?: unknown } | null;
      if (turn === null || typeof turn !== 'object' || typeof turn.value !== 'string') {
        throw new DatasetError(
          `${where} (id ${id}) turn ${k}: needs a string "value", got ${JSON.stringify(t)?.slice(0, 80)}`,
          at,
        );
      }
      const role = ROLES[String(turn.from ?? '').toLowerCase()];
      if (!role) {
        throw new DatasetError(
          `${where} (id ${id}) turn ${k}: unknown "from" ${JSON.stringify(turn.from)}; use human, gpt or system`,
          at,
        );
      }
      return { role, content: turn.value };
    });
    return { id, turns };
  });
}

/** Read and parse a ShareGPT JSON file (see `parseShareGpt`). */
export function readShareGpt(file: string): Conversation[] {
  return parseShareGpt(readDatasetText(file, 'ShareGPT file'), file);
}

/** Options of `sampleShareGpt`. */
export interface ShareGptOptions {
  /** Requests wanted (vLLM's `--num-prompts`). */
  numPrompts: number;
  /** Shuffle and oversample seed; default 0 (vLLM's `--seed`). */
  seed?: number;
  /** Fixed output length for every request (vLLM's `--sharegpt-output-len`); default the second turn's estimated length. */
  outputLen?: number;
}

/** vLLM's `is_valid_sequence` with its default bounds (vllm/benchmarks/datasets/utils.py). */
export function isValidSequence(promptLen: number, outputLen: number, skipMinOutput = false): boolean {
  return !(promptLen < 4 || (!skipMinOutput && outputLen < 4) || promptLen > 1024 || promptLen + outputLen > 2048);
}

/**
 * Single-turn requests from the first two turns of each conversation, as vLLM's ShareGPTDataset
 * (see the module comment). `dropped` counts the pairs `isValidSequence` rejected.
 */
export function sampleShareGpt(
  convs: readonly Conversation[],
  opts: ShareGptOptions,
): { samples: SampleRequest[]; dropped: number } {
  const rng = seededRng(opts.seed ?? 0);
  const usable = shuffled(
    convs.filter((c) => c.turns.length >= 2),
    rng,
  );
  const samples: SampleRequest[] = [];
  let dropped = 0;
  for (const c of usable) {
    if (samples.length >= opts.numPrompts) break;
    const promptTokens = estimateTokens(c.turns[0].content);
    const outputTokens = opts.outputLen ?? estimateTokens(c.turns[1].content);
    if (!isValidSequence(promptTokens, outputTokens, opts.outputLen !== undefined)) {
      dropped++;
      continue;
    }
    samples.push({ prompt: c.turns[0].content, promptTokens, outputTokens });
  }
  return { samples: takeOrOversample(samples, opts.numPrompts, rng), dropped };
}

/**
 * One request per user turn of `conv`: turn k's request carries every earlier turn (system,
 * user and the dataset's assistant answers) as history, and asks for the length of the dataset's
 * answer to it (`outputLen` overrides). Tagged `turn-1`, `turn-2`, ….
 */
export function conversationRequests(conv: Conversation, outputLen?: number): SampleRequest[] {
  const out: SampleRequest[] = [];
  conv.turns.forEach((t, k) => {
    if (t.role !== 'user') return;
    const history = conv.turns.slice(0, k);
    const answer = conv.turns[k + 1]?.role === 'assistant' ? conv.turns[k + 1].content : '';
    const promptTokens = [...history, t].reduce((sum, m) => sum + estimateTokens(m.content), 0);
    const sample: SampleRequest = {
      prompt: t.content,
      promptTokens,
      outputTokens: outputLen ?? Math.max(1, estimateTokens(answer)),
      tag: `turn-${out.length + 1}`,
    };
    if (history.length > 0) sample.history = history;
    out.push(sample);
  });
  return out;
}

/** Options of `sessionScripts`. */
export interface SessionScriptOptions {
  /** Conversations wanted (no oversampling: fewer usable ones give fewer). */
  numConversations: number;
  /** Shuffle seed; default 0. */
  seed?: number;
  /** Output length of every turn; default each turn's dataset answer, estimated (vLLM's `--limit-max-tokens` default). */
  outputLen?: number;
  /** Force that output length (`ignore_eos` + `min_tokens`); default false. */
  ignoreEos?: boolean;
}

/**
 * The turns of `conv` as a session script, or why it cannot be one. Like vLLM's
 * benchmarks/multi_turn/convert_sharegpt_to_openai.py: a leading assistant message is skipped and
 * the rest must alternate user, assistant, … (system messages only at the start, sent with turn 0).
 * Deviation: a last user message without an answer is dropped (its output length is unknown).
 */
export function sessionScriptOf(
  conv: Conversation,
  opts: Omit<SessionScriptOptions, 'numConversations' | 'seed'> = {},
): SessionScript | string {
  const lead = conv.turns.findIndex((m) => m.role !== 'system');
  const system = lead < 0 ? conv.turns : conv.turns.slice(0, lead);
  let ms = conv.turns.slice(system.length);
  if (ms[0]?.role === 'assistant') ms = ms.slice(1);
  const turns: SessionScript['turns'] = [];
  const answers: string[] = [];
  for (let i = 0; i + 1 < ms.length; i += 2) {
    const [user, answer] = [ms[i], ms[i + 1]];
    if (user.role !== 'user' || answer.role !== 'assistant') return `turns do not alternate user/assistant at message ${i}`;
    const maxTokens = opts.outputLen ?? Math.max(1, estimateTokens(answer.content));
    const own = i === 0 ? [...system, user] : [user];
    turns.push({ api: 'chat', messages: own, maxTokens, ...(opts.ignoreEos ? { fixedOutput: true } : {}) });
    answers.push(answer.content);
  }
  if (turns.length === 0) return 'no user turn with an answer';
  return { id: conv.id, turns, datasetAnswers: answers };
}

/**
 * Seeded conversations for a multi-turn run: shuffled with `seed`, the first `numConversations`
 * usable ones (see `sessionScriptOf`). `dropped` counts the unusable ones met on the way.
 */
export function sessionScripts(
  convs: readonly Conversation[],
  opts: SessionScriptOptions,
): { scripts: SessionScript[]; dropped: number } {
  const scripts: SessionScript[] = [];
  let dropped = 0;
  const seen = new Set<string>();
  for (const c of shuffled(convs, seededRng(opts.seed ?? 0))) {
    if (scripts.length >= opts.numConversations) break;
    const s = sessionScriptOf(c, opts);
    if (typeof s === 'string' || seen.has(s.id)) {
      dropped++;
      continue;
    }
    seen.add(s.id);
    scripts.push(s);
  }
  return { scripts, dropped };
}
