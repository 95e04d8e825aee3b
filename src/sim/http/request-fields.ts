/**
 * Field-level rules of vLLM's request models, as pydantic v2 applies them in lax mode
 * (`vllm/entrypoints/openai/chat_completion/protocol.py`, `completion/protocol.py`,
 * `vllm/sampling_params.py` `_verify_args`): type coercion ("10" → 10, "true" → true), the
 * `mode="before"` validators (stream_options, logprobs, tool usage), and sampling ranges.
 * Every failure is an `ApiError` 400; nothing here recurses into the client's values, so a
 * value nested 10,000 deep is refused, not a stack overflow.
 */
import { ApiError } from './reply';
import { modelValidatorError, pyFloat, validationError, vllmValidationError } from './vllm-errors';

export { validationError } from './vllm-errors';

/** A short, non-recursive description of a client value for messages (no JSON.stringify of deep input). */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  return String(v);
}

const INT_STR = /^\s*[+-]?\d+\s*$/;

/**
 * Pydantic lax `int | None`: integers, floats with no fraction, and decimal strings ("10");
 * `null`/absent → undefined. Anything else → 400 "Input should be a valid integer".
 */
export function laxInt(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && INT_STR.test(v)) return Number(v);
  throw validationError(key, `Input should be a valid integer, got ${describe(v)}`, key, 'int_parsing');
}

/**
 * `priority: int = 0` (`PriorityRequestMixin` / the chat and completion models in
 * `vllm/entrypoints/openai/*protocol.py`): a lax int; `null` is a 400 (`int_type`, the field is not
 * Optional); absent → 0. Lower runs first under `--scheduling-policy priority`. Under fcfs vLLM V1
 * accepts and ignores any value: the field's description says a non-zero priority "will raise an error
 * if the served model does not use priority scheduling", but that check lived in V0's
 * `LLMEngine.add_request`; V1's `AsyncLLM.add_request` and `InputProcessor.process_inputs`
 * (`vllm/v1/engine/`) pass it on unchecked and the FCFS queue never reads it.
 */
export function priorityField(body: Record<string, unknown>): number {
  if (body.priority === null)
    throw validationError('priority', 'Input should be a valid integer', 'priority', { kind: 'int_type', input: null });
  return laxInt(body, 'priority') ?? 0;
}

/** Pydantic lax `float | None`: numbers and numeric strings; else 400. */
export function laxFloat(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  throw validationError(key, `Input should be a valid number, got ${describe(v)}`, key, 'float_parsing');
}

const TRUE = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

/** Pydantic lax `bool`: true/false, 0/1, and the strings "true"/"yes"/"on"/"1"… (any case); else 400. */
export function laxBool(v: unknown, loc: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  if (v === 0 || v === 1) return v === 1;
  if (typeof v === 'string' && TRUE.has(v.toLowerCase())) return true;
  if (typeof v === 'string' && FALSE.has(v.toLowerCase())) return false;
  throw validationError(loc, `Input should be a valid boolean, got ${describe(v)}`, loc, 'bool_parsing');
}

/** Python truthiness of a raw JSON value (what `data.get(...)` tests in a `mode="before"` validator). */
export function pyTruthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v && typeof v === 'object') return Object.keys(v).length > 0;
  return Boolean(v);
}

/** `model: str | None`: a non-string is a 400 type error (vLLM), not a 404. */
export function modelName(body: Record<string, unknown>): string | undefined {
  const m = body.model;
  if (m === undefined || m === null) return undefined;
  if (typeof m !== 'string')
    throw validationError('model', `Input should be a valid string, got ${describe(m)}`, 'model', 'string_type');
  return m;
}

/** Streaming options after `validate_stream_options` and the `StreamOptions` model. */
export interface StreamFields {
  stream: boolean;
  includeUsage: boolean;
  continuousUsage: boolean;
}

/**
 * `stream` (lax bool) and `stream_options`: a truthy `stream_options` without a truthy raw
 * `stream` is refused (`validate_stream_options`); a non-object is a `model_type` 400; its
 * two flags are lax bools. `force` is `--enable-force-include-usage`; `includeUsageDefault` is
 * `StreamOptions.include_usage`'s default (true before vLLM PR #36379, 2026-03; see wire-shapes.ts).
 */
export function streamFields(body: Record<string, unknown>, force = false, includeUsageDefault = false): StreamFields {
  const so = body.stream_options;
  if (pyTruthy(so) && !pyTruthy(body.stream)) {
    // `validate_stream_options` (vllm/entrypoints/openai/*/protocol.py) raises VLLMValidationError(parameter="stream_options").
    throw modelValidatorError('Stream options can only be defined when `stream=True`.', 'stream_options', body);
  }
  const stream = laxBool(body.stream, 'stream') ?? false;
  let includeUsage = false;
  let continuousUsage = false;
  if (so !== undefined && so !== null) {
    if (typeof so !== 'object' || Array.isArray(so)) {
      throw validationError(
        'stream_options',
        'Input should be a valid dictionary or instance of StreamOptions',
        'stream_options',
        'model_type',
      );
    }
    const o = so as Record<string, unknown>;
    includeUsage = stream && (laxBool(o.include_usage, 'stream_options.include_usage') ?? includeUsageDefault);
    continuousUsage = includeUsage && (laxBool(o.continuous_usage_stats, 'stream_options.continuous_usage_stats') ?? false);
  }
  if (force) includeUsage = continuousUsage = true;
  return { stream, includeUsage, continuousUsage };
}

/** Sampling values the simulator honours or checks (vLLM `SamplingParams._verify_args`). */
export interface SamplingFields {
  /** Choices per request (`n`), ≥ 1. */
  n: number;
  /** Stop strings (`stop`: a string or a list of strings). */
  stop: string[];
  /** Top-logprobs per token when logprobs were asked for; undefined when not. */
  logprobs?: number;
}

/** vLLM's `VLLM_MAX_N_SEQUENCES` default (`vllm/envs.py`): the largest `n`. */
export const MAX_N_SEQUENCES = 16384;

/** vLLM's default `--max-logprobs`. */
export const MAX_LOGPROBS = 20;

function stopList(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string')) {
    throw validationError(
      'stop',
      `Input should be a valid string or a list of strings, got ${describe(v)}`,
      'stop',
      'string_type',
    );
  }
  if (list.some((s) => s === '')) throw new ApiError(400, 'stop cannot contain an empty string.');
  return list as string[];
}

/**
 * Validates n, temperature, top_p, stop and logprobs as vLLM does (`_verify_num_sequences`,
 * `_verify_args` in `vllm/sampling_params.py`, whose `VLLMValidationError`s for temperature, top_p and
 * logprobs carry the ` (parameter=…, value=…)` suffix, floats printed as Python does; `check_logprobs` in the chat protocol; the
 * max-logprobs check in `vllm/v1/engine/processor.py`); see each message for the rule.
 * Deviation: `logprobs: -1` (the whole vocabulary) is refused with a message of its own; vLLM
 * refuses it too with the default `--max-logprobs 20`, naming the vocabulary size.
 */
export function samplingFields(api: 'chat' | 'completions', body: Record<string, unknown>): SamplingFields {
  const n = laxInt(body, 'n') ?? 1;
  // `_verify_num_sequences` raises VLLMValidationErrors without a parameter: param null, no suffix.
  if (n < 1) throw vllmValidationError(`n must be at least 1, got ${n}.`, null);
  if (n > MAX_N_SEQUENCES) {
    throw vllmValidationError(
      `n must be at most ${MAX_N_SEQUENCES}, got ${n}. To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.`,
      null,
    );
  }
  const t = laxFloat(body, 'temperature');
  if (t !== undefined && !Number.isFinite(t))
    throw vllmValidationError(`temperature must be a finite number, got ${pyFloat(t)}.`, 'temperature', pyFloat(t));
  if (t !== undefined && t < 0)
    throw vllmValidationError(`temperature must be non-negative, got ${pyFloat(t)}.`, 'temperature', pyFloat(t));
  if (t !== undefined && t > 2)
    throw vllmValidationError(`temperature must be in [0, 2], got ${pyFloat(t)}.`, 'temperature', pyFloat(t));
  const p = laxFloat(body, 'top_p');
  if (p !== undefined && !(p > 0 && p <= 1))
    throw vllmValidationError(`top_p must be in (0, 1], got ${pyFloat(p)}.`, 'top_p', pyFloat(p));
  const stop = stopList(body.stop);
  let logprobs: number | undefined;
  if (api === 'chat') {
    const top = body.top_logprobs;
    if (top !== undefined && top !== null && typeof top !== 'number')
      throw new ApiError(400, '`top_logprobs` must be an integer.', 'BadRequestError', 'top_logprobs');
    const want = laxBool(body.logprobs, 'logprobs') ?? false;
    const k = laxInt(body, 'top_logprobs') ?? 0;
    if (k < 0 && k !== -1)
      throw new ApiError(400, '`top_logprobs` must be a positive value or -1.', 'BadRequestError', 'top_logprobs');
    if (k !== 0 && !pyTruthy(body.logprobs))
      throw new ApiError(400, 'when using `top_logprobs`, `logprobs` must be set to true.', 'BadRequestError', 'top_logprobs');
    if (want) logprobs = k;
  } else {
    logprobs = laxInt(body, 'logprobs');
    if (logprobs !== undefined && logprobs < 0 && logprobs !== -1)
      throw vllmValidationError(`logprobs must be non-negative or -1, got ${logprobs}.`, 'logprobs', logprobs);
  }
  if (logprobs !== undefined && logprobs > MAX_LOGPROBS) {
    throw new ApiError(
      400,
      `Requested sample logprobs of ${logprobs}, which is greater than max allowed: ${MAX_LOGPROBS}`,
      'BadRequestError',
      'logprobs',
    );
  }
  if (logprobs === -1)
    throw new ApiError(
      400,
      'the simulator does not simulate logprobs=-1 (the full vocabulary); ask for 0..20',
      'BadRequestError',
      'logprobs',
    );
  return { n, stop, logprobs };
}
