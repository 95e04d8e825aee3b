/**
 * Reading a request's JSON body without stalling the event loop: the bytes are copied into
 * one buffer as they arrive (sized by Content-Length when given, so there is no big copy at
 * the end), and a body over `OFF_LOOP_JSON_BYTES` is decoded and parsed in a worker thread
 * (tokenize-pool.ts). A 60 MB body parsed on the loop stalled every stream for ~0.1–0.7 s.
 * Errors are FastAPI's: 413 over 64 MiB, 400 for a wrong media type or bad JSON.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { ApiError } from './reply';
import { validationError } from './requests';
import { pyStr } from './vllm-errors';
import { JsonSyntaxError } from './tokenize-pool';

/** Largest body accepted, bytes (64 MiB). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Bodies larger than this are parsed in a worker thread, bytes (1 MiB). */
export const OFF_LOOP_JSON_BYTES = 1024 * 1024;

/** The whole body as one Buffer (owning its memory when Content-Length was given); 413 over `MAX_BODY_BYTES`. */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    let buf =
      Number.isInteger(declared) && declared > 0 && declared <= MAX_BODY_BYTES ? Buffer.allocUnsafeSlow(declared) : undefined;
    const parts: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (b: Buffer) => {
      if (failed) return;
      if (size + b.length > MAX_BODY_BYTES) {
        failed = true;
        return reject(new ApiError(413, 'Request Entity Too Large', 'Request Entity Too Large'));
      }
      if (buf && size + b.length <= buf.length) b.copy(buf, size);
      else {
        if (buf) parts.push(buf.subarray(0, size));
        buf = undefined;
        parts.push(b);
      }
      size += b.length;
    });
    req.on('end', () => {
      if (failed) return;
      resolve(buf ? buf.subarray(0, size) : Buffer.concat(parts));
    });
    req.on('error', reject);
  });
}

/** A body parsed elsewhere: the value, and the length of the longest string left out of it (0 = none). */
export interface ParsedBody {
  value: unknown;
  cutChars: number;
}

const cutOf = new WeakMap<object, number>();

/** Characters of the longest string the off-loop parser left out of `body` (replaced by ''), 0 if none. */
export function cutChars(body: object): number {
  return cutOf.get(body) ?? 0;
}

/** FastAPI's `json_invalid` error, worded as vLLM's validation handler sends it (vllm-errors.ts). */
function jsonInvalid(message: string): ApiError {
  const err = `{'type': 'json_invalid', 'loc': ('body', 0), 'msg': 'JSON decode error', 'input': {}, 'ctx': {'error': ${pyStr(message)}}}`;
  // Before FastAPI's ValidationException.__str__ (vLLM 0.6, 0.10) the handler sent the list's repr once.
  const e = new ApiError(400, `1 validation error:\n  ${err} [${err}]`, 'Bad Request');
  return e.wordedAs({ 'v0.6': `[${err}]`, 'v0.10': `[${err}]` });
}

/**
 * The body as a JSON object (FastAPI's checks and 400s). `parseOffLoop` parses big bodies
 * (over `OFF_LOOP_JSON_BYTES`) elsewhere, and may leave out over-long strings (see `cutChars`);
 * without it everything is parsed here.
 */
export async function readJson(
  req: IncomingMessage,
  parseOffLoop?: (bytes: Buffer) => Promise<ParsedBody>,
): Promise<Record<string, unknown>> {
  const media = String(req.headers['content-type'] ?? '')
    .toLowerCase()
    .split(';')[0]
    .trim();
  if (media !== 'application/json')
    throw new ApiError(400, "Unsupported Media Type: Only 'application/json' is allowed", 'Bad Request');
  const raw = await readBody(req);
  const bytes = raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf ? raw.subarray(3) : raw;
  // FastAPI answers a body that is not UTF-8 with HTTPException(400, "There was an error parsing the body")
  // (fastapi/routing.py, json.loads raising UnicodeDecodeError); a leading BOM is accepted, as json.loads(bytes) does.
  if (!isUtf8(bytes)) throw new ApiError(400, 'There was an error parsing the body', 'Bad Request');
  let v: unknown;
  let cut = 0;
  try {
    if (parseOffLoop && bytes.length > OFF_LOOP_JSON_BYTES) ({ value: v, cutChars: cut } = await parseOffLoop(bytes));
    else v = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof JsonSyntaxError) throw jsonInvalid(err.message);
    throw err;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw validationError('body', 'Input should be a valid dictionary or object', null);
  if (cut > 0) cutOf.set(v, cut);
  return v as Record<string, unknown>;
}
