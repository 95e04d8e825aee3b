/**
 * What each emulated vLLM generation (`--vllm-version`, generation.ts) says differently on the wire,
 * in one table: chunk fields, the non-streamed objects' fields, error bodies and id lengths.
 * Each row names the vLLM source it follows; `test/fixtures/vllm-wire/<id>/README.md` lists the
 * commits read and what could not be confirmed. Scheduling is the same for every row.
 */
import { errorBody, pyJsonDumps, type ErrorInfo } from '../../wire/chunks';
import type { Generation } from './generation';

/** A generation's id (`v0.6`, `v0.10`, `v0.19`). */
export type GenerationId = Generation['id'];

/** One generation's wire dialect. */
export interface WireShape {
  /**
   * `"prompt_token_ids":null` on the chat role chunk, `"token_ids":null` on chat token chunks, and both in
   * completions choices (vLLM PR #22587, `return_token_ids`, 2025-08); absent before.
   */
  tokenIdFields: boolean;
  /**
   * The first completions chunk of each choice carries the prompt's token ids even without `return_token_ids`
   * (`completion_stream_generator` reused `has_echoed` without checking `request.return_token_ids`, 0.10 line;
   * later guarded by `and request.return_token_ids`).
   */
  completionPromptIdsFirst: boolean;
  /** Error body: `{"object":"error",…}` (≤ 0.10.0) or `{"error":{…}}` (PR #22099, from 0.10.1). */
  errorShape: 'old' | 'new';
  /**
   * `VLLMValidationError` (`vllm/exceptions.py`, ` (parameter=…, value=…)` suffix and `param`) exists. Without it
   * every 400 from a handler is a plain `ValueError`: no suffix, `param` null (`create_error_response` had no param).
   */
  validationSuffix: boolean;
  /** `error.type` of a FastAPI `RequestValidationError`: `BadRequestError` (0.6 handler) or the phrase `Bad Request`. */
  pydanticType: string;
  /** `StreamOptions.include_usage` default: true until vLLM PR #36379 (2026-03-13), so `stream_options: {}` gave usage. */
  includeUsageDefault: boolean;
  /** Hex characters of `random_uuid()` (ids of responses and model permissions): 32, or 16 since PR #29375 (2025-11). */
  idHexChars: number;
  /** Fields of a non-streamed chat message, after `role` and `content`, all null except `tool_calls: []`. */
  chatMessageFields: readonly string[];
  /** Extra null fields of a non-streamed chat choice, after `stop_reason`. */
  chatChoiceFields: readonly string[];
  /** Null fields of a non-streamed chat response before `usage`, and after it. */
  chatTop: { before: readonly string[]; after: readonly string[] };
  /** Extra null fields of a non-streamed completions choice, after `stop_reason`. */
  completionChoiceFields: readonly string[];
  /** Null fields of a non-streamed completions response before `usage`, and after it. */
  completionTop: { before: readonly string[]; after: readonly string[] };
}

const MSG_V010 = ['refusal', 'annotations', 'audio', 'function_call', 'tool_calls', 'reasoning_content'];
const MSG_V019 = ['refusal', 'annotations', 'audio', 'function_call', 'tool_calls', 'reasoning'];

/**
 * The table. v0.6: `vllm/entrypoints/openai/protocol.py` and `serving_chat.py`/`serving_completion.py` of the 0.6 line
 * (V0); v0.10: `protocol.py` @ 0052bed3 and `serving_chat.py` @ 003fe593; v0.19: `chat_completion/protocol.py`,
 * `completion/protocol.py` and their `serving.py` as read for vllm-surface.md (before PR #40537).
 */
export const WIRE_SHAPES: Readonly<Record<GenerationId, WireShape>> = {
  'v0.6': {
    tokenIdFields: false,
    completionPromptIdsFirst: false,
    errorShape: 'old',
    validationSuffix: false,
    pydanticType: 'BadRequestError',
    idHexChars: 32,
    includeUsageDefault: true,
    chatMessageFields: ['tool_calls'],
    chatChoiceFields: [],
    chatTop: { before: [], after: ['prompt_logprobs'] },
    completionChoiceFields: ['prompt_logprobs'],
    completionTop: { before: [], after: [] },
  },
  'v0.10': {
    tokenIdFields: true,
    completionPromptIdsFirst: true,
    errorShape: 'new',
    validationSuffix: false,
    pydanticType: 'Bad Request',
    idHexChars: 32,
    includeUsageDefault: true,
    chatMessageFields: MSG_V010,
    chatChoiceFields: ['token_ids'],
    chatTop: {
      before: ['service_tier', 'system_fingerprint'],
      after: ['prompt_logprobs', 'prompt_token_ids', 'kv_transfer_params'],
    },
    completionChoiceFields: ['token_ids', 'prompt_logprobs', 'prompt_token_ids'],
    completionTop: { before: ['service_tier', 'system_fingerprint'], after: ['kv_transfer_params'] },
  },
  'v0.19': {
    tokenIdFields: true,
    completionPromptIdsFirst: false,
    errorShape: 'new',
    validationSuffix: true,
    pydanticType: 'Bad Request',
    idHexChars: 16,
    includeUsageDefault: false,
    chatMessageFields: MSG_V019,
    chatChoiceFields: ['token_ids'],
    chatTop: {
      before: ['service_tier', 'system_fingerprint'],
      after: ['prompt_logprobs', 'prompt_token_ids', 'kv_transfer_params'],
    },
    completionChoiceFields: ['token_ids', 'prompt_logprobs', 'prompt_token_ids'],
    completionTop: { before: ['service_tier', 'system_fingerprint'], after: ['kv_transfer_params'] },
  },
};

/** The dialect of a generation (by id or object). */
export function wireShape(gen: GenerationId | Generation): WireShape {
  return WIRE_SHAPES[typeof gen === 'string' ? gen : gen.id];
}

/** What an error says, with the wording older generations used where it differs. */
export interface ErrorParts {
  status: number;
  message: string;
  type: string;
  param: string | null;
  /** The message as an older generation words it (no VLLMValidationError suffix, older checks' texts). */
  wording?: Partial<Record<GenerationId, string>>;
}

/** `{message, type, param, code}` as generation `gen` reports the error. */
export function errorInfoFor(gen: GenerationId, e: ErrorParts): ErrorInfo {
  const shape = WIRE_SHAPES[gen];
  const message = e.wording?.[gen] ?? e.message;
  if (shape.validationSuffix) return { message, type: e.type, param: e.param, code: e.status };
  const type = e.type === 'Bad Request' ? shape.pydanticType : e.type;
  return { message, type, param: null, code: e.status };
}

/** The HTTP error body (compact JSON, Starlette's `JSONResponse`) as generation `gen` sends it. */
export function errorJsonFor(gen: GenerationId, e: ErrorParts): string {
  return JSON.stringify(errorBody(errorInfoFor(gen, e), WIRE_SHAPES[gen].errorShape));
}

/**
 * The mid-stream error event JSON (`create_streaming_error_response`: `json.dumps({"error": <error>})`); the
 * inner object is `ErrorResponse.model_dump()` in 0.6 (`object`, `message`, …) and `ErrorInfo` later.
 */
export function streamErrorJsonFor(gen: GenerationId, e: ErrorParts): string {
  const info = errorInfoFor(gen, e);
  return pyJsonDumps({ error: WIRE_SHAPES[gen].errorShape === 'old' ? { object: 'error', ...info } : info });
}

/** A `random_uuid()` of this generation's length, from `hex` (at least 32 hex characters). */
export function uuidOf(gen: GenerationId, hex: string): string {
  return hex.slice(0, WIRE_SHAPES[gen].idHexChars);
}
