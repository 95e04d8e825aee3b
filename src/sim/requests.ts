/**
 * Turns a `/v1/chat/completions` or `/v1/completions` body into what the engine needs,
 * with vLLM's rules and messages: model check, prompt rendering and tokenizing, output
 * caps (`max_completion_tokens` > `max_tokens` > default), `min_tokens`, `ignore_eos`,
 * `stream_options`, and the context-length 400s. Throws `ApiError`; no I/O.
 */
import { ApiError } from './reply';
import { contentText, detectLanguage, type ChatMessageIn, type SimTokenizer, type TextLang } from './tokens';

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
}

/** Server facts the rules depend on. */
export interface RequestRules {
  servedModelName: string;
  maxModelLen: number;
  /** `--enable-force-include-usage`. */
  forceIncludeUsage?: boolean;
}

/** Pydantic-style 400 (`type` "Bad Request"), as FastAPI's validation handler answers. */
export function validationError(loc: string, msg: string, param: string | null = null): ApiError {
  return new ApiError(400, `1 validation error:\n  {'type': 'value_error', 'loc': ('body', '${loc}'), 'msg': '${msg}'}`, 'Bad Request', param);
}

/** 404 unless `model` is empty/absent or the served name. */
export function checkModel(body: Record<string, unknown>, rules: RequestRules): void {
  const m = body.model;
  if (m === undefined || m === null || m === '' || m === rules.servedModelName) return;
  throw new ApiError(404, `The model \`${String(m)}\` does not exist.`, 'NotFoundError', 'model');
}

function optInt(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw validationError(key, `Input should be a valid integer, got ${JSON.stringify(v)}`, key);
  return v;
}

/** Parses and validates a generation body; throws `ApiError` with vLLM's status and message. */
export function parseGenRequest(api: 'chat' | 'completions', body: Record<string, unknown>, tok: SimTokenizer, rules: RequestRules): GenRequest {
  checkModel(body, rules);
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    throw new ApiError(400, `the simulator serves n=1 only (one choice per request), got n=${JSON.stringify(body.n)}; send n separate requests instead`, 'BadRequestError', 'n');
  }
  const stream = body.stream === true;
  const so = body.stream_options;
  if (so !== undefined && so !== null && !stream) {
    throw validationError('stream_options', 'Value error, Stream options can only be defined when `stream=True`.', 'stream_options');
  }
  const soObj = (so && typeof so === 'object' ? so : {}) as { include_usage?: unknown; continuous_usage_stats?: unknown };
  let includeUsage = stream && soObj.include_usage === true;
  let continuousUsage = includeUsage && soObj.continuous_usage_stats === true;
  if (rules.forceIncludeUsage) includeUsage = continuousUsage = true;

  let promptTokenIds: number[];
  let lang: TextLang = 'en';
  if (api === 'chat') {
    const msgs = body.messages;
    if (!Array.isArray(msgs)) throw validationError('messages', 'Field required', 'messages');
    const messages = msgs as ChatMessageIn[];
    if (messages.some((m) => !m || typeof m.role !== 'string')) throw validationError('messages', 'each message needs a string "role"', 'messages');
    promptTokenIds = tok.encodeChat(messages);
    const lastUser = [...messages].reverse().find((m) => m.role === 'user');
    lang = detectLanguage(contentText(lastUser?.content ?? messages[messages.length - 1]?.content));
  } else {
    let prompt = body.prompt;
    if (Array.isArray(prompt) && prompt.length === 1 && (typeof prompt[0] === 'string' || Array.isArray(prompt[0]))) prompt = prompt[0];
    if (typeof prompt === 'string') {
      promptTokenIds = tok.encodePrompt(prompt);
      lang = detectLanguage(prompt);
    } else if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((t) => Number.isInteger(t) && t >= 0)) {
      promptTokenIds = prompt as number[];
    } else if (prompt === undefined) {
      throw validationError('prompt', 'Field required', 'prompt');
    } else {
      throw validationError('prompt', 'the simulator takes one prompt: a string or a list of token ids (batched prompts are not simulated)', 'prompt');
    }
  }

  const mct = api === 'chat' ? optInt(body, 'max_completion_tokens') : undefined;
  const mt = optInt(body, 'max_tokens');
  const requested = mct ?? mt;
  const param = mct !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const { maxModelLen } = rules;
  const n = promptTokenIds.length;
  if (requested !== undefined && requested < 1) throw new ApiError(400, `${param} must be at least 1, got ${requested}.`, 'BadRequestError', param);
  if (requested !== undefined && requested > maxModelLen) {
    throw new ApiError(400, `max_tokens=${requested} cannot be greater than max_model_len=max_total_tokens=${maxModelLen}. Please request fewer output tokens.`, 'BadRequestError', param);
  }
  const maxOut = requested ?? 0;
  if (n > maxModelLen - maxOut) {
    throw new ApiError(400, `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${maxOut} output tokens and your prompt contains ${n} input tokens, for a total of ${n + maxOut} tokens. Please reduce the length of the input prompt or the number of requested output tokens.`, 'BadRequestError', 'input_tokens');
  }
  if (n >= maxModelLen) {
    throw new ApiError(400, `The decoder prompt (length ${n}) plus the number of requested output tokens (at least 1) is longer than the maximum model length of ${maxModelLen}. Make sure that \`max_model_len\` is no smaller than the number of text tokens.`);
  }
  if (n === 0) throw new ApiError(400, 'The decoder prompt cannot be empty');
  const defaultMax = api === 'chat' ? maxModelLen - n : 16;
  const maxTokens = Math.min(requested ?? defaultMax, maxModelLen - n);
  const minTokens = optInt(body, 'min_tokens') ?? 0;
  if (minTokens < 0) throw new ApiError(400, `min_tokens must be greater than or equal to 0, got ${minTokens}.`, 'BadRequestError', 'min_tokens');
  if (minTokens > maxTokens) {
    throw new ApiError(400, `min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${minTokens}.`, 'BadRequestError', 'min_tokens');
  }
  return { api, promptTokenIds, maxTokens, minTokens, ignoreEos: body.ignore_eos === true, stream, includeUsage, continuousUsage, lang };
}
