/**
 * The non-streamed reply of a generation: vLLM's `ChatCompletionResponse` / `CompletionResponse`
 * (`vllm/entrypoints/openai/chat_completion/protocol.py`, `vllm/entrypoints/openai/completion/protocol.py`).
 */
import type { GenRequest } from './requests';
import { chatLogprobsJson, completionLogprobsJson } from './fake-logprobs';
import type { GenServer } from './gen-server';
import type { Choice } from './gen-choice';

/** vLLM's non-streamed `chat.completion` / `text_completion` object, one choice per `n`. */
export function finalObject(s: GenServer, id: string, created: number, req: GenRequest, choices: Choice[], usage: string) {
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
        message: {
          role: 'assistant',
          content: c.text,
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: [],
          reasoning: null,
        },
        logprobs: lps(c),
        finish_reason: c.reason,
        stop_reason: c.stopReason,
        token_ids: null,
      })),
      service_tier: null,
      system_fingerprint: null,
      usage: u,
      prompt_logprobs: null,
      prompt_token_ids: null,
      kv_transfer_params: null,
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
      token_ids: null,
      prompt_logprobs: null,
      prompt_token_ids: null,
    })),
    service_tier: null,
    system_fingerprint: null,
    usage: u,
    kv_transfer_params: null,
  };
}
