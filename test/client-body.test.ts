// Request bodies, headers, option checks and error messages: pure, no sockets.
import { describe, expect, it } from 'vitest';
import {
  buildHeaders,
  buildRequestBody,
  classifyNetworkError,
  createClient,
  describeHttpError,
  describeStreamError,
  endpointPath,
  redact,
} from '../src/client';

const STREAM = { stream: true, stream_options: { include_usage: true, continuous_usage_stats: true } };

describe('buildRequestBody', () => {
  it('chat by default, with stream and usage options; temperature only when given', () => {
    const messages = [{ role: 'user' as const, content: 'Hi' }];
    expect(buildRequestBody({ messages, maxTokens: 32 }, 'm')).toEqual({ model: 'm', messages, max_tokens: 32, ...STREAM });
    expect(buildRequestBody({ messages, temperature: 0 }, 'm')).toEqual({ model: 'm', messages, temperature: 0, ...STREAM });
  });

  it('completions with token ids; fixedOutput sends ignore_eos and min_tokens; extraBody merges last', () => {
    const body = buildRequestBody(
      {
        api: 'completions',
        prompt: [1, 2, 3],
        maxTokens: 64,
        fixedOutput: true,
        extraBody: { top_k: 5, stream_options: { include_usage: true } },
      },
      'm',
    );
    expect(body).toEqual({
      model: 'm',
      prompt: [1, 2, 3],
      max_tokens: 64,
      ignore_eos: true,
      min_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
      top_k: 5,
    });
  });

  it('a chat spec with only a text prompt becomes one user message', () => {
    expect(buildRequestBody({ prompt: 'Hello' }, 'm').messages).toEqual([{ role: 'user', content: 'Hello' }]);
  });

  it('throws with the fix for specs that cannot be sent', () => {
    expect(() => buildRequestBody({}, 'm')).toThrow(/chat request needs messages/);
    expect(() => buildRequestBody({ api: 'completions' }, 'm')).toThrow(/needs a prompt/);
    expect(() => buildRequestBody({ messages: [{ role: 'user', content: 'x' }], fixedOutput: true }, 'm')).toThrow(
      /fixedOutput needs maxTokens/,
    );
  });

  it('endpoints', () => {
    expect(endpointPath('chat')).toBe('/v1/chat/completions');
    expect(endpointPath('completions')).toBe('/v1/completions');
  });
});

describe('buildHeaders', () => {
  it('sends the key as Bearer and x-request-id last', () => {
    expect(buildHeaders({ requestId: 'id-1', apiKey: 'k', headers: { 'X-Request-Id': 'other', 'X-Extra': 'y' } })).toEqual({
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: 'Bearer k',
      'x-extra': 'y',
      'x-request-id': 'id-1',
    });
    expect(buildHeaders({ requestId: 'id-2' }).authorization).toBeUndefined();
  });
});

describe('createClient option checks', () => {
  const model = 'm';
  it('names the fix', () => {
    expect(() => createClient({ baseUrl: 'foo', model })).toThrow(
      "baseUrl must be an http(s) URL such as http://127.0.0.1:8000, got 'foo'",
    );
    expect(() => createClient({ baseUrl: 'ftp://x', model })).toThrow(/http\(s\) URL/);
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:8000/v1', model })).toThrow("use 'http://127.0.0.1:8000'");
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:8000', model: '' })).toThrow(/model must be/);
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:8000', model, connections: 0 })).toThrow(
      'connections must be an integer ≥ 1',
    );
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:8000', model, timeoutMs: -1 })).toThrow(
      /timeoutMs must be a number > 0/,
    );
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:8000', model, idleTimeoutMs: NaN })).toThrow(/idleTimeoutMs/);
  });

  it('keeps a path prefix and drops a trailing slash', async () => {
    const c = createClient({ baseUrl: 'http://127.0.0.1:8000/proxy/', model });
    expect(c.baseUrl).toBe('http://127.0.0.1:8000/proxy');
    await c.close();
  });
});

describe('error messages', () => {
  it('reads both vLLM error body shapes, FastAPI detail and plain text', () => {
    const m = "This model's maximum context length is 4096 tokens.";
    expect(
      describeHttpError(
        400,
        JSON.stringify({ error: { message: m, type: 'BadRequestError', param: 'input_tokens', code: 400 } }),
      ),
    ).toBe(`HTTP 400 BadRequestError: ${m} (param input_tokens)`);
    expect(
      describeHttpError(400, JSON.stringify({ object: 'error', message: m, type: 'BadRequestError', param: null, code: 400 })),
    ).toBe(`HTTP 400 BadRequestError: ${m}`);
    expect(describeHttpError(404, '{"detail":"Not Found"}')).toMatch(/^HTTP 404 Not Found; check baseUrl/);
    expect(describeHttpError(401, '{"error":"Unauthorized"}')).toMatch(/^HTTP 401 Unauthorized; set apiKey/);
    expect(describeHttpError(502, 'Bad gateway')).toBe('HTTP 502 Bad gateway');
    expect(describeHttpError(500, '')).toBe('HTTP 500 empty body');
  });

  it('describes a mid-stream error event', () => {
    const ev = JSON.parse(
      '{"error": {"message": "Internal server error", "type": "InternalServerError", "param": null, "code": 500}}',
    );
    expect(describeStreamError(ev)).toBe('server error event mid-stream: 500 InternalServerError: Internal server error');
  });

  it('tells refused from reset', () => {
    const err = (code: string) => Object.assign(new Error(code), { code });
    expect(classifyNetworkError(err('ECONNREFUSED'), 'http://h', false).code).toBe('connection_refused');
    expect(classifyNetworkError(new AggregateError([err('ECONNREFUSED')]), 'http://h', false).code).toBe('connection_refused');
    expect(classifyNetworkError(err('UND_ERR_CONNECT_TIMEOUT'), 'http://h', false).code).toBe('connection_refused');
    expect(classifyNetworkError(err('ECONNRESET'), 'http://h', false).code).toBe('connection_reset');
    expect(classifyNetworkError(err('UND_ERR_SOCKET'), 'http://h', true).code).toBe('connection_reset');
    expect(classifyNetworkError(err('ETIMEDOUT'), 'http://h', true).code).toBe('connection_reset');
  });

  it('redacts a secret', () => {
    expect(redact('bad key sk-1 (sk-1)', 'sk-1')).toBe('bad key *** (***)');
    expect(redact('x', undefined)).toBe('x');
  });
});
