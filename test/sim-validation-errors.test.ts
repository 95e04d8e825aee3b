/**
 * The simulator's error bodies are vLLM's, byte for byte (issue #12): each fixture under
 * test/fixtures/vllm-wire/v0.19/errors/ names the vLLM source it follows, the request and the status; the body
 * the simulator sends must equal it exactly. Also `usage.prompt_tokens_details` with
 * `--enable-prompt-tokens-details`: null (or no key when streamed) unless some prompt tokens were cached.
 * Real HTTP against the simulator process (startSim, port 0).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../src/sim/start';

const DIR = join(__dirname, 'fixtures', 'vllm-wire', 'v0.19', 'errors');

/** A fixture's status and exact body (header lines start with `# `). */
function fixture(name: string): { status: number; body: string } {
  const lines = readFileSync(join(DIR, name), 'utf8').replace(/\n$/, '').split('\n');
  const header = lines.filter((l) => l.startsWith('# '));
  const status = Number(/^# status: (\d+)$/m.exec(header.join('\n'))?.[1]);
  return { status, body: lines.slice(header.length).join('\n') };
}

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({
    extraArgs: ['--max-model-len', '4096', '--enable-prompt-tokens-details', '--stats-interval-s', '0'],
  });
});

afterAll(async () => {
  await sim?.stop();
});

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${sim.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function expectFixture(res: Promise<Response>, name: string): Promise<void> {
  const r = await res;
  const want = fixture(name);
  expect(r.status).toBe(want.status);
  expect(r.headers.get('content-type')).toBe('application/json');
  expect(await r.text()).toBe(want.body);
}

const HI = [{ role: 'user', content: 'hi' }];

describe("vLLM's error bodies, byte for byte", () => {
  it('a 4,090-token completions prompt without max_tokens counts the default 16 and is refused', async () => {
    await expectFixture(post('/v1/completions', { prompt: new Array(4090).fill(9707) }), 'completions-default-max-tokens.txt');
  });

  it('the same prompt fits with max_tokens 6, and chat counts no default output', async () => {
    const ok = await post('/v1/completions', { prompt: new Array(4090).fill(9707), max_tokens: 6 });
    expect(ok.status).toBe(200);
    const chat = await post('/v1/chat/completions', { messages: HI });
    expect(chat.status).toBe(200);
  });

  it('max_tokens above max_model_len', async () => {
    await expectFixture(post('/v1/completions', { prompt: 'hi', max_tokens: 5000 }), 'max-tokens-too-large.txt');
  });

  it('max_tokens 0', async () => {
    await expectFixture(post('/v1/completions', { prompt: 'hi', max_tokens: 0 }), 'max-tokens-zero.txt');
  });

  it('temperature 3 (a float in the message)', async () => {
    await expectFixture(
      post('/v1/chat/completions', { messages: HI, max_tokens: 3, temperature: 3 }),
      'temperature-out-of-range.txt',
    );
  });

  it('min_tokens above max_tokens: no parameter, no suffix', async () => {
    await expectFixture(post('/v1/completions', { prompt: 'hi', max_tokens: 5, min_tokens: 6 }), 'min-tokens-above-max.txt');
  });

  it("a chat body without messages is pydantic's missing error", async () => {
    await expectFixture(post('/v1/chat/completions', { max_tokens: 5, stream: false }), 'chat-missing-messages.txt');
  });

  it("stream_options without stream: a model validator's VLLMValidationError inside a pydantic error", async () => {
    await expectFixture(
      post('/v1/completions', { prompt: 'hi', stream_options: { include_usage: true } }),
      'stream-options-without-stream.txt',
    );
  });

  it("an unknown route is FastAPI's default 404", async () => {
    await expectFixture(fetch(`${sim.baseUrl}/v2/nothing`), 'unknown-route.txt');
  });
});

describe('prompt_tokens_details with --enable-prompt-tokens-details', () => {
  const prompt = Array.from({ length: 64 }, (_, i) => 1000 + i);

  it('is null on a miss, {"cached_tokens": N} once the prompt is cached', async () => {
    const first: any = await (await post('/v1/completions', { prompt, max_tokens: 2 })).json();
    expect(first.usage).toHaveProperty('prompt_tokens_details', null);
    const again: any = await (await post('/v1/completions', { prompt, max_tokens: 2 })).json();
    const cached = again.usage.prompt_tokens_details?.cached_tokens;
    expect(cached).toBeGreaterThan(0);
    expect(cached).toBeLessThanOrEqual(64);
    expect(Object.keys(again.usage.prompt_tokens_details)).toEqual(['cached_tokens']);
  });

  it('a streamed miss has no prompt_tokens_details key in its usage chunk', async () => {
    const fresh = Array.from({ length: 40 }, (_, i) => 5000 + i);
    const res = await post('/v1/completions', {
      prompt: fresh,
      max_tokens: 2,
      stream: true,
      stream_options: { include_usage: true },
    });
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)));
    const usage = events.at(-1).usage;
    expect(usage.prompt_tokens).toBe(40);
    expect(usage).not.toHaveProperty('prompt_tokens_details');
  });
});

describe('the field a chat request named', () => {
  it('max_completion_tokens above max_model_len is named as sent', async () => {
    const r = await post('/v1/chat/completions', { messages: HI, max_completion_tokens: 5000 });
    expect(r.status).toBe(400);
    expect((await r.json()) as unknown).toEqual({
      error: {
        message:
          'max_completion_tokens=5000 cannot be greater than max_model_len=max_total_tokens=4096. Please request fewer output tokens. (parameter=max_completion_tokens, value=5000)',
        type: 'BadRequestError',
        param: 'max_completion_tokens',
        code: 400,
      },
    });
  });
});
