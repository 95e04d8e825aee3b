/**
 * Runs one validated generation request through the engine and answers it as vLLM does:
 * a stream of `chat.completion.chunk` / `text_completion` events (one per engine output),
 * or one non-streamed object at the end. Feeds the per-request metrics: TTFT from HTTP
 * arrival, one ITL sample per engine output, e2e and decode time at the finish.
 */
import { randNormal, seededRng, type Rng } from '../../rng';
import type { SimMetrics } from './metrics';
import type { QueueTimes } from '../engine/queue-time';
import { ApiError, type Reply } from './reply';
import type { GenRequest } from './requests';
import { chunkHead, chunkJson, usageChunkJson, usageJson } from '../../wire/chunks';
import { chatLogprobsJson, completionLogprobsJson } from './fake-logprobs';
import type { SimTokenizer, TextGen } from './tokens';
import type { EngineOutput, SimEngine } from '../engine/types';

/** Median of the natural (EOS) output length when `ignore_eos` is off, tokens. */
export const NATURAL_LENGTH_MEDIAN = 200;
/** Log-space spread of the natural output length (lognormal σ). */
export const NATURAL_LENGTH_SIGMA = 0.7;

/** Draws how long the "model" would answer before EOS: lognormal, median 200 tokens, ≥ 1. */
export function drawNaturalLength(rng: Rng): number {
  return Math.max(1, Math.round(NATURAL_LENGTH_MEDIAN * Math.exp(NATURAL_LENGTH_SIGMA * randNormal(rng))));
}

/** Shared server state a generation needs. */
export interface GenServer {
  engine: SimEngine;
  tok: SimTokenizer;
  metrics: SimMetrics;
  /** Queue-time tracker (fed by the engine's steps). */
  queue?: QueueTimes;
  /** Served model name (`model` in responses). */
  model: string;
  /** Monotonic ms clock, the engine's. */
  now: () => number;
  /** Per-request seed source (seeded once per server: same order of requests → same outputs). */
  rng: Rng;
  /** Non-engine latency per request (HTTP, tokenize, detokenize): the engine sees a request no earlier than arrival + this, ms. */
  apiOverheadMs: number;
  /** `--enable-prompt-tokens-details`. */
  promptTokensDetails: boolean;
}

/** Identity of one HTTP request. */
export interface GenIdentity {
  /** Response id, e.g. `chatcmpl-<x-request-id>`. */
  id: string;
  /** Unique engine request id. */
  engineId: string;
  /** HTTP arrival on the server's clock, ms. */
  arrivalMs: number;
}

/** One choice of a request: its own engine request (a child when n > 1), text and state. */
interface Choice {
  index: number;
  engineId: string;
  naturalLength: number;
  gen: TextGen;
  /** Text so far (held-back characters included). */
  text: string;
  /** Characters of `text` already sent. */
  sent: number;
  ids: number[];
  outputTokens: number;
  firstMs?: number;
  prevMs: number;
  reason?: string;
  stopReason: string | null;
}

/** The earliest stop string in `text` that ends after index `from` (text before it was checked already). */
function findStop(text: string, from: number, stop: string[]): { at: number; s: string } | undefined {
  let best: { at: number; s: string } | undefined;
  for (const s of stop) {
    const at = text.indexOf(s, Math.max(0, from - s.length + 1));
    if (at >= 0 && (!best || at < best.at)) best = { at, s };
  }
  return best;
}

/**
 * Appends one engine output to choice `c`: its text is cut at a stop string (whose engine
 * request is then aborted), and while unfinished the last (longest stop − 1) characters are
 * held back, as vLLM's detokenizer does (`output_text_buffer_length`), so `added` can be "".
 */
function advance(s: GenServer, req: GenRequest, c: Choice, out: EngineOutput) {
  let reason: string | undefined = out.finishReason;
  const step = c.gen.next(out.newTokens, reason === 'stop' && !req.ignoreEos);
  const from = c.text.length;
  c.text += step.text;
  const hit = out.outputTokens > req.minTokens ? findStop(c.text, from, req.stop) : undefined;
  if (hit) {
    c.text = c.text.slice(0, hit.at);
    c.stopReason = hit.s;
    if (!reason) s.engine.abort(c.engineId);
    reason = 'stop';
  }
  const hold = reason || req.stop.length === 0 ? 0 : Math.max(...req.stop.map((x) => x.length)) - 1;
  const upTo = Math.max(c.sent, c.text.length - hold);
  const offset = c.sent;
  const added = c.text.slice(c.sent, upTo);
  c.sent = upTo;
  c.ids.push(...step.ids);
  c.outputTokens = out.outputTokens;
  return { added, reason, ids: step.ids, offset };
}

/** Adds every choice's engine request; on an engine refusal answers vLLM's 400 and returns false. */
function addChoices(s: GenServer, req: GenRequest, choices: Choice[], reply: Reply, onOutput: (c: Choice, out: EngineOutput) => void): boolean {
  try {
    for (const c of choices) {
      s.queue?.track(c.engineId, s.now());
      s.engine.add({
        id: c.engineId, promptTokenIds: req.promptTokenIds.slice(), maxTokens: req.maxTokens,
        minTokens: req.minTokens, naturalLength: c.naturalLength, ignoreEos: req.ignoreEos,
      }, (out) => onOutput(c, out));
    }
    return true;
  } catch (err) {
    for (const c of choices) {
      s.queue?.forget(c.engineId);
      s.engine.abort(c.engineId);
    }
    // The engine only throws on requests it can never run (e.g. larger than the KV cache): vLLM answers those 400.
    const e = err instanceof ApiError ? err : new ApiError(400, err instanceof Error ? err.message : String(err));
    if (req.stream) {
      reply.streamError(e);
      reply.done();
    } else reply.error(e);
    return false;
  }
}

/**
 * Starts a generation; the reply is completed from the engine's outputs.
 * `n` > 1 runs n engine requests sharing the prompt (vLLM's `ParentRequest` fans out n child
 * requests, `vllm/v1/engine/parallel_sampling.py`), so n choices cost n sequences; child ids
 * are `<i>_<id>` as there. Stop strings end a choice with finish_reason "stop" and
 * `stop_reason` = the string, the text before it kept (vLLM's detokenizer check,
 * `vllm/v1/engine/detokenizer.py`), and abort its engine request; streamed text that could
 * begin a stop string is held back until it can't. Logprobs are fake (see fake-logprobs.ts).
 */
export function runGeneration(s: GenServer, req: GenRequest, reply: Reply, who: GenIdentity): void {
  const chat = req.api === 'chat';
  const created = Math.floor(Date.now() / 1000);
  const api = req.api;
  const head = chunkHead({ api, id: who.id, created, model: s.model });
  const p = req.promptTokenIds.length;
  const usage = (completion: number, cached?: number) => usageJson({ promptTokens: p, completionTokens: completion, cachedTokens: cached });
  const choices: Choice[] = [];
  for (let i = 0; i < req.n; i++) {
    const rng = seededRng(Math.floor(s.rng() * 2 ** 32));
    choices.push({
      index: i, engineId: req.n > 1 ? `${i}_${who.engineId}` : who.engineId, naturalLength: drawNaturalLength(rng),
      gen: s.tok.textGen(req.lang, rng), text: '', sent: 0, ids: [], outputTokens: 0, prevMs: 0, stopReason: null,
    });
  }
  let started = false;
  let cached = 0;
  let finished = false;
  const cachedOrNot = () => (s.promptTokensDetails ? cached : undefined);
  const lp = (c: Choice, ids: number[], offset: number) => (req.logprobs === undefined ? undefined
    : chat ? chatLogprobsJson(s.tok, ids, req.logprobs) : completionLogprobsJson(s.tok, ids, req.logprobs, offset));

  const onOutput = (c: Choice, out: EngineOutput) => {
    if (finished || c.reason || reply.closed) return;
    const nowMs = s.now();
    if (c.firstMs === undefined) {
      c.firstMs = out.timeMs;
      if (c.index === 0) cached = out.cachedTokens ?? 0;
      if (out.newTokens > 0) s.metrics.observeFirstToken((nowMs - who.arrivalMs) / 1000);
      s.queue?.firstOutput(c.engineId);
    } else {
      s.metrics.observeInterToken((out.timeMs - c.prevMs) / 1000);
    }
    c.prevMs = out.timeMs;
    const { added, reason, ids, offset } = advance(s, req, c, out);
    if (reason) {
      c.reason = reason;
      s.metrics.observeFinish(reason as EngineOutput['finishReason'] & string, (nowMs - who.arrivalMs) / 1000, (out.timeMs - c.firstMs) / 1000, p, out.outputTokens);
    }
    const all = choices.every((x) => x.reason);
    if (all) finished = true;
    const total = () => choices.reduce((a, x) => a + x.outputTokens, 0);
    if (!req.stream) {
      if (all) reply.json(200, finalObject(s, who.id, created, req, choices, usage(total(), cachedOrNot())));
      return;
    }
    if (chat && !started) {
      for (const x of choices) reply.event(chunkJson(api, head, { index: x.index, role: true }, { usage: req.continuousUsage ? usage(0) : undefined }));
    }
    started = true;
    const parts = { index: c.index, text: added, finishReason: reason, stopReason: c.stopReason, logprobs: lp(c, ids, offset) };
    reply.event(chunkJson(api, head, parts, { usage: req.continuousUsage ? usage(out.outputTokens) : undefined }));
    if (all) {
      if (req.includeUsage) reply.event(usageChunkJson(head, usage(total(), cachedOrNot())));
      reply.done();
    }
  };

  reply.onAbort(() => {
    if (finished) return;
    finished = true;
    for (const c of choices) {
      s.queue?.forget(c.engineId);
      if (!c.reason) s.engine.abort(c.engineId);
    }
  });
  if (req.stream) reply.startStream();
  const add = () => {
    if (finished || reply.closed) return;
    finished = !addChoices(s, req, choices, reply, onOutput);
  };
  const waitMs = who.arrivalMs + s.apiOverheadMs - s.now();
  if (waitMs >= 1) setTimeout(add, waitMs);
  else add();
}

/** vLLM's non-streamed `chat.completion` / `text_completion` object, one choice per `n`. */
function finalObject(s: GenServer, id: string, created: number, req: GenRequest, choices: Choice[], usage: string) {
  const u = JSON.parse(usage) as Record<string, unknown>;
  u.prompt_tokens_details ??= null;
  const model = s.model;
  const lps = (c: Choice) => (req.logprobs === undefined ? null : JSON.parse(req.api === 'chat'
    ? chatLogprobsJson(s.tok, c.ids, req.logprobs) : completionLogprobsJson(s.tok, c.ids, req.logprobs, 0)));
  if (req.api === 'chat') {
    return {
      id, object: 'chat.completion', created, model,
      choices: choices.map((c) => ({
        index: c.index,
        message: { role: 'assistant', content: c.text, refusal: null, annotations: null, audio: null, function_call: null, tool_calls: [], reasoning: null },
        logprobs: lps(c), finish_reason: c.reason, stop_reason: c.stopReason, token_ids: null,
      })),
      service_tier: null, system_fingerprint: null, usage: u, prompt_logprobs: null, prompt_token_ids: null, kv_transfer_params: null,
    };
  }
  return {
    id, object: 'text_completion', created, model,
    choices: choices.map((c) => ({ index: c.index, text: c.text, logprobs: lps(c), finish_reason: c.reason, stop_reason: c.stopReason, token_ids: null, prompt_logprobs: null, prompt_token_ids: null })),
    service_tier: null, system_fingerprint: null, usage: u, kv_transfer_params: null,
  };
}
