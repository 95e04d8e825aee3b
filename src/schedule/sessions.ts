/**
 * The `sessions` load shape: multi-turn conversations, each turn sent after the previous answer.
 *
 * Up to `maxConcurrency` conversations are live at once; a conversation starts the moment a slot
 * frees (as a closed loop's request does) and sends its turns in order. Turn k+1 is intended at
 * (end of turn k) + `thinkTimeMs`, and its messages are every earlier turn's own messages with the
 * answer ACTUALLY RECEIVED after each, then its own. A failed turn ends its conversation.
 *
 * This follows vLLM's multi-turn benchmark (benchmarks/multi_turn/benchmark_serving_multi_turn.py):
 * `send_turn` replaces the dataset's assistant message with the live answer ("will be used as part
 * of the context for the next user turn"), and `client_main` drops a conversation whose request
 * failed (`active_convs.pop(conv_id)`, `--max-retries` default 0). Deviations, named:
 * - vLLM has `--num-clients` workers, each sending one request at a time and cycling round-robin
 *   through its share of `--max-active-conversations`; here every live conversation has its own
 *   slot, so `maxConcurrency` conversations = at most that many requests in flight (vLLM with
 *   `--num-clients C --max-active-conversations C`).
 * - vLLM has no think time: `--request-rate` (default 0 = none) is a per-client Poisson pause of
 *   1/rate minus the request's duration. `thinkTimeMs` is a fixed pause per conversation after
 *   each answer, AIPerf's `--conversation-turn-delay-mean` without its spread.
 */

import type { ChatMessage, RequestSpec } from '../types';

/** One conversation to replay. */
export interface SessionScript {
  /** Conversation id, copied into each turn's record as `session`. */
  id: string;
  /**
   * One request per turn, in order. Its `messages` are what the turn ADDS (its user message,
   * after any system message that precedes it); the history is prepended when it is sent.
   * Its other fields (`maxTokens`, `fixedOutput`, …) are sent as they are. Chat only.
   */
  turns: RequestSpec[];
  /**
   * The dataset's own answers, one per turn: never sent live, only used to estimate prompt
   * lengths before the run (the prompt-length preflight). Default: empty answers.
   */
  datasetAnswers?: string[];
}

/** Conversations sent turn by turn, each turn after the previous answer. Build with `sessions()`. */
export interface SessionsShape {
  kind: 'sessions';
  conversations: SessionScript[];
  /** Conversations live at once (= most requests in flight), an integer ≥ 1. */
  maxConcurrency: number;
  /** Pause after an answer before the next turn of the same conversation, ms ≥ 0; default 0. */
  thinkTimeMs?: number;
}

/** The longest pause a Node timer can hold, ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Throw a TypeError naming the fix unless `s` is a usable sessions shape; returns it. */
export function checkSessionsShape(s: SessionsShape): SessionsShape {
  if (!Array.isArray(s.conversations) || s.conversations.length === 0) {
    throw new TypeError('sessions needs at least one conversation: sessions([{ id, turns: [spec, ...] }], { maxConcurrency })');
  }
  if (!(Number.isInteger(s.maxConcurrency) && s.maxConcurrency >= 1)) {
    throw new TypeError(`maxConcurrency (conversations live at once) must be an integer ≥ 1, got ${String(s.maxConcurrency)}`);
  }
  const think = s.thinkTimeMs;
  if (think !== undefined && !(typeof think === 'number' && think >= 0 && think <= MAX_TIMER_MS)) {
    throw new TypeError(`thinkTimeMs must be a number of ms in 0..${MAX_TIMER_MS} (0 = next turn at once), got ${String(think)}`);
  }
  const ids = new Set<string>();
  s.conversations.forEach((c, i) => {
    if (c === null || typeof c !== 'object' || typeof c.id !== 'string' || !Array.isArray(c.turns) || c.turns.length === 0) {
      throw new TypeError(`conversation ${i} must be { id: string, turns: [RequestSpec, ...] } with at least one turn`);
    }
    if (ids.has(c.id)) throw new TypeError(`conversation id '${c.id}' appears twice; ids must be unique (records carry them)`);
    ids.add(c.id);
    const bad = c.turns.findIndex((t) => (t?.api ?? 'chat') !== 'chat' || !t?.messages || t.messages.length === 0);
    if (bad >= 0) {
      throw new TypeError(
        `conversation '${c.id}' turn ${bad} must be a chat request with the messages it adds, e.g. makeRequest('question')`,
      );
    }
  });
  return s;
}

/**
 * Multi-turn conversations as a load shape (see the module comment).
 * @param opts.maxConcurrency conversations live at once; default 1 (vLLM's `--num-clients` default).
 * @param opts.thinkTimeMs pause after each answer, ms; default 0.
 */
export function sessions(
  conversations: SessionScript[],
  opts: { maxConcurrency?: number; thinkTimeMs?: number } = {},
): SessionsShape {
  const shape: SessionsShape = { kind: 'sessions', conversations, maxConcurrency: opts.maxConcurrency ?? 1 };
  if (opts.thinkTimeMs !== undefined) shape.thinkTimeMs = opts.thinkTimeMs;
  return checkSessionsShape(shape);
}

/**
 * The request for turn `k` of `script`: each earlier turn's messages followed by its answer
 * (`answers[j]`, as an assistant message), then turn k's own messages and options.
 * `answers` are the live answers when sending, or the dataset's for a length estimate.
 */
export function turnSpec(script: SessionScript, k: number, answers: readonly string[]): RequestSpec {
  const history: ChatMessage[] = [];
  for (let j = 0; j < k; j++) {
    history.push(...(script.turns[j].messages ?? []), { role: 'assistant', content: answers[j] ?? '' });
  }
  const own = script.turns[k];
  return { ...own, messages: [...history, ...(own.messages ?? [])] };
}

/** Turns in all (the run's measured requests). */
export function sessionTurns(shape: SessionsShape): number {
  return shape.conversations.reduce((n, c) => n + c.turns.length, 0);
}

/**
 * The fixed position of each turn in the run (the record's `index` minus the warm-up): turn-major,
 * so positions 0..C−1 are the conversations' first turns, in order. `[c][k]` → position.
 */
export function turnPositions(shape: SessionsShape): number[][] {
  const out = shape.conversations.map(() => [] as number[]);
  const longest = shape.conversations.reduce((m, c) => Math.max(m, c.turns.length), 0);
  let i = 0;
  for (let k = 0; k < longest; k++) {
    shape.conversations.forEach((c, ci) => {
      if (k < c.turns.length) out[ci][k] = i++;
    });
  }
  return out;
}

/** `[position] → { conversation, turn }`, the inverse of `turnPositions`. */
export function turnAt(shape: SessionsShape): Array<{ c: number; k: number }> {
  const out: Array<{ c: number; k: number }> = [];
  turnPositions(shape).forEach((ks, c) => {
    ks.forEach((i, k) => {
      out[i] = { c, k };
    });
  });
  return out;
}
