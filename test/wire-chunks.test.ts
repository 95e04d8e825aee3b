/**
 * src/wire/chunks.ts is the one writer of vLLM's chunk JSON: its bytes match vLLM's documented
 * chunks, and the three model-less writers (the simulator, the null server — paced in this process,
 * and flat out with several chunks per write as the benches' child process — and the scripted test
 * server) send exactly the bytes it builds for the same chunk. Real HTTP on 127.0.0.1, port 0, to
 * real servers (two of them separate processes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnNullServer, startNullServer, type NullServer, type NullServerChild } from '../src/calibrate/null-server';
import { startSim, type SimHandle } from '../src/sim/start';
import { chunkHead, chunkJson, usageChunkJson, usageJson, type ChunkHead } from '../src/wire/chunks';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';

describe('chunk bytes', () => {
  const head = chunkHead({ api: 'chat', id: 'chatcmpl-1', created: 7, model: 'm' });
  it("writes vLLM's chat role, token, finishing and usage chunks", () => {
    expect(chunkJson('chat', head, { role: true })).toBe(
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null}',
    );
    expect(chunkJson('chat', head, { text: 'Hello' })).toBe(
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null,"token_ids":null}]}',
    );
    expect(chunkJson('chat', head, { index: 1, text: '天', finishReason: 'stop', stopReason: 151336 })).toContain(
      '{"index":1,"delta":{"content":"天"},"logprobs":null,"finish_reason":"stop","stop_reason":151336,"token_ids":null}',
    );
    expect(usageChunkJson(head, usageJson({ promptTokens: 12, completionTokens: 128 }))).toBe(
      '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"m","choices":[],"usage":{"prompt_tokens":12,"total_tokens":140,"completion_tokens":128}}',
    );
  });
  it('writes vLLM\'s completions chunk with "usage":null', () => {
    const h = chunkHead({ api: 'completions', id: 'cmpl-1', created: 7, model: 'm' });
    expect(chunkJson('completions', h, { text: ' and' })).toBe(
      '{"id":"cmpl-1","object":"text_completion","created":7,"model":"m","choices":[{"index":0,"text":" and","logprobs":null,"finish_reason":null,"stop_reason":null,"prompt_token_ids":null,"token_ids":null}],"usage":null}',
    );
  });
});

/** Rebuilds `raw` (one chunk as sent) with the wire module from its own values; `t` is the null server's extension. */
function rebuild(raw: string): string {
  const c = JSON.parse(raw);
  const h: ChunkHead = { api: 'chat', id: c.id, created: c.created, model: c.model };
  const usage = c.usage
    ? usageJson({ promptTokens: c.usage.prompt_tokens, completionTokens: c.usage.completion_tokens })
    : undefined;
  const extra = c.t !== undefined ? `,"t":${raw.slice(raw.lastIndexOf('"t":') + 4, -1)}` : undefined;
  if (c.choices.length === 0) return usageChunkJson(chunkHead(h), usage!);
  const ch = c.choices[0];
  const parts = ch.delta.role
    ? { role: true }
    : { text: ch.delta.content, finishReason: ch.finish_reason ?? undefined, stopReason: ch.stop_reason };
  return chunkJson('chat', chunkHead(h), parts, { usage, extra });
}

/** Key paths of a chunk in order (its shape without values). */
function shape(raw: string): string[] {
  const out: string[] = [];
  const walk = (v: unknown, path: string) => {
    if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v))
        if (k !== 't') {
          out.push(`${path}.${k}`);
          walk(x, `${path}.${k}`);
        }
  };
  walk(JSON.parse(raw), '');
  return out;
}

async function events(url: string, body: Record<string, unknown>): Promise<string[]> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 3,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
      ...body,
    }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  const evs = text.split('\n\n').slice(0, -2);
  for (const e of evs) expect(e.startsWith('data: ')).toBe(true);
  return evs.map((e) => e.slice(6));
}

let sim: SimHandle;
let nul: NullServer;
let scripted: ScriptedServer;
let nulChild: NullServerChild;

beforeAll(async () => {
  sim = await startSim({ extraArgs: ['--stats-interval-s', '0'] });
  nul = await startNullServer(0);
  scripted = await startScriptedServer({ gapMs: 1 });
  nulChild = await spawnNullServer();
}, 60_000);

afterAll(async () => {
  await Promise.all([sim?.stop(), nul?.close(), scripted?.close(), nulChild?.stop()]);
});

describe('the model-less writers', () => {
  it('each sends the bytes the wire module builds for its chunks, and all chunks have one shape', async () => {
    const streams = {
      sim: await events(sim.baseUrl, { ignore_eos: true }),
      nullServer: await events(`http://127.0.0.1:${nul.port}`, { null_gap_ms: 1 }),
      nullServerFlatOut: await events(nulChild.baseUrl, { null_gap_ms: 0, null_batch: 2, null_phase_ms: 1 }),
      scripted: await events(scripted.url, {}),
    };
    for (const [name, evs] of Object.entries(streams)) {
      expect(evs.length, name).toBe(1 + 3 + 1);
      for (const raw of evs) expect(raw, name).toBe(rebuild(raw));
    }
    const ref = streams.sim.map(shape);
    for (const [name, evs] of Object.entries(streams)) expect(evs.map(shape), name).toEqual(ref);
  });
});
