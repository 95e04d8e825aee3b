// The client over its two dispatchers: the lean pool (src/client/h1-pool.ts, the default for http:) and undici's Pool
// (LOADLAB_HTTP_CLIENT=undici, and every https: target). The same scripted server, every failure mode: both pools
// must give records that agree on everything but the times.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/client';
import type { RequestRecord, RequestSpec } from '../src/types';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';
import type { Failure } from './helpers/sse-stream';

const FAILS: Record<string, Failure | undefined> = {
  ok: undefined,
  status503: { mode: 'status', status: 503 },
  status400old: { mode: 'status', status: 400, shape: 'old' },
  hangup: { mode: 'hangup' },
  reset: { mode: 'reset', afterChunks: 2 },
  rst: { mode: 'reset', afterChunks: 2, rst: true },
  errorEvent: { mode: 'error-event', afterChunks: 1 },
  malformed: { mode: 'malformed', afterChunks: 1 },
  noDone: { mode: 'no-done', afterChunks: 2 },
  stall: { mode: 'stall', afterChunks: 1 },
};

let server: ScriptedServer;
beforeAll(async () => {
  const routes = Object.fromEntries(Object.entries(FAILS).map(([k, fail]) => [k, { tokens: 4, gapMs: 2, fail }]));
  server = await startScriptedServer({ routes });
});
afterAll(async () => server.close());

const spec: RequestSpec = { messages: [{ role: 'user', content: '你好, pools' }], maxTokens: 4 };

/** One request to each route, in turn on one client, with `LOADLAB_HTTP_CLIENT` as given while it is created. */
async function records(pool: 'lean' | 'undici'): Promise<Record<string, RequestRecord>> {
  if (pool === 'undici') process.env.LOADLAB_HTTP_CLIENT = 'undici';
  const out: Record<string, RequestRecord> = {};
  try {
    for (const route of Object.keys(FAILS)) {
      const c = createClient({ baseUrl: server.routeUrl(route), model: 'm', idleTimeoutMs: 150, connections: 2 });
      out[route] = await c.send(spec, { index: 0, intendedStartMs: performance.now(), requestId: `${pool}-${route}` });
      await c.close();
    }
  } finally {
    delete process.env.LOADLAB_HTTP_CLIENT;
  }
  return out;
}

/** What must not depend on the pool: outcome, code, counts, and the message without the socket library's wording. */
const shape = (r: RequestRecord) => ({
  ok: r.ok,
  code: r.error?.code,
  status: r.status,
  chunks: r.chunkMs.length,
  outputTokens: r.outputTokens,
  finishReason: r.finishReason,
  message: r.error?.message.replace(/\(.*\)$/, '(…)'),
});

describe('the lean pool and undici give the same records', () => {
  it('on success and every scripted failure', { timeout: 30_000 }, async () => {
    const lean = await records('lean');
    const undici = await records('undici');
    for (const route of Object.keys(FAILS)) {
      expect(shape(lean[route]), route).toEqual(shape(undici[route]));
    }
    expect(lean.ok).toMatchObject({ ok: true, outputTokens: 4 });
    expect(lean.status503.error?.code).toBe('http_5xx');
    expect(lean.rst.error?.code).toBe('connection_reset');
    expect(lean.stall.error?.code).toBe('idle_timeout');
  });
});
