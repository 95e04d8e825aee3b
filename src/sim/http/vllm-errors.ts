/**
 * The two ways vLLM words a 400, byte for byte:
 * - `VLLMValidationError` (`vllm/exceptions.py`): `str(exc)` appends ` (parameter=P, value=V)`, and
 *   `create_error_response` (`vllm/entrypoints/utils.py`) sends `str(exc)` with `param` = P.
 * - FastAPI's `RequestValidationError`, answered by `validation_exception_handler`
 *   (`vllm/entrypoints/openai/server_utils.py`): message `f"{str(exc)} {str(exc.errors())}"`, type
 *   "Bad Request", param null unless a `VLLMValidationError` raised inside a validator names one.
 *   `str(exc)` is FastAPI's `ValidationException.__str__` (`fastapi/exceptions.py`): "1 validation
 *   error:\n  {error}". Deviation: FastAPI ≥ 0.122 also appends the endpoint's source file and line
 *   (`_format_endpoint_context`), which depend on where vLLM is installed; the simulator leaves them out.
 * Python reprs are written without recursion into deep client values (see `pyRepr`).
 */
import { ApiError } from './reply';

/** Nesting beyond this depth is written `...` in a repr (a deviation: Python would print it all). */
export const PY_REPR_MAX_DEPTH = 64;

/** Python `repr(float)`: `3.0`, `0.5`, `1e+16`, `1e-05`, `inf`, `nan`. */
export function pyFloat(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e16 || a < 1e-4)) {
    return v.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  }
  return Number.isInteger(v) ? v.toFixed(1) : String(v);
}

/** Python `repr(str)`: single quotes unless the text holds `'` and no `"`; control characters escaped. */
export function pyStr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '\\' || ch === q) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || (c >= 0x7f && c < 0xa0)) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + q;
}

/**
 * Python `repr` of a parsed JSON value, as pydantic's error `input` prints it: dicts `{'k': v}`,
 * lists `[a, b]`, `True`/`False`/`None`, integers as they are, other numbers as floats.
 * Deviation: a JSON number written with a zero fraction (`1.0`) prints as `1`; JSON.parse drops it.
 */
export function pyRepr(v: unknown, depth = 0): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e16 ? String(v) : pyFloat(v);
  if (typeof v === 'string') return pyStr(v);
  if (depth >= PY_REPR_MAX_DEPTH) return Array.isArray(v) ? '[...]' : '{...}';
  if (Array.isArray(v)) return `[${v.map((x) => pyRepr(x, depth + 1)).join(', ')}]`;
  const parts = Object.entries(v as Record<string, unknown>).map(([k, x]) => `${pyStr(k)}: ${pyRepr(x, depth + 1)}`);
  return `{${parts.join(', ')}}`;
}

/**
 * vLLM's `VLLMValidationError` as the client sees it: `msg (parameter=P, value=V)`, type
 * `BadRequestError`, `param` P. `value` is Python's `str()` of the value, already formatted
 * (e.g. `pyFloat(3)` for a float field); left out of the suffix when undefined, as vLLM does for None.
 */
export function vllmValidationError(msg: string, param: string | null, value?: string | number): ApiError {
  // Before VLLMValidationError (0.6, 0.10) the same check raised a ValueError: the bare message, param null.
  const e = new ApiError(400, vllmValidationText(msg, param, value), 'BadRequestError', param);
  return e.wordedAs({ 'v0.6': msg, 'v0.10': msg });
}

/**
 * How vLLM 0.6 and 0.10 worded a prompt that leaves no room for the output (`maxOut` tokens; `outGiven` false
 * when a chat request set no limit), for `ApiError.wordedAs`. 0.6: `OpenAIServing._validate_input`
 * (`vllm/entrypoints/openai/serving_engine.py`, V0 line). 0.10: the wording of vLLM PR #22803 (2025-08-13); chat
 * requests get " None" appended (`create_error_response(f"{e} {e.__cause__}")` in `serving_chat.py` @ 003fe593).
 */
export function contextWording(
  api: 'chat' | 'completions',
  maxModelLen: number,
  maxOut: number,
  n: number,
  outGiven: boolean,
): { 'v0.6': string; 'v0.10': string } {
  const head = `This model's maximum context length is ${maxModelLen} tokens.`;
  const v06 = outGiven
    ? `${head} However, you requested ${maxOut + n} tokens (${n} in the messages, ${maxOut} in the completion). Please reduce the length of the messages or completion.`
    : `${head} However, you requested ${n} tokens in the messages, Please reduce the length of the messages.`;
  const v010 =
    n >= maxModelLen
      ? `${head} However, your request has ${n} input tokens. Please reduce the length of the input messages.`
      : `'max_tokens' or 'max_completion_tokens' is too large: ${maxOut}. This model's maximum context length is ${maxModelLen} tokens and your request has ${n} input tokens (${maxOut} > ${maxModelLen} - ${n}).`;
  return { 'v0.6': v06, 'v0.10': api === 'chat' ? `${v010} None` : v010 };
}

/** `str(VLLMValidationError(msg, parameter=param, value=value))`. */
export function vllmValidationText(msg: string, param: string | null, value?: string | number): string {
  const extras: string[] = [];
  if (param !== null) extras.push(`parameter=${param}`);
  if (value !== undefined) extras.push(`value=${value}`);
  return extras.length ? `${msg} (${extras.join(', ')})` : msg;
}

/**
 * A `VLLMValidationError` raised inside a pydantic `mode="before"` model validator: pydantic wraps it
 * as a `value_error` at `('body',)` with msg `Value error, <str(exc)>`, the body as input and the
 * exception in ctx; vLLM's handler takes `param` from it (server_utils.py `validation_exception_handler`).
 */
export function modelValidatorError(msg: string, param: string, body: Record<string, unknown>): ApiError {
  const text = `Value error, ${vllmValidationText(msg, param)}`;
  const e = validationError('', text, param, { input: body, ctx: `{'error': VLLMValidationError(${pyStr(msg)})}` });
  // 0.6 and 0.10 raised a plain ValueError there: no suffix in msg, ValueError(...) in ctx.
  const old = pydanticErrorRepr('', `Value error, ${msg}`, { input: body, ctx: `{'error': ValueError(${pyStr(msg)})}` });
  return e.wordedAs({ 'v0.6': `[${old}]`, 'v0.10': `[${old}]` });
}

/** Options of one pydantic-style error. */
export interface ValidationErrorOptions {
  /** pydantic's error `type`, e.g. `missing`, `int_parsing`; default `value_error`. */
  kind?: string;
  /** The error's `input` (pydantic prints the value it checked; for `missing`, the whole body). */
  input?: unknown;
  /** The error's `ctx`, already a Python repr, e.g. `{'error': VLLMValidationError('…')}`. */
  ctx?: string;
}

/**
 * A FastAPI `RequestValidationError` as vLLM answers it (see the file comment): `loc` is the body
 * field ('' for a model-level validator: `('body',)`), `param` what vLLM reports (null for plain
 * pydantic errors).
 */
export function validationError(
  loc: string,
  msg: string,
  param: string | null = null,
  opts: ValidationErrorOptions | string = {},
): ApiError {
  const o = typeof opts === 'string' ? { kind: opts } : opts;
  const err = pydanticErrorRepr(loc, msg, o);
  // FastAPI before `ValidationException.__str__` (the 0.6 and 0.10 era): str(exc) is the list's repr, equal to
  // str(exc.errors()), so vLLM's handler sends it once.
  return new ApiError(400, `1 validation error:\n  ${err} [${err}]`, 'Bad Request', param).wordedAs({
    'v0.6': `[${err}]`,
    'v0.10': `[${err}]`,
  });
}

/** The Python repr of one pydantic error dict as FastAPI reports it (`include_url=False`). */
function pydanticErrorRepr(loc: string, msg: string, o: ValidationErrorOptions): string {
  const input = 'input' in o ? `, 'input': ${pyRepr(o.input)}` : '';
  const ctx = o.ctx === undefined ? '' : `, 'ctx': ${o.ctx}`;
  const where = loc === '' ? "('body',)" : `('body', ${pyStr(loc)})`;
  return `{'type': ${pyStr(o.kind ?? 'value_error')}, 'loc': ${where}, 'msg': ${pyStr(msg)}${input}${ctx}}`;
}
