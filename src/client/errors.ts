/**
 * Turning failures into data: network errors into stable {@link ErrorCode}s, and vLLM error
 * bodies (HTTP and mid-stream) into one readable message. Pure functions.
 *
 * vLLM has two error body shapes (vLLM fact sheet §1.4): since v0.10.1
 * `{"error":{"message","type","param","code"}}`, before that `{"object":"error","message",...}`.
 * Auth middleware answers `{"error":"Unauthorized"}` and FastAPI's own 404/422 `{"detail":...}`.
 */

import type { ErrorCode, RequestError } from '../types';

/** Longest server text copied into a message, in characters. */
export const MAX_MESSAGE_CHARS = 500;

/** Socket codes meaning "could not connect": nothing listening, bad host, connect timeout. */
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The `code` of a Node/undici error (also looks inside an AggregateError from happy eyeballs). */
export function errorCodeOf(err: unknown): string | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const e = err as { code?: unknown; errors?: unknown };
  if (typeof e.code === 'string') return e.code;
  if (Array.isArray(e.errors) && e.errors.length > 0) return errorCodeOf(e.errors[0]);
  return undefined;
}

/**
 * Classify a transport error from undici or Node.
 * - `connection_refused`: the connection was never made (ECONNREFUSED, DNS failure, unreachable,
 *   connect timeout; ETIMEDOUT before any response);
 * - `connection_reset`: the connection was made and then reset or closed before the response was
 *   complete (ECONNRESET, EPIPE, undici's "other side closed", ...); also the default.
 * @param target `origin` of the server, named in the message.
 * @param responded whether response headers had arrived.
 */
export function classifyNetworkError(err: unknown, target: string, responded: boolean): RequestError {
  const code = errorCodeOf(err);
  const detail = err instanceof Error && err.message ? err.message : String(err);
  const tag = code ? `${code}: ${detail}` : detail;
  if (code !== undefined && (CONNECT_CODES.has(code) || (code === 'ETIMEDOUT' && !responded))) {
    return {
      code: 'connection_refused',
      message: `could not connect to ${target} (${tag}); is the server running, and is baseUrl right?`,
    };
  }
  const when = responded ? 'while streaming the response' : 'before the response headers';
  return { code: 'connection_reset', message: `connection to ${target} closed ${when} (${tag})` };
}

/** `http_4xx` for 4xx statuses, `http_5xx` for everything else that is not 2xx. */
export function httpErrorCode(status: number): ErrorCode {
  return status >= 400 && status < 500 ? 'http_4xx' : 'http_5xx';
}

function clip(s: string): string {
  const t = s.trim();
  return t.length > MAX_MESSAGE_CHARS ? `${t.slice(0, MAX_MESSAGE_CHARS)}…` : t;
}

/** Fields of a vLLM error object, whichever of the shapes it came in. */
interface ErrorInfo {
  message?: string;
  type?: string;
  param?: string;
  code?: string | number;
}

/** Pull `{message, type, param, code}` out of a parsed error body; undefined if it has none. */
export function errorInfoOf(obj: unknown): ErrorInfo | undefined {
  if (obj === null || typeof obj !== 'object') return undefined;
  const o = obj as Record<string, unknown>;
  const pick = (x: Record<string, unknown>): ErrorInfo => ({
    message: typeof x.message === 'string' ? x.message : x.message != null ? JSON.stringify(x.message) : undefined,
    type: typeof x.type === 'string' ? x.type : undefined,
    param: typeof x.param === 'string' ? x.param : undefined,
    code: typeof x.code === 'string' || typeof x.code === 'number' ? x.code : undefined,
  });
  if (o.error !== null && typeof o.error === 'object') return pick(o.error as Record<string, unknown>);
  if (typeof o.error === 'string') return { message: o.error };
  if (o.object === 'error') return pick(o);
  if (o.detail !== undefined) return { message: typeof o.detail === 'string' ? o.detail : JSON.stringify(o.detail) };
  return undefined;
}

function formatInfo(info: ErrorInfo): string {
  const head = info.type ? `${info.type}: ` : '';
  const param = info.param ? ` (param ${info.param})` : '';
  return `${head}${clip(info.message ?? '(no message)')}${param}`;
}

/** A hint for statuses whose usual cause is the client's setup. */
function hintFor(status: number): string {
  if (status === 401 || status === 403) return '; set apiKey or LOADLAB_API_KEY to the key the server expects';
  if (status === 404)
    return "; check baseUrl (without /v1) and that model matches the server's served model name (GET /v1/models)";
  return '';
}

/**
 * Message for a non-2xx response: `HTTP 400 BadRequestError: <server message> (param input_tokens)`.
 * Accepts both vLLM error shapes, `{"error": "..."}`, FastAPI's `{"detail": ...}`, or any text.
 * @param text response body (may be empty or clipped).
 */
export function describeHttpError(status: number, text: string): string {
  let info: ErrorInfo | undefined;
  try {
    info = errorInfoOf(JSON.parse(text));
  } catch {
    info = undefined;
  }
  const body = info ? formatInfo(info) : text.trim() ? clip(text) : 'empty body';
  return `HTTP ${status} ${body}${hintFor(status)}`;
}

/**
 * Message for an `{"error": ...}` event inside a 200 stream (vLLM sends it, then `[DONE]`):
 * `server error event mid-stream: 500 InternalServerError: Internal server error`.
 */
export function describeStreamError(event: unknown): string {
  const info = errorInfoOf(event) ?? { message: clip(JSON.stringify(event)) };
  const code = info.code !== undefined ? `${info.code} ` : '';
  return `server error event mid-stream: ${code}${formatInfo(info)}`;
}

/** Replace every occurrence of `secret` in `text` with `***` (no-op for an empty secret). */
export function redact(text: string, secret: string | undefined): string {
  return secret ? text.split(secret).join('***') : text;
}
