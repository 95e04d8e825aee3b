// The scripted server's knobs, read back through the client (in-process server: no timing asserted
// tighter than invariants). Other suites (load runner, CLI) rely on these behaviours.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../src/client';
import type { RequestSpec } from '../src/types';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';

let server: ScriptedServer;
const clients: Client[] = [];
const open = (route: string): Client => {
  const c = createClient({ baseUrl: server.routeUrl(route), model: 'm' });
  clients.push(c);
  return c;
};
const spec: RequestSpec = { messages: [{ role: 'user', content: 'x'.repeat(40) }], maxTokens: 8 };
const ctx = (index: number) => ({ index, intendedStartMs: performance.now() });

beforeAll(async () => {
  server = await startScriptedServer({
    routes: {
      multi: { tokens: 8, tokensPerChunk: 3 },
      eos: { tokens: 4, finishReason: 'stop' },
      nousage: { tokens: 5, usage: 'none' },
      cached: { tokens: 2, promptTokens: 100, cachedTokens: 64 },
      every2: { tokens: 2, fail: { mode: 'status', status: 503 }, failEvery: 2 },
      late: { tokens: 2, headersDelayMs: 40, firstTokenDelayMs: 60 },
    },
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.close();
});

describe('scripted server knobs', () => {
  it('tokensPerChunk: continuous usage gives tokens per chunk', async () => {
    const r = await open('multi').send(spec, ctx(0));
    expect(r).toMatchObject({ ok: true, chunkTokens: [3, 3, 2], outputTokens: 8, finishReason: 'length' });
    expect(r.tpotMs).toBeCloseTo((r.e2eMs! - r.ttftMs!) / 7, 9);
  });

  it('finishReason stop: the EOS chunk has empty content and still counts', async () => {
    const r = await open('eos').send(spec, ctx(0));
    expect(r).toMatchObject({ ok: true, chunkTokens: [1, 1, 1, 1], outputTokens: 4, finishReason: 'stop' });
  });

  it('without usage, output tokens fall back to the chunk count', async () => {
    const r = await open('nousage').send(spec, ctx(0));
    expect(r.ok).toBe(true);
    expect(r.promptTokens).toBeUndefined();
    expect(r).toMatchObject({ outputTokens: 5, chunkTokens: [1, 1, 1, 1, 1] });
  });

  it('reports prompt and cached tokens', async () => {
    expect(await open('cached').send(spec, ctx(0))).toMatchObject({ ok: true, promptTokens: 100, cachedTokens: 64 });
  });

  it('completions prompt tokens default to ⌈characters/4⌉ (token ids: their count)', async () => {
    const c = createClient({ baseUrl: server.url, model: 'm' });
    clients.push(c);
    expect(await c.send({ api: 'completions', prompt: 'abcdefghi', maxTokens: 3 }, ctx(0))).toMatchObject({
      ok: true,
      promptTokens: 3,
      outputTokens: 3,
    });
    expect(await c.send({ api: 'completions', prompt: [5, 6, 7, 8, 9], maxTokens: 2 }, ctx(1))).toMatchObject({
      promptTokens: 5,
      outputTokens: 2,
    });
  });

  it('failEvery fails every n-th request of a route', async () => {
    const c = open('every2');
    const rs = [];
    for (let i = 0; i < 4; i++) rs.push(await c.send(spec, ctx(i)));
    expect(rs.map((r) => r.error?.code ?? 'ok')).toEqual(['ok', 'http_5xx', 'ok', 'http_5xx']);
    expect(rs[1].status).toBe(503);
  });

  it('headersDelayMs holds the headers back; the first token still comes at firstTokenDelayMs', async () => {
    const r = await open('late').send(spec, ctx(0));
    expect(r.ok).toBe(true);
    expect(r.headersMs! - r.startMs).toBeGreaterThanOrEqual(39);
    expect(r.ttftMs!).toBeGreaterThanOrEqual(59);
  });

  it('serves /health, /v1/models, unknown routes as FastAPI 404', async () => {
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect(((await (await fetch(`${server.url}/v1/models`)).json()) as { data: { id: string }[] }).data[0].id).toBe('scripted');
    const r = await open('nope').send(spec, ctx(0));
    expect(r).toMatchObject({ ok: false, status: 404, error: { code: 'http_4xx' } });
    expect(r.error?.message).toMatch(/^HTTP 404 Not Found; check baseUrl/);
  });
});
