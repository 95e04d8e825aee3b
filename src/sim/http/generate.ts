/**
 * Runs one validated generation request through the engine and answers it as vLLM does:
 * a stream of `chat.completion.chunk` / `text_completion` events (one per engine output, fewer
 * with `--stream-interval` or when a slow reader makes outputs merge: gen-collector.ts),
 * or one non-streamed object at the end. Feeds the per-request metrics: TTFT from HTTP
 * arrival, one ITL sample per engine output, e2e and decode time at the finish.
 */
import type { Reply } from './reply';
import type { GenRequest } from './requests';
import { chunkHead, chunkJson, type ChunkTail, usageChunkJson, usageJson } from '../../wire/chunks';
import { WIRE_SHAPES, type WireShape } from './wire-shapes';
import { chatLogprobsJson, completionLogprobsJson } from './fake-logprobs';
import type { EngineOutput, FinishReason } from '../engine/types';
import type { GenIdentity, GenServer } from './gen-server';
import { abortChoices, addChoices, advance, newChoices, outputDue, takeDelta, type Choice, type ChoiceDelta } from './gen-choice';
import { OutputCollector } from './gen-collector';
import { finalObject } from './gen-final';
import type { FinishFacts } from './metrics';
import type { SendLog, StreamSends } from './send-log';

export { NATURAL_LENGTH_MEDIAN, NATURAL_LENGTH_SIGMA, drawNaturalLength } from './gen-server';
export type { GenIdentity, GenServer } from './gen-server';

/** Usage JSON for a completion-token count (`cached`: see `UsageCounts.cachedTokens`). */
type UsageOf = (completion: number, cached?: number | null) => string;

/** The chunk-level fields of a chat role chunk in generation `wire`. */
function roleTail(req: GenRequest, wire: WireShape, usage: UsageOf): ChunkTail {
  return { usage: req.continuousUsage ? usage(0) : undefined, tokenIds: wire.tokenIdFields };
}

/** The chunk-level fields of a token chunk in generation `wire`: continuous usage, token-id fields. */
function tokenTail(req: GenRequest, wire: WireShape, usage: UsageOf, outputTokens: number, first: boolean): ChunkTail {
  const chat = req.api === 'chat';
  return {
    // Completions chunks dump UsageInfo with exclude_unset=False (completion/serving.py): "prompt_tokens_details":null.
    usage: req.continuousUsage ? usage(outputTokens, chat ? undefined : null) : undefined,
    tokenIds: wire.tokenIdFields,
    promptTokenIds: !chat && first && wire.completionPromptIdsFirst ? req.promptTokenIds : undefined,
  };
}

/** What the stream writer needs to know about one request. */
interface StreamCtx {
  s: GenServer;
  req: GenRequest;
  reply: Reply;
  choices: Choice[];
  /** From {@link chunkHead}. */
  head: string;
  /** `usage` JSON for this many completion tokens (with the cached count when given). */
  usage: UsageOf;
  /** The wire shape of the emulated generation (default the newest). */
  wire?: WireShape;
  /** The cached prompt tokens to report in the final usage, or undefined. */
  cachedOrNot: () => number | undefined;
  /** This stream's send log (src/sim/http/send-log.ts), when it is kept. */
  sends?: StreamSends;
}

/**
 * What vLLM's serving generator does with each output it takes (`chat_completion/serving.py`,
 * `completion/serving.py`): the role chunks first (chat, first output only), one chunk per choice
 * (its text, logprobs of its token ids, finish and stop reason, running usage when continuous), and
 * after the last finish the usage chunk (`include_usage`) and `[DONE]`.
 */
function streamWriter(x: StreamCtx): (deltas: ChoiceDelta[]) => void {
  const { s, req, reply, choices, head, usage } = x;
  const wire = x.wire ?? WIRE_SHAPES['v0.19'];
  const sent = new Set<number>(); // choices that have had a token chunk
  const api = req.api;
  const lp = (ids: number[], offset: number) =>
    req.logprobs === undefined
      ? undefined
      : api === 'chat'
        ? chatLogprobsJson(s.tok, ids, req.logprobs)
        : completionLogprobsJson(s.tok, ids, req.logprobs, offset);
  let started = false;
  return (deltas) => {
    // The send time, taken before this output's chunks are serialised and written, so before their first byte can
    // reach the kernel (see stampSends); a few µs of serialising count as the reader's.
    const sentAt = x.sends ? performance.now() : 0;
    if (api === 'chat' && !started) {
      for (const c of choices) reply.event(chunkJson(api, head, { index: c.index, role: true }, roleTail(req, wire, usage)));
    }
    started = true;
    let tokenChunks = 0;
    for (const d of deltas) {
      const parts = {
        index: d.index,
        text: d.text,
        finishReason: d.finishReason,
        stopReason: d.stopReason,
        logprobs: lp(d.ids, d.offset),
      };
      reply.event(chunkJson(api, head, parts, tokenTail(req, wire, usage, d.outputTokens, !sent.has(d.index))));
      if (d.text !== '' || d.ids.length > 0) tokenChunks++;
      sent.add(d.index);
    }
    const finished = choices.every((c) => c.reason);
    if (finished && req.includeUsage) reply.event(usageChunkJson(head, usage(totalTokens(choices), x.cachedOrNot())));
    if (x.sends) stampSends(s.sendLog, x.sends, sentAt, tokenChunks, finished);
    if (finished) reply.done();
    else reply.flush?.();
  };
}

/**
 * Logs the send time `t` of a stream's token chunks, taken before their first byte could reach the kernel: a
 * streamed event goes to the socket as it is written (src/sim/http/chunk-socket.ts, `chunkSocket`), else at `flush`
 * (src/wire/flush.ts). It is a lower bound, so an arrival stamp is never earlier. A time taken after the write could
 * be late by whatever ran on the simulator's core first (the woken client itself, a GC), and would then count that
 * pause as the client's.
 */
function stampSends(log: SendLog | undefined, sends: StreamSends, t: number, tokenChunks: number, finished: boolean): void {
  for (let i = 0; i < tokenChunks; i++) sends.t.push(t);
  if (finished) log?.closed(sends);
}

const totalTokens = (choices: Choice[]) => choices.reduce((a, c) => a + c.outputTokens, 0);

/**
 * Starts a generation; the reply is completed from the engine's outputs.
 * `n` > 1 runs n engine requests sharing the prompt (vLLM's `ParentRequest` fans out n child
 * requests, `vllm/v1/engine/parallel_sampling.py`), so n choices cost n sequences; child ids
 * are `<i>_<id>` as there. Stop strings end a choice with finish_reason "stop" and
 * `stop_reason` = the string, the text before it kept (vLLM's detokenizer check,
 * `vllm/v1/engine/detokenizer.py`), and abort its engine request; streamed text that could
 * begin a stop string is held back until it can't. Logprobs are fake (see fake-logprobs.ts).
 * Streamed outputs pass the `--stream-interval` gate per choice (`outputDue`), then the
 * request's {@link OutputCollector}, which merges them while a slow reader blocks the socket.
 */
export function runGeneration(s: GenServer, req: GenRequest, reply: Reply, who: GenIdentity): void {
  const created = Math.floor(Date.now() / 1000);
  const head = chunkHead({ api: req.api, id: who.id, created, model: s.model });
  const p = req.promptTokenIds.length;
  const usage: UsageOf = (completion, cached) =>
    usageJson({ promptTokens: p, completionTokens: completion, cachedTokens: cached });
  const choices = newChoices(s, req, who);
  let cached = 0;
  let finished = false;
  const first: FirstOutput[] = [];
  // Only a truthy cached count is reported (`if self.enable_prompt_tokens_details and num_cached_tokens:`,
  // vllm/entrypoints/openai/chat_completion/serving.py and completion/serving.py); else null / no key.
  const cachedOrNot = () => (s.promptTokensDetails && cached > 0 ? cached : undefined);
  const sends = req.stream && who.requestId !== undefined ? s.sendLog?.open(who.requestId) : undefined;
  const collector = new OutputCollector(
    reply,
    streamWriter({ s, req, reply, choices, head, usage, cachedOrNot, wire: who.wire, sends }),
  );

  const onOutput = (c: Choice, out: EngineOutput) => {
    if (finished || c.reason || reply.closed) return;
    const nowMs = s.now();
    if (c.firstMs === undefined) {
      c.firstMs = out.timeMs;
      if (c.index === 0) cached = out.cachedTokens ?? 0;
      first[c.index] = firstOutput(s, out, p, (nowMs - who.arrivalMs) / 1000);
      s.queue?.firstOutput(c.engineId);
    } else {
      // vLLM's ITL histogram is per engine step, whatever the stream interval or merging does to chunks.
      s.metrics.observeInterToken((out.timeMs - c.prevMs) / 1000);
    }
    c.prevMs = out.timeMs;
    const reason = advance(s, req, c, out);
    if (reason) {
      c.reason = reason;
      const e2eS = (nowMs - who.arrivalMs) / 1000;
      const facts = finishFacts(first[c.index], c.firstMs, out.timeMs, req);
      s.metrics.observeFinish(reason as FinishReason, e2eS, (out.timeMs - c.firstMs) / 1000, p, out.outputTokens, facts);
    }
    if (choices.every((x) => x.reason)) finished = true;
    if (!req.stream) {
      if (finished)
        reply.json(200, finalObject(s, who.id, created, req, choices, usage(totalTokens(choices), cachedOrNot()), who.wire));
      return;
    }
    if (outputDue(c, reason !== undefined, s.streamInterval)) collector.put(takeDelta(req, c, reason));
  };

  reply.onAbort(() => {
    if (sends) s.sendLog?.closed(sends);
    if (finished) return;
    finished = true;
    abortChoices(s, choices);
  });
  if (req.stream) reply.startStream();
  const add = () => {
    if (finished || reply.closed) return;
    s.engine.runDue();
    finished = !addChoices(s, req, choices, reply, onOutput);
  };
  const waitMs = who.arrivalMs + s.apiOverheadMs - s.now();
  if (waitMs >= 1) setTimeout(add, waitMs);
  else add();
}

/** What a choice's first output tells the metrics: when the engine first scheduled it (vLLM's `scheduled_ts`) and its cached prompt tokens. */
interface FirstOutput {
  scheduledMs: number;
  cachedTokens: number;
}

/** A choice's first output: TTFT (from HTTP arrival, seconds) and prompt tokens by source, unless it is an abort. */
function firstOutput(s: GenServer, out: EngineOutput, promptTokens: number, ttftS: number): FirstOutput {
  const f = { scheduledMs: out.scheduledMs ?? out.timeMs, cachedTokens: out.cachedTokens ?? 0 };
  if (out.newTokens > 0) {
    s.metrics.observePromptSources(promptTokens, f.cachedTokens);
    s.metrics.observeFirstToken(ttftS);
  }
  return f;
}

/** Prefill (first scheduled → first token) and inference (first scheduled → last token) time, seconds, and the request's parameters. */
function finishFacts(f: FirstOutput, firstMs: number, lastMs: number, req: GenRequest): FinishFacts {
  return {
    prefillS: (firstMs - f.scheduledMs) / 1000,
    inferenceS: (lastMs - f.scheduledMs) / 1000,
    cachedTokens: f.cachedTokens,
    maxTokensParam: req.maxTokens,
    n: req.n,
  };
}
