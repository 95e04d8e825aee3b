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
  return new ApiError(400, vllmValidationText(msg, param, value), 'BadRequestError', param);
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
  return validationError('', text, param, { input: body, ctx: `{'error': VLLMValidationError(${pyStr(msg)})}` });
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
  const input = 'input' in o ? `, 'input': ${pyRepr(o.input)}` : '';
  const ctx = o.ctx === undefined ? '' : `, 'ctx': ${o.ctx}`;
  const where = loc === '' ? "('body',)" : `('body', ${pyStr(loc)})`;
  const err = `{'type': ${pyStr(o.kind ?? 'value_error')}, 'loc': ${where}, 'msg': ${pyStr(msg)}${input}${ctx}}`;
  return new ApiError(400, `1 validation error:\n  ${err} [${err}]`, 'Bad Request', param);
}
