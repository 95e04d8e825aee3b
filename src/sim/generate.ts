/**
 * Runs one validated generation request through the engine and answers it as vLLM does:
 * a stream of `chat.completion.chunk` / `text_completion` events (one per engine output),
 * or one non-streamed object at the end. Feeds the per-request metrics: TTFT from HTTP
 * arrival, one ITL sample per engine output, e2e and decode time at the finish.
 */
import { randNormal, seededRng, type Rng } from '../rng';
import type { SimMetrics } from './metrics';
import type { QueueTimes } from './queue-time';
import { ApiError, type Reply } from './reply';
import type { GenRequest } from './requests';
import type { SimTokenizer } from './tokens';
import type { EngineOutput, SimEngine } from './types';

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

interface Usage {
  prompt_tokens: number;
  total_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens: number } | null;
}

/** Starts a generation; the reply is completed from the engine's outputs. */
export function runGeneration(s: GenServer, req: GenRequest, reply: Reply, who: GenIdentity): void {
  const chat = req.api === 'chat';
  const created = Math.floor(Date.now() / 1000);
  const head = `{"id":${JSON.stringify(who.id)},"object":"${chat ? 'chat.completion.chunk' : 'text_completion'}","created":${created},"model":${JSON.stringify(s.model)}`;
  const rng = seededRng(Math.floor(s.rng() * 2 ** 32));
  const naturalLength = drawNaturalLength(rng);
  const gen = s.tok.textGen(req.lang, rng);
  const p = req.promptTokenIds.length;
  const usage = (completion: number, cached?: number): Usage => {
    const u: Usage = { prompt_tokens: p, total_tokens: p + completion, completion_tokens: completion };
    if (cached !== undefined) u.prompt_tokens_details = { cached_tokens: cached };
    return u;
  };
  let firstMs: number | undefined;
  let prevMs = 0;
  let cached = 0;
  let text = '';
  let finished = false;

  const onOutput = (out: EngineOutput) => {
    if (finished || reply.closed) return;
    const nowMs = s.now();
    const isFirst = firstMs === undefined;
    if (isFirst) {
      firstMs = out.timeMs;
      cached = out.cachedTokens ?? 0;
      if (out.newTokens > 0) s.metrics.observeFirstToken((nowMs - who.arrivalMs) / 1000);
      s.queue?.firstOutput(who.engineId);
    } else {
      s.metrics.observeInterToken((out.timeMs - prevMs) / 1000);
    }
    prevMs = out.timeMs;
    const reason = out.finishReason;
    const step = gen.next(out.newTokens, reason === 'stop' && !req.ignoreEos);
    if (reason) {
      finished = true;
      s.metrics.observeFinish(reason, (nowMs - who.arrivalMs) / 1000, (out.timeMs - firstMs!) / 1000, p, out.outputTokens);
    }
    if (!req.stream) {
      text += step.text;
      if (reason) reply.json(200, finalObject(s.model, who.id, created, chat, text, reason, usage(out.outputTokens, s.promptTokensDetails ? cached : undefined)));
      return;
    }
    const fin = reason ? `,"finish_reason":"${reason}","stop_reason":null` : ',"finish_reason":null';
    const cont = req.continuousUsage ? `,"usage":${JSON.stringify(usage(out.outputTokens))}` : '';
    if (chat) {
      if (isFirst) {
        const roleUsage = req.continuousUsage ? `,"usage":${JSON.stringify(usage(0))}` : '';
        reply.event(`${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]${roleUsage},"prompt_token_ids":null}`);
      }
      reply.event(`${head},"choices":[{"index":0,"delta":{"content":${JSON.stringify(step.text)}},"logprobs":null${fin},"token_ids":null}]${cont}}`);
    } else {
      const fin2 = reason ? fin : `${fin},"stop_reason":null`;
      reply.event(`${head},"choices":[{"index":0,"text":${JSON.stringify(step.text)},"logprobs":null${fin2},"prompt_token_ids":null,"token_ids":null}]${cont || ',"usage":null'}}`);
    }
    if (reason) {
      if (req.includeUsage) reply.event(`${head},"choices":[],"usage":${JSON.stringify(usage(out.outputTokens, s.promptTokensDetails ? cached : undefined))}}`);
      reply.done();
    }
  };

  reply.onAbort(() => {
    if (finished) return;
    finished = true;
    s.queue?.forget(who.engineId);
    s.engine.abort(who.engineId);
  });
  if (req.stream) reply.startStream();
  const input = {
    id: who.engineId, promptTokenIds: req.promptTokenIds.slice(), maxTokens: req.maxTokens,
    minTokens: req.minTokens, naturalLength, ignoreEos: req.ignoreEos,
  };
  const add = () => {
    if (finished || reply.closed) return;
    try {
      s.queue?.track(who.engineId, s.now());
      s.engine.add(input, onOutput);
    } catch (err) {
      finished = true;
      s.queue?.forget(who.engineId);
      // The engine only throws on requests it can never run (e.g. larger than the KV cache): vLLM answers those 400.
      const e = err instanceof ApiError ? err : new ApiError(400, err instanceof Error ? err.message : String(err));
      if (req.stream) {
        reply.streamError(e);
        reply.done();
      } else reply.error(e);
    }
  };
  const waitMs = who.arrivalMs + s.apiOverheadMs - s.now();
  if (waitMs >= 1) setTimeout(add, waitMs);
  else add();
}

/** vLLM's non-streamed `chat.completion` / `text_completion` object. */
function finalObject(model: string, id: string, created: number, chat: boolean, text: string, reason: string, usage: Usage) {
  const u = { ...usage, prompt_tokens_details: usage.prompt_tokens_details ?? null };
  if (chat) {
    return {
      id, object: 'chat.completion', created, model,
      choices: [{
        index: 0,
        message: { role: 'assistant', content: text, refusal: null, annotations: null, audio: null, function_call: null, tool_calls: [], reasoning: null },
        logprobs: null, finish_reason: reason, stop_reason: null, token_ids: null,
      }],
      service_tier: null, system_fingerprint: null, usage: u, prompt_logprobs: null, prompt_token_ids: null, kv_transfer_params: null,
    };
  }
  return {
    id, object: 'text_completion', created, model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: reason, stop_reason: null, token_ids: null, prompt_logprobs: null, prompt_token_ids: null }],
    service_tier: null, system_fingerprint: null, usage: u, kv_transfer_params: null,
  };
}
