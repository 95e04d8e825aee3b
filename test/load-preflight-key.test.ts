import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPromptLengths } from '../src/runner/preflight';
import { promptOfTokens } from '../src/workload/prompts';
import { makeRequest } from '../src/workload/workload';

// A /tokenize behind a key. vLLM's `--api-key` guards every registered route except /health,
// /ping, /load, /version, /metrics and the docs, so /tokenize too, and answers 401
// {"error": "Unauthorized"} (vllm/entrypoints/openai/server_utils.py, AuthenticationMiddleware,
// PUBLIC_ENDPOINTS). Counts 1 token per character.
const KEY = 'sk-test-preflight';
let server: Server;
let url: string;
const auths: boolean[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const ok = req.headers.authorization === `Bearer ${KEY}`;
      auths.push(ok);
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      if (!ok) return void res.end('{"error":"Unauthorized"}');
      const b = JSON.parse(Buffer.concat(parts).toString('utf8')) as { prompt?: string; messages?: Array<{ content: string }> };
      const n = b.prompt !== undefined ? [...b.prompt].length : (b.messages ?? []).reduce((k, m) => k + [...m.content].length, 0);
      res.end(JSON.stringify({ count: n }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function withEnv<T>(vars: Record<string, string | undefined>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const set = (v: Record<string, string | undefined>) => {
    for (const [k, x] of Object.entries(v)) {
      if (x === undefined) delete process.env[k];
      else process.env[k] = x;
    }
  };
  set(vars);
  return fn().finally(() => set(saved));
}

describe("the /tokenize calls use the run's API key (issue #17 item 9)", () => {
  const spec = makeRequest('hello', { maxTokens: 4 });

  it('checkPromptLengths takes the key from LOADLAB_API_KEY, and says why it could not check without one', async () => {
    const counted = await withEnv({ LOADLAB_API_KEY: KEY, OPENAI_API_KEY: undefined }, () =>
      checkPromptLengths(url, 'm', [spec], 4096),
    );
    expect(counted).toEqual({ checked: 1, maxPromptTokens: 5 });
    const none = await withEnv({ LOADLAB_API_KEY: undefined, OPENAI_API_KEY: undefined }, () =>
      checkPromptLengths(url, 'm', [spec], 4096),
    );
    expect(none.checked).toBe(0);
    expect(none.skipped).toBe(
      'POST /tokenize answered 401 (it wants an API key: pass apiKey (--api-key) or set LOADLAB_API_KEY); prompt lengths were not checked',
    );
    const wrong = await checkPromptLengths(url, 'm', [spec], 4096, { apiKey: 'sk-wrong' });
    expect(wrong.skipped).toMatch(/^POST \/tokenize answered 401 \(the API key was refused\)/);
  });

  it('promptOfTokens counts with the env key, and names the 401 when it must estimate', async () => {
    const p = await withEnv({ LOADLAB_API_KEY: undefined, OPENAI_API_KEY: KEY }, () =>
      promptOfTokens(40, { baseUrl: `${url}/v1` }),
    );
    expect(p).toMatchObject({ method: 'tokenize', estimated: false, tokens: 40 });
    const e = await withEnv({ LOADLAB_API_KEY: undefined, OPENAI_API_KEY: undefined }, () =>
      promptOfTokens(40, { baseUrl: url }),
    );
    expect(e.estimated).toBe(true);
    expect(e.note).toBe(
      `POST ${url}/tokenize unavailable (POST /tokenize answered 401: the server wants an API key; pass --api-key (apiKey) or set LOADLAB_API_KEY): length estimated`,
    );
  });
});
