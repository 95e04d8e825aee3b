/**
 * The one header set LoadLab sends to a target (`targetHeaders`, src/client/url.ts), and the
 * `authorization` header given as an extra header staying out of stored messages, as the API key
 * does. Real HTTP to a scripted server that echoes the token in its 401, as OpenAI's API does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/client';
import { targetHeaders } from '../src/client/url';
import { makeRequest } from '../src/workload/workload';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';

const TOKEN = 'sk-hdr-5b1e9c';

describe('targetHeaders', () => {
  it('sends the key as a bearer token, then the extra headers, names lower-cased; they may replace it', () => {
    expect(targetHeaders()).toEqual({});
    expect(targetHeaders({ apiKey: '' })).toEqual({});
    expect(targetHeaders({ apiKey: 'k', headers: { 'X-Tenant': 'course' } })).toEqual({
      authorization: 'Bearer k',
      'x-tenant': 'course',
    });
    expect(targetHeaders({ apiKey: 'k', headers: { Authorization: 'Basic abc' } })).toEqual({ authorization: 'Basic abc' });
  });
});

describe('an authorization header is redacted like the API key', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer({
      fail: { mode: 'status', status: 401, message: `Incorrect API key provided: ${TOKEN}` },
    });
  });
  afterAll(() => server?.close());

  it('the 401 record keeps its status and code, not the token', async () => {
    const client = createClient({
      baseUrl: server.url,
      model: 'scripted',
      apiKey: '',
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    try {
      const r = await client.send(makeRequest('hi', { maxTokens: 2 }), { index: 0, intendedStartMs: 0 });
      expect(r.ok).toBe(false);
      expect(r.status).toBe(401);
      expect(r.error?.message).toContain('Incorrect API key provided: ***');
      expect(JSON.stringify(r)).not.toContain(TOKEN);
      const seen = (await server.stats()).recent.at(-1);
      expect(seen?.authorization).toBe(`Bearer ${TOKEN}`);
    } finally {
      await client.close();
    }
  });
});
