/**
 * Runs one validated generation request through the engine and answers it as vLLM does:
 * a stream of `chat.completion.chunk` / `text_completion` events (one per engine output),
 * or one non-streamed object at the end. Feeds the per-request metrics: TTFT from HTTP
 * arrival, one ITL sample per engine output, e2e and decode time at the finish.
 */
import type { Reply } from './reply';
import type { GenRequest } from './requests';
import { chunkHead, chunkJson, usageChunkJson, usageJson } from '../../wire/chunks';
import { chatLogprobsJson, completionLogprobsJson } from './fake-logprobs';
import type { EngineOutput, FinishReason } from '../engine/types';
import type { GenIdentity, GenServer } from './gen-server';
import { abortChoices, addChoices, advance, newChoices, type Choice } from './gen-choice';
import { finalObject } from './gen-final';
import type { FinishFacts } from './metrics';

export { NATURAL_LENGTH_MEDIAN, NATURAL_LENGTH_SIGMA, drawNaturalLength } from './gen-server';
export type { GenIdentity, GenServer } from './gen-server';

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
  const usage = (completion: number, cached?: number) =>
    usageJson({ promptTokens: p, completionTokens: completion, cachedTokens: cached });
  const choices = newChoices(s, req, who);
  let started = false;
  let cached = 0;
  let finished = false;
  const first: FirstOutput[] = [];
  // Only a truthy cached count is reported (`if self.enable_prompt_tokens_details and num_cached_tokens:`,
  // vllm/entrypoints/openai/chat_completion/serving.py and completion/serving.py); else null / no key.
  const cachedOrNot = () => (s.promptTokensDetails && cached > 0 ? cached : undefined);
  const lp = (c: Choice, ids: number[], offset: number) =>
    req.logprobs === undefined
      ? undefined
      : chat
        ? chatLogprobsJson(s.tok, ids, req.logprobs)
        : completionLogprobsJson(s.tok, ids, req.logprobs, offset);

  const onOutput = (c: Choice, out: EngineOutput) => {
    if (finished || c.reason || reply.closed) return;
    const nowMs = s.now();
    if (c.firstMs === undefined) {
      c.firstMs = out.timeMs;
      if (c.index === 0) cached = out.cachedTokens ?? 0;
      first[c.index] = firstOutput(s, out, p, (nowMs - who.arrivalMs) / 1000);
      s.queue?.firstOutput(c.engineId);
    } else {
      s.metrics.observeInterToken((out.timeMs - c.prevMs) / 1000);
    }
    c.prevMs = out.timeMs;
    const { added, reason, ids, offset } = advance(s, req, c, out);
    if (reason) {
      c.reason = reason;
      const e2eS = (nowMs - who.arrivalMs) / 1000;
      const facts = finishFacts(first[c.index], c.firstMs, out.timeMs, req);
      s.metrics.observeFinish(reason as FinishReason, e2eS, (out.timeMs - c.firstMs) / 1000, p, out.outputTokens, facts);
    }
    const all = choices.every((x) => x.reason);
    if (all) finished = true;
    const total = () => choices.reduce((a, x) => a + x.outputTokens, 0);
    if (!req.stream) {
      if (all) reply.json(200, finalObject(s, who.id, created, req, choices, usage(total(), cachedOrNot())));
      return;
    }
    if (chat && !started) {
      for (const x of choices)
        reply.event(chunkJson(api, head, { index: x.index, role: true }, { usage: req.continuousUsage ? usage(0) : undefined }));
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
    abortChoices(s, choices);
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
