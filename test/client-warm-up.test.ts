/**
 * The client's warm-up (src/client/warm-up.ts): its stand-in answers what the client expects for both APIs,
 * it never throws, and a run's warm-up never reaches the target (a scripted SSE server on 127.0.0.1 counts
 * what it saw), from the main thread or a worker thread.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { warmClient } from '../src/client/warm-up';
import { runLoad } from '../src/runner/runner';
import { timeline } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer({ firstTokenDelayMs: 1, gapMs: 1, tokens: 3 });
});
afterAll(async () => {
  await server.close();
});

describe('warmClient', () => {
  it('streams a whole response of each API through the client', async () => {
    const chat = await warmClient({ baseUrl: server.url, model: 'm' }, makeRequest('你好', { maxTokens: 300 }));
    const completions = await warmClient(
      { baseUrl: server.url, model: 'm' },
      { api: 'completions', prompt: 'hello', maxTokens: 5 },
    );
    expect(chat.ok).toBe(true);
    expect(completions.ok).toBe(true);
    expect(chat.ms).toBeGreaterThan(0);
  });

  it('sends nothing to the target, with a key and headers given', async () => {
    const before = (await server.stats()).access.length;
    const warm = await warmClient(
      { baseUrl: server.url, model: 'm', apiKey: 'sk-secret', headers: { 'x-team': 'a' } },
      makeRequest('hi', { maxTokens: 2 }),
    );
    expect(warm.ok).toBe(true);
    expect((await server.stats()).access.length).toBe(before);
  });

  it('never throws: an API the client cannot send leaves it cold', async () => {
    const warm = await warmClient({ baseUrl: server.url, model: 'm' }, { api: 'embeddings', prompt: 'x' } as never);
    expect(warm.ok).toBe(false);
  });
});

describe("a run's warm-up", () => {
  for (const thread of [false, true]) {
    it(`reaches only the stand-in (${thread ? 'a worker thread' : 'the main thread'})`, async () => {
      const before = (await server.stats()).requests;
      const shape = timeline([0, 0, 5].map((atMs) => ({ atMs, request: makeRequest('hi', { maxTokens: 3 }) })));
      const r = await runLoad({ baseUrl: server.url, shape, out: false, progress: false, thread });
      expect(r.records.map((x) => x.ok)).toEqual([true, true, true]);
      expect((await server.stats()).requests - before).toBe(3);
    });
  }
});
