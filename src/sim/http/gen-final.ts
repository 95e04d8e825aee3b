/**
 * The non-streamed reply of a generation: vLLM's `ChatCompletionResponse` / `CompletionResponse`
 * (`vllm/entrypoints/openai/chat_completion/protocol.py`, `vllm/entrypoints/openai/completion/protocol.py`;
 * `vllm/entrypoints/openai/protocol.py` in 0.6 and 0.10), dumped whole (`JSONResponse(content=model_dump())`),
 * so every field appears, in declaration order. Which fields a generation has is in wire-shapes.ts.
 */
import type { GenRequest } from './requests';
import { chatLogprobsJson, completionLogprobsJson } from './fake-logprobs';
import type { GenServer } from './gen-server';
import type { Choice } from './gen-choice';
import { WIRE_SHAPES, type WireShape } from './wire-shapes';

/** `{name: null, …}` for each name (`tool_calls`: `[]`, its `default_factory=list`). */
function nulls(names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(names.map((k) => [k, k === 'tool_calls' ? [] : null]));
}

/**
 * vLLM's non-streamed `chat.completion` / `text_completion` object, one choice per `n`, with the fields of
 * generation `wire` (default the newest).
 */
export function finalObject(
  s: GenServer,
  id: string,
  created: number,
  req: GenRequest,
  choices: Choice[],
  usage: string,
  wire: WireShape = WIRE_SHAPES['v0.19'],
) {
  const u = JSON.parse(usage) as Record<string, unknown>;
  u.prompt_tokens_details ??= null;
  const model = s.model;
  const lps = (c: Choice) =>
    req.logprobs === undefined
      ? null
      : JSON.parse(
          req.api === 'chat'
            ? chatLogprobsJson(s.tok, c.ids, req.logprobs)
            : completionLogprobsJson(s.tok, c.ids, req.logprobs, 0),
        );
  if (req.api === 'chat') {
    return {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: choices.map((c) => ({
        index: c.index,
        message: { role: 'assistant', content: c.text, ...nulls(wire.chatMessageFields) },
        logprobs: lps(c),
        finish_reason: c.reason,
        stop_reason: c.stopReason,
        ...nulls(wire.chatChoiceFields),
      })),
      ...nulls(wire.chatTop.before),
      usage: u,
      ...nulls(wire.chatTop.after),
    };
  }
  return {
    id,
    object: 'text_completion',
    created,
    model,
    choices: choices.map((c) => ({
      index: c.index,
      text: c.text,
      logprobs: lps(c),
      finish_reason: c.reason,
      stop_reason: c.stopReason,
      ...nulls(wire.completionChoiceFields),
    })),
    ...nulls(wire.completionTop.before),
    usage: u,
    ...nulls(wire.completionTop.after),
  };
}
