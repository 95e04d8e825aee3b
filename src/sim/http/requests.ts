/**
 * Turns a `/v1/chat/completions` or `/v1/completions` body into what the engine needs,
 * with vLLM's rules and messages: model check, prompt rendering and tokenizing, output
 * caps (`max_completion_tokens` > `max_tokens` > default), `min_tokens`, `ignore_eos`,
 * `stream_options`, `n`, `stop`, logprobs, tools, and the context-length 400s (field rules in
 * request-fields.ts and chat-fields.ts). Throws `ApiError`; no I/O.
 */
import { checkMessages, checkTools } from './chat-fields';
import { ApiError } from './reply';
import { laxBool, laxInt, modelName, priorityField, samplingFields, streamFields, validationError } from './request-fields';
import { contextWording, vllmValidationError } from './vllm-errors';
import { contentText, detectLanguage, type SimTokenizer, type TextLang } from './tokens';

export { validationError } from './request-fields';

/** Largest token id of Qwen2.5's tokenizer (151643 BPE tokens + 22 added special tokens); vLLM's `tokenizer.max_token_id`. */
export const QWEN_MAX_TOKEN_ID = 151664;

/** A validated generation request. */
export interface GenRequest {
  api: 'chat' | 'completions';
  promptTokenIds: number[];
  /** Output cap after vLLM's rules (≤ maxModelLen − prompt). */
  maxTokens: number;
  minTokens: number;
  ignoreEos: boolean;
  stream: boolean;
  includeUsage: boolean;
  continuousUsage: boolean;
  /** Language of the prompt, for the pseudo-text. */
  lang: TextLang;
  /** Choices (`n`), ≥ 1: vLLM runs them as n child requests sharing the prompt. */
  n: number;
  /** Stop strings; the first one found in a choice's text ends it with finish_reason "stop". */
  stop: string[];
  /** Top logprobs per token when logprobs were asked for (0..20); undefined when not. */
  logprobs?: number;
  /** `priority` (default 0; lower first under `--scheduling-policy priority`, ignored under fcfs as in vLLM V1). */
  priority: number;
}

/** Server facts the rules depend on. */
export interface RequestRules {
  servedModelName: string;
  maxModelLen: number;
  /** `--enable-force-include-usage`. */
  forceIncludeUsage?: boolean;
  /** `stream_options.include_usage` when a request's `stream_options` omits it; default false (wire-shapes.ts). */
  includeUsageDefault?: boolean;
}

/** 404 unless `model` is empty/absent or the served name. */
export function checkModel(body: Record<string, unknown>, rules: RequestRules): void {
  const m = modelName(body);
  if (m === undefined || m === '' || m === rules.servedModelName) return;
  throw new ApiError(404, `The model \`${m}\` does not exist.`, 'NotFoundError', 'model');
}

/**
 * Token ids as vLLM takes them: non-negative integers (400 otherwise), and none above the
 * tokenizer's largest id (`Token id N is out of vocabulary`, `vllm/v1/engine/processor.py`
 * `_validate_model_input`). `loc` names the field in the message.
 */
export function checkTokenIds(v: unknown, loc: string): number[] {
  if (!Array.isArray(v) || !v.every((t) => Number.isInteger(t) && t >= 0))
    throw validationError(loc, 'Input should be a list of token ids (non-negative integers)', loc);
  let max = -1;
  for (const t of v as number[]) if (t > max) max = t;
  if (max > QWEN_MAX_TOKEN_ID) throw new ApiError(400, `Token id ${max} is out of vocabulary`, 'BadRequestError', loc);
  return v as number[];
}

/** Parses and validates a generation body; throws `ApiError` with vLLM's status and message. */
export function parseGenRequest(
  api: 'chat' | 'completions',
  body: Record<string, unknown>,
  tok: SimTokenizer,
  rules: RequestRules,
): GenRequest {
  checkModel(body, rules);
  const { stream, includeUsage, continuousUsage } = streamFields(body, rules.forceIncludeUsage, rules.includeUsageDefault);
  const { n: choices, stop, logprobs } = samplingFields(api, body);
  if (api === 'chat') checkTools(body);
  const { promptTokenIds, lang } = promptOf(api, body, tok);
  const { maxTokens, minTokens } = outputCaps(api, body, promptTokenIds.length, rules.maxModelLen);
  const ignoreEos = laxBool(body.ignore_eos, 'ignore_eos') ?? false;
  const priority = priorityField(body);
  return {
    api,
    promptTokenIds,
    maxTokens,
    minTokens,
    ignoreEos,
    stream,
    includeUsage,
    continuousUsage,
    lang,
    n: choices,
    stop,
    logprobs,
    priority,
  };
}

/**
 * The prompt's token ids and language: chat messages rendered with the chat template, or the one
 * completions prompt (a string, a list of token ids, or a list holding one of those).
 */
function promptOf(
  api: 'chat' | 'completions',
  body: Record<string, unknown>,
  tok: SimTokenizer,
): { promptTokenIds: number[]; lang: TextLang } {
  if (api === 'chat') {
    // pydantic's `missing` error for the required `messages` field; its input is the whole body.
    if (body.messages === undefined) throw validationError('messages', 'Field required', null, { kind: 'missing', input: body });
    const messages = checkMessages(body.messages);
    const promptTokenIds = tok.encodeChat(messages);
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    return { promptTokenIds, lang: detectLanguage(contentText(lastUser?.content ?? messages[messages.length - 1]?.content)) };
  }
  let prompt = body.prompt;
  if (Array.isArray(prompt) && prompt.length === 1 && (typeof prompt[0] === 'string' || Array.isArray(prompt[0])))
    prompt = prompt[0];
  if (typeof prompt === 'string') {
    const promptTokenIds = tok.encodePrompt(prompt);
    return { promptTokenIds, lang: detectLanguage(prompt) };
  }
  if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((t) => Number.isInteger(t) && t >= 0)) {
    return { promptTokenIds: checkTokenIds(prompt, 'prompt'), lang: 'en' };
  }
  if (prompt === undefined) throw validationError('prompt', 'Field required', 'prompt');
  throw validationError(
    'prompt',
    'the simulator takes one prompt: a string or a list of token ids (batched prompts are not simulated)',
    'prompt',
  );
}

/**
 * `max_tokens` as the context-length check counts it: what the body asks for; absent, the field's
 * default: 16 for completions (`CompletionRequest.max_tokens = 16`; `build_tok_params` counts
 * `self.max_tokens or 0`, `vllm/entrypoints/openai/completion/protocol.py`),
 * none for chat (`max_completion_tokens` else `max_tokens`, both default None: `max_output_tokens or 0`
 * in `build_tok_params`, `vllm/entrypoints/openai/chat_completion/protocol.py`, which also names the field
 * it took in the max_model_len message). An explicit null is None: 0.
 */
export function checkedOutput(api: 'chat' | 'completions', body: Record<string, unknown>, requested?: number): number {
  if (requested !== undefined) return requested;
  return api === 'completions' && body.max_tokens === undefined ? 16 : 0;
}

/**
 * The output cap (`max_completion_tokens` > `max_tokens` > default: the rest of the context for
 * chat, 16 for completions, never above `maxModelLen − n`; `get_max_tokens`, `vllm/entrypoints/utils.py`)
 * and `min_tokens`, with vLLM's context-length 400s (`VLLMValidationError`s with the
 * ` (parameter=…, value=…)` suffix). `n` is the prompt's length in tokens.
 */
function outputCaps(
  api: 'chat' | 'completions',
  body: Record<string, unknown>,
  n: number,
  maxModelLen: number,
): { maxTokens: number; minTokens: number } {
  const mct = api === 'chat' ? laxInt(body, 'max_completion_tokens') : undefined;
  const mt = laxInt(body, 'max_tokens');
  const requested = mct ?? mt;
  const param = mct !== undefined ? 'max_completion_tokens' : 'max_tokens';
  if (requested !== undefined && requested < 1) {
    // SamplingParams._verify_args (vllm/sampling_params.py) names its own field, max_tokens.
    throw vllmValidationError(`max_tokens must be at least 1, got ${requested}.`, 'max_tokens', requested);
  }
  if (requested !== undefined && requested > maxModelLen) {
    throw vllmValidationError(
      `${param}=${requested} cannot be greater than max_model_len=max_total_tokens=${maxModelLen}. Please request fewer output tokens.`,
      param,
      requested,
    ).wordedAs(contextWording(api, maxModelLen, requested, n, true));
  }
  const maxOut = checkedOutput(api, body, requested);
  if (n > maxModelLen - maxOut) {
    throw vllmValidationError(
      `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${maxOut} output tokens and your prompt contains ${n} input tokens, for a total of ${n + maxOut} tokens. Please reduce the length of the input prompt or the number of requested output tokens.`,
      'input_tokens',
      n,
    ).wordedAs(contextWording(api, maxModelLen, maxOut, n, requested !== undefined || api === 'completions'));
  }
  if (n >= maxModelLen) {
    throw new ApiError(
      400,
      `The decoder prompt (length ${n}) plus the number of requested output tokens (at least 1) is longer than the maximum model length of ${maxModelLen}. Make sure that \`max_model_len\` is no smaller than the number of text tokens.`,
    );
  }
  if (n === 0) throw new ApiError(400, 'The decoder prompt cannot be empty');
  const defaultMax = api === 'chat' ? maxModelLen - n : 16;
  const maxTokens = Math.min(requested ?? defaultMax, maxModelLen - n);
  const minTokens = laxInt(body, 'min_tokens') ?? 0;
  // Both are VLLMValidationErrors without a parameter (vllm/sampling_params.py _verify_args): param null, no suffix.
  if (minTokens < 0) throw vllmValidationError(`min_tokens must be greater than or equal to 0, got ${minTokens}.`, null);
  if (minTokens > maxTokens)
    throw vllmValidationError(`min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${minTokens}.`, null);
  return { maxTokens, minTokens };
}
