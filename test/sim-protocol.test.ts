/**
 * The simulator answers invalid and unusual requests as vLLM does (issue #17 item 4 and its
 * table): real HTTP against the simulator process (startSim, port 0). Invariants only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIM_LOGPROB } from '../src/sim/http/fake-logprobs';
import { startSim, type SimHandle } from '../src/sim/start';

let sim: SimHandle;
const M = [{ role: 'user', content: 'hi' }];

beforeAll(async () => {
  sim = await startSim({ extraArgs: ['--stats-interval-s', '0'] });
});

afterAll(async () => {
  await sim?.stop();
});

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${sim.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
}

const chat = (extra: Record<string, unknown>) => post('/v1/chat/completions', { messages: M, max_tokens: 3, ...extra });

/** A 400 in vLLM's error shape, with no stack trace; returns the message. */
async function expect400(res: Response | Promise<Response>): Promise<string> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(400);
  const body = JSON.parse(text);
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error)).toEqual(['message', 'type', 'param', 'code']);
  expect(body.error.code).toBe(400);
  expect(text).not.toMatch(/\bat .*\.ts:\d+|TypeError|RangeError/);
  return body.error.message as string;
}

async function ok(res: Response | Promise<Response>): Promise<any> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBe(200);
  return JSON.parse(text);
}

/** JSON chunks of an SSE body (without [DONE]). */
async function chunks(res: Response | Promise<Response>): Promise<any[]> {
  const r = await res;
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  const text = await r.text();
  expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  return text
    .split('\n\n')
    .slice(0, -2)
    .map((e) => JSON.parse(e.slice(6)));
}

describe('issue #17 item 4: client mistakes are 400s, never 500s with a stack', () => {
  it.each([5, {}, true])('messages[].content = %j', async (content) => {
    expect(await expect400(chat({ messages: [{ role: 'user', content }] }))).toMatch(/content/);
  });

  it('content parts that are not text objects', async () => {
    await expect400(chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] }));
    await expect400(chat({ messages: [{ role: 'user', content: [null, 'x', 5] }] }));
  });

  it('/tokenize with messages [null] or content 5', async () => {
    await expect400(post('/tokenize', { messages: [null] }));
    await expect400(post('/tokenize', { messages: [{ role: 'user', content: 5 }] }));
  });

  it.each(['max_tokens', 'n', 'model', 'temperature', 'stop', 'messages', 'logprobs'])(
    'arrays nested 10,000 deep in %s',
    async (key) => {
      const deep = '['.repeat(10_000) + ']'.repeat(10_000);
      const base: Record<string, string> = { messages: JSON.stringify(M), max_tokens: '3' };
      base[key] = deep;
      const body = `{${Object.entries(base)
        .map(([k, v]) => `"${k}":${v}`)
        .join(',')}}`;
      await expect400(post('/v1/chat/completions', body));
    },
  );

  it('a completions prompt nested 10,000 deep', async () => {
    await expect400(post('/v1/completions', `{"prompt":${'['.repeat(10_000)}1${']'.repeat(10_000)}}`));
  });

  it('stays healthy afterwards', async () => {
    expect((await fetch(`${sim.baseUrl}/health`)).status).toBe(200);
  });
});

describe('requests vLLM treats differently (the table)', () => {
  it('max_tokens "10" is coerced to 10 (pydantic lax mode), chat and completions', async () => {
    const c = await ok(chat({ max_tokens: '10', ignore_eos: true }));
    expect(c.usage.completion_tokens).toBe(10);
    const d = await ok(post('/v1/completions', { prompt: 'hi', max_tokens: '7', ignore_eos: 'true' }));
    expect(d.usage.completion_tokens).toBe(7);
    await expect400(chat({ max_tokens: '1.5' }));
  });

  it('stream "true" (or 1) streams; ignore_eos "yes" is true', async () => {
    const cs = await chunks(chat({ stream: 'true', ignore_eos: 'yes', max_tokens: 5 }));
    expect(cs[0].choices[0].delta.role).toBe('assistant');
    expect(cs.filter((x) => x.choices[0].delta.content !== undefined && !x.choices[0].delta.role).length).toBeGreaterThanOrEqual(
      1,
    );
    expect(cs.at(-1).choices[0].finish_reason).toBe('length');
    await chunks(chat({ stream: 1 }));
    await expect400(chat({ stream: 'maybe' }));
  });

  it('n > 1 gives n choices with their own index; usage sums them; n < 1 is refused', async () => {
    const c = await ok(chat({ n: 3, max_tokens: 4, ignore_eos: true }));
    expect(c.choices.map((x: any) => x.index)).toEqual([0, 1, 2]);
    expect(c.usage.completion_tokens).toBe(12);
    const cs = await chunks(
      chat({ n: '2', max_tokens: 4, ignore_eos: true, stream: true, stream_options: { include_usage: true } }),
    );
    const roles = cs.filter((x) => x.choices[0]?.delta?.role);
    expect(roles.map((x) => x.choices[0].index).sort()).toEqual([0, 1]);
    const finishes = cs.filter((x) => x.choices[0]?.finish_reason);
    expect(finishes.map((x) => x.choices[0].index).sort()).toEqual([0, 1]);
    expect(cs.at(-1).choices).toEqual([]);
    expect(cs.at(-1).usage.completion_tokens).toBe(8);
    const d = await ok(post('/v1/completions', { prompt: 'hi', n: 2, max_tokens: 3, ignore_eos: true }));
    expect(d.choices.map((x: any) => x.index)).toEqual([0, 1]);
    expect(await expect400(chat({ n: 0 }))).toBe('n must be at least 1, got 0.');
    expect(await expect400(chat({ n: 1e9 }))).toMatch(/^n must be at most 16384, got 1000000000/);
  });

  it('n choices cost n engine requests (vllm:request_success_total)', async () => {
    const total = async () => {
      const text = await (await fetch(`${sim.baseUrl}/metrics`)).text();
      return text
        .split('\n')
        .filter((l) => l.startsWith('vllm:request_success_total{'))
        .reduce((a, l) => a + Number(l.split(' ').pop()), 0);
    };
    const before = await total();
    await ok(chat({ n: 3, max_tokens: 2, ignore_eos: true }));
    expect(await total()).toBe(before + 3);
  });

  it('stop strings end the text with finish_reason "stop" and stop_reason = the string', async () => {
    const c = await ok(chat({ stop: ['.'], max_tokens: 200, ignore_eos: true }));
    const ch = c.choices[0];
    expect(ch.finish_reason).toBe('stop');
    expect(ch.stop_reason).toBe('.');
    expect(ch.message.content).not.toContain('.');
    expect(c.usage.completion_tokens).toBeLessThan(200);
    const cs = await chunks(
      post('/v1/completions', { prompt: 'hi', stop: '.', max_tokens: 200, ignore_eos: true, stream: true }),
    );
    const last = cs.at(-1).choices[0];
    expect(last.finish_reason).toBe('stop');
    expect(last.stop_reason).toBe('.');
    expect(cs.map((x) => x.choices[0].text).join('')).not.toContain('.');
    // '. ' spans two tokens ('.' then ' Word'): the '.' is held back, never streamed.
    const two = await chunks(chat({ stop: ['. '], max_tokens: 200, ignore_eos: true, stream: true }));
    expect(two.map((x) => x.choices[0].delta.content ?? '').join('')).not.toContain('.');
    expect(two.at(-1).choices[0].stop_reason).toBe('. ');
    expect(await expect400(chat({ stop: [''] }))).toBe('stop cannot contain an empty string.');
  });

  it('logprobs / top_logprobs are returned (simulated, a fixed value) and checked as vLLM does', async () => {
    const c = await ok(chat({ logprobs: true, top_logprobs: 2, max_tokens: 5, ignore_eos: true }));
    const content = c.choices[0].logprobs.content;
    expect(content).toHaveLength(5);
    for (const t of content) {
      expect(t.logprob).toBe(SIM_LOGPROB);
      expect(t.top_logprobs).toHaveLength(2);
      expect(Buffer.from(t.bytes).toString('utf8')).toBe(t.token);
    }
    expect(content.map((t: any) => t.token).join('')).toBe(c.choices[0].message.content);
    const cs = await chunks(chat({ logprobs: true, max_tokens: 3, ignore_eos: true, stream: true }));
    expect(cs.slice(1).every((x) => x.choices[0].logprobs.content.length >= 1)).toBe(true);
    const d = await ok(post('/v1/completions', { prompt: 'hi', logprobs: 1, max_tokens: 4, ignore_eos: true }));
    expect(d.choices[0].logprobs.tokens).toHaveLength(4);
    expect(d.choices[0].logprobs.token_logprobs).toEqual([SIM_LOGPROB, SIM_LOGPROB, SIM_LOGPROB, SIM_LOGPROB]);
    expect(await expect400(chat({ top_logprobs: 5 }))).toMatch(/`logprobs` must be set to true/);
    expect(await expect400(chat({ logprobs: true, top_logprobs: -2 }))).toMatch(/must be a positive value or -1/);
    expect(await expect400(post('/v1/completions', { prompt: 'hi', logprobs: 1000 }))).toMatch(/greater than max allowed: 20/);
  });

  it('tools: "auto" (the default with tools) is refused without --enable-auto-tool-choice; "none" is accepted', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }];
    expect(await expect400(chat({ tools }))).toBe(
      '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    );
    expect(await expect400(chat({ tools, tool_choice: 'auto' }))).toMatch(/enable-auto-tool-choice/);
    await ok(chat({ tools, tool_choice: 'none' }));
    await expect400(chat({ tools: 'x' }));
    await expect400(chat({ tools: [] }));
    expect(await expect400(chat({ tool_choice: 'auto' }))).toBe('When using `tool_choice`, `tools` must be set.');
    expect(await expect400(chat({ tools, tool_choice: { type: 'function', function: { name: 'nope' } } }))).toMatch(
      /does not match any/,
    );
    expect(await expect400(chat({ tools, tool_choice: 'required' }))).toMatch(/simulator does not simulate forced tool calls/);
  });

  it('out-of-range temperature / top_p are 400s; in-range ones are accepted', async () => {
    expect(await expect400(chat({ temperature: -5 }))).toBe(
      'temperature must be non-negative, got -5.0. (parameter=temperature, value=-5.0)',
    );
    expect(await expect400(chat({ temperature: 3 }))).toMatch(/temperature must be in \[0, 2\]/);
    await expect400(chat({ temperature: 'hot' }));
    expect(await expect400(chat({ top_p: 7 }))).toBe('top_p must be in (0, 1], got 7.0. (parameter=top_p, value=7.0)');
    await expect400(chat({ top_p: 0 }));
    await ok(chat({ temperature: 0.7, top_p: '0.9' }));
  });

  it('invalid UTF-8 in the body is a 400', async () => {
    const body = Buffer.concat([
      Buffer.from('{"messages":[{"role":"user","content":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}],"max_tokens":2}'),
    ]);
    expect(await expect400(post('/v1/chat/completions', body))).toBe('There was an error parsing the body');
  });

  it('token ids outside the vocabulary are a 400', async () => {
    expect(await expect400(post('/v1/completions', { prompt: [1, 999999999], max_tokens: 2 }))).toBe(
      'Token id 999999999 is out of vocabulary',
    );
    await ok(post('/v1/completions', { prompt: [1, 151643], max_tokens: 2 }));
  });

  it('model: 5 (or false, {}) is a 400 type error, an unknown name still a 404', async () => {
    for (const model of [5, false, {}]) expect(await expect400(chat({ model }))).toMatch(/valid string/);
    expect((await chat({ model: 'nope' })).status).toBe(404);
  });

  it("messages: [] is a 400 (Qwen2.5's chat template reads messages[0])", async () => {
    await expect400(chat({ messages: [] }));
    await expect400(post('/tokenize', { messages: [] }));
  });

  it('stream_options of the wrong type is a 400; lax booleans inside it are coerced', async () => {
    await expect400(chat({ stream: true, stream_options: 'yes' }));
    await expect400(chat({ stream: true, stream_options: [] }));
    await expect400(chat({ stream: false, stream_options: { include_usage: true } }));
    await ok(chat({ stream: false, stream_options: {} })); // `{}` is falsy to validate_stream_options
    const cs = await chunks(chat({ stream: true, ignore_eos: true, stream_options: { include_usage: 'yes' } }));
    expect(cs.at(-1).usage.completion_tokens).toBe(3);
  });
});
