/**
 * What goes on the wire for one request: the endpoint path, the JSON body and the headers.
 * Pure functions, no I/O. The fields follow vLLM's OpenAI-compatible server
 * (see docs/design.md and the vLLM fact sheet §1.3 and §2).
 */

import { randomBytes } from 'node:crypto';
import type { Api, RequestSpec } from '../types';
import { targetHeaders } from './url';

/** URL path of an endpoint, relative to the server root: `/v1/chat/completions` or `/v1/completions`. */
export function endpointPath(api: Api): string {
  return api === 'completions' ? '/v1/completions' : '/v1/chat/completions';
}

/**
 * JSON body of one streamed request.
 *
 * Always: `model`, `stream: true` and
 * `stream_options: {include_usage: true, continuous_usage_stats: true}`, so vLLM reports the
 * running `completion_tokens` on every chunk (the client turns that into tokens per chunk) and a
 * final usage chunk. Then, from the spec:
 * - chat (`api` `'chat'`, the default): `messages`; a string `prompt` without `messages` is sent
 *   as one user message, for convenience;
 * - completions: `prompt` (text or token ids; token ids give exact prompt lengths);
 * - `max_tokens` when `maxTokens` is set;
 * - `ignore_eos: true` and `min_tokens: maxTokens` when `fixedOutput` (exactly `maxTokens` tokens);
 * - `temperature` only when given (otherwise the server default applies);
 * - `extraBody` merged last, so it can override any field above.
 *
 * @throws TypeError when the spec cannot make a request (no messages/prompt, or `fixedOutput`
 *   without `maxTokens`); the message names the fix.
 */
export function buildRequestBody(spec: RequestSpec, model: string): Record<string, unknown> {
  const api: Api = spec.api ?? 'chat';
  const body: Record<string, unknown> = { model };
  if (api === 'chat') {
    if (spec.messages !== undefined && spec.messages.length > 0) body.messages = spec.messages;
    else if (typeof spec.prompt === 'string') body.messages = [{ role: 'user', content: spec.prompt }];
    else {
      throw new TypeError(
        "a chat request needs messages, e.g. {messages: [{role: 'user', content: 'Hi'}]}, " +
          "or use {api: 'completions', prompt} for token-id prompts",
      );
    }
  } else if (api === 'completions') {
    if (spec.prompt === undefined || spec.prompt.length === 0) {
      throw new TypeError("a completions request needs a prompt (text or token ids), e.g. {api: 'completions', prompt: 'Hello'}");
    }
    body.prompt = spec.prompt;
  } else {
    throw new TypeError(`api must be 'chat' or 'completions', got '${String(api)}'`);
  }
  if (spec.maxTokens !== undefined) body.max_tokens = spec.maxTokens;
  if (spec.fixedOutput) {
    if (spec.maxTokens === undefined) {
      throw new TypeError('fixedOutput needs maxTokens (the exact output length), e.g. {maxTokens: 128, fixedOutput: true}');
    }
    body.ignore_eos = true;
    body.min_tokens = spec.maxTokens;
  }
  if (spec.temperature !== undefined) body.temperature = spec.temperature;
  body.stream = true;
  body.stream_options = { include_usage: true, continuous_usage_stats: true };
  if (spec.extraBody) Object.assign(body, spec.extraBody);
  return body;
}

/**
 * A fresh request-id prefix, `loadlab-<8 hex>-`; the client appends the request index, so the
 * server's ids read `chatcmpl-loadlab-1a2b3c4d-17` and join with its logs.
 */
export function makeRequestIdPrefix(): string {
  return `loadlab-${randomBytes(4).toString('hex')}-`;
}

/** Inputs of {@link buildHeaders}. */
export interface HeaderInputs {
  /** Sent as `x-request-id`. */
  requestId: string;
  /** Sent as `authorization: Bearer <apiKey>` when non-empty. Never stored anywhere else. */
  apiKey?: string;
  /** Extra headers; they override the defaults except `x-request-id` (names are lower-cased). */
  headers?: Record<string, string>;
}

/**
 * Request headers: `content-type: application/json`, `accept: text/event-stream`, then the
 * target's set (`targetHeaders`: `authorization` when an API key is set, the extra headers), then
 * `x-request-id`.
 */
export function buildHeaders(h: HeaderInputs): Record<string, string> {
  const out: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    ...targetHeaders(h),
  };
  // Set last: the record's requestId must be the id actually sent.
  out['x-request-id'] = h.requestId;
  return out;
}
