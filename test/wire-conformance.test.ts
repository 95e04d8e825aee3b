/**
 * Wire conformance (issue #12): test/fixtures/vllm-wire/<generation>/ holds vLLM's bytes for three
 * generations (0.6.6 V0, 0.10.2, 0.19.0), each file naming the vLLM source it follows. For each generation:
 * (1) the client parses every stream fixture and every error body, and the probe reads /version and
 * /v1/models, from a tiny real HTTP server replaying the fixture bytes;
 * (2) the simulator started in-process with `--vllm-version X` answers each fixture's request with the same
 * structure: same events, keys in the same order, same value types. Normalised before comparing:
 * ids (`chatcmpl-`/`cmpl-`/`modelperm-` + hex: the prefix and the hex length are kept), `created`
 * (any integer), generated text (`delta.content`, `text`, `message.content`: any string) and token counts
 * in `usage` (any integer, with total = prompt + completion checked on both sides); token chunks
 * without a finish reason are compared as a kind (their number depends on the stream granularity).
 * The simulator's extra `loadlab_sim`/`simulated`/`loadlab_profile` keys (a named deviation: simulated numbers are labelled)
 * and its machine's keys (`loadlab_engine_cpu`, `loadlab_boot_id`, `loadlab_pid`) are dropped;
 * (3) each error fixture byte for byte.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../src/client';
import { describeStreamError } from '../src/client/errors';
import { probeTarget } from '../src/observe/probe';
import { parseServeArgs } from '../src/vllm/flags';
import { errorInfoFor, streamErrorJsonFor } from '../src/sim/http/wire-shapes';
import { serveSim, type RunningSim } from '../src/sim/serve';
import type { RequestSpec } from '../src/types';

const ROOT = join(__dirname, 'fixtures', 'vllm-wire');
const GENERATIONS = { 'v0.6': '0.6.6', 'v0.10': '0.10.2', 'v0.19': '0.19.0' } as const;
type GenId = keyof typeof GENERATIONS;
const MODEL = 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4';

/** One fixture: header lines (`# `), the request it names, the status and the exact body. */
interface Fixture {
  method: string;
  path: string;
  request?: Record<string, unknown>;
  status: number;
  body: string;
}

/** The simulator's LoadLab-only keys: a named deviation, dropped before comparing. */
const LOADLAB_KEYS = ['loadlab_sim', 'simulated', 'loadlab_profile', 'loadlab_engine_cpu', 'loadlab_boot_id', 'loadlab_pid'];

/** The JSON object starting at `s[0]`, with `[9707 × 4090]` written out; trailing words ignored. */
function parseRequestJson(s: string): Record<string, unknown> {
  const text = s.replace(/\[(\d+) × (\d+)\]/g, (_, t, n) => JSON.stringify(new Array(Number(n)).fill(Number(t))));
  for (let end = text.lastIndexOf('}'); end > 0; end = text.lastIndexOf('}', end - 1)) {
    try {
      return JSON.parse(text.slice(0, end + 1));
    } catch {}
  }
  throw new Error(`no JSON request in ${s.slice(0, 80)}`);
}

function readFixture(file: string): Fixture {
  const raw = readFileSync(file, 'utf8');
  const lines = raw.split('\n');
  let n = 0;
  while (lines[n]?.startsWith('# ')) n++;
  const header = lines.slice(0, n).join('\n');
  const stream = raw.includes('\ndata: ');
  const body = lines.slice(n).join('\n');
  const req = /^# request: (\w+) (\S+)(?: (.*))?$/m.exec(header);
  if (!req) throw new Error(`${file}: no request line`);
  return {
    method: req[1],
    path: req[2],
    request: req[3]?.startsWith('{') ? parseRequestJson(req[3]) : undefined,
    status: Number(/^# status: (\d+)/m.exec(header)?.[1]),
    body: stream ? body : body.replace(/\n$/, ''),
  };
}

const dir = (g: GenId) => join(ROOT, g);
const streamFiles = (g: GenId) => readdirSync(dir(g)).filter((f) => /-stream.*\.txt$/.test(f));
const errorFiles = (g: GenId) => readdirSync(join(dir(g), 'errors')).filter((f) => f.endsWith('.txt'));
const events = (body: string) =>
  body
    .split('\n\n')
    .filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]')
    .map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const TEXT_KEYS = new Set(['content', 'text']);
const USAGE_KEYS = new Set(['prompt_tokens', 'total_tokens', 'completion_tokens']);

/** The normalised skeleton (see the file comment); `usage` invariants are asserted on the way. */
function normalise(v: Json, key = '', parent = ''): Json {
  if (Array.isArray(v)) return v.map((x) => normalise(x, '', parent));
  if (v !== null && typeof v === 'object') {
    if (parent !== 'usage' && key === 'usage' && typeof v.prompt_tokens === 'number')
      expect(v.total_tokens).toBe(v.prompt_tokens + (v.completion_tokens as number));
    const out: Record<string, Json> = {};
    for (const [k, x] of Object.entries(v)) if (!LOADLAB_KEYS.includes(k)) out[k] = normalise(x, k, key);
    return out;
  }
  if (key === 'id' && typeof v === 'string') return v.replace(/^(\w+)-([0-9a-f]+)$/, (_, p, h) => `${p}-<${h.length} hex>`);
  if (key === 'created') return Number.isInteger(v) ? '<int>' : `<not an int: ${v}>`;
  if (TEXT_KEYS.has(key) && typeof v === 'string') return '<text>';
  if (parent === 'usage' && USAGE_KEYS.has(key)) return Number.isInteger(v) ? '<int>' : `<not an int: ${v}>`;
  return v;
}

/** A chunk that only carries tokens (no role, no finish reason, no prompt ids): compared as a kind. */
function isPlainTokenChunk(e: Record<string, unknown>): boolean {
  const c = (e.choices as Array<Record<string, unknown>>)[0];
  if (!c || c.finish_reason !== null || Array.isArray(c.prompt_token_ids)) return false;
  return !(c.delta && typeof c.delta === 'object' && 'role' in (c.delta as object));
}

/** The events' skeletons, with token-only chunks taken out (returned apart). */
function skeleton(body: string): { main: string[]; tokens: Set<string> } {
  const main: string[] = [];
  const tokens = new Set<string>();
  for (const e of events(body)) {
    const s = JSON.stringify(normalise(e as Json));
    if (isPlainTokenChunk(e)) tokens.add(s);
    else main.push(s);
  }
  return { main, tokens };
}

/** A server that replays fixture bytes: `/<gen>/<file>/...` answers with that fixture's body and status. */
async function startReplay(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const [, gen, name, ...rest] = (req.url ?? '').split('/');
    const sub = rest.join('/');
    req.resume();
    const file = name === 'probe' ? (sub === 'version' ? 'version.json' : sub === 'v1/models' ? 'models.json' : '') : name;
    const path = join(ROOT, gen, file.startsWith('errors') ? file.replace('errors~', 'errors/') : file);
    if (!file || !existsSync(path)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
      return;
    }
    const f = readFixture(path);
    const stream = f.body.startsWith('data: ');
    res.writeHead(f.status, { 'content-type': stream ? 'text/event-stream; charset=utf-8' : 'application/json' });
    res.end(f.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let replay: { url: string; server: Server };
const clients: Client[] = [];
beforeAll(async () => {
  replay = await startReplay();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await new Promise((r) => replay.server.close(r));
});

const CHAT_SPEC: RequestSpec = { messages: [{ role: 'user', content: 'Hello' }], maxTokens: 3 };
const CMPL_SPEC: RequestSpec = { api: 'completions', prompt: [9707, 11, 1879], maxTokens: 3 };
const ctx = (index: number) => ({ index, intendedStartMs: performance.now() });

function clientFor(gen: GenId, file: string): Client {
  const c = createClient({ baseUrl: `${replay.url}/${gen}/${file}`, model: MODEL });
  clients.push(c);
  return c;
}

for (const gen of Object.keys(GENERATIONS) as GenId[]) {
  describe(`vLLM ${GENERATIONS[gen]} (${gen}): the client and the probe read the fixtures`, () => {
    for (const file of streamFiles(gen)) {
      it(`parses ${file}`, async () => {
        const chat = file.startsWith('chat');
        const r = await clientFor(gen, file).send(chat ? CHAT_SPEC : CMPL_SPEC, ctx(0));
        expect(r).toMatchObject({ ok: true, outputTokens: 3, finishReason: 'length' });
        if (file.includes('usage')) expect(r.promptTokens).toBe(chat ? 30 : 3);
        if (file.includes('continuous')) expect(r.chunkTokens).toEqual([1, 1, 1]);
      });
    }

    for (const file of errorFiles(gen)) {
      const f = readFixture(join(dir(gen), 'errors', file));
      if (f.method !== 'POST') continue;
      it(`reports errors/${file} as an HTTP ${f.status} record with vLLM's message`, async () => {
        const body = JSON.parse(f.body);
        const message: string = body.error?.message ?? body.message;
        const spec = f.path === '/v1/completions' ? CMPL_SPEC : CHAT_SPEC;
        const r = await clientFor(gen, `errors~${file}`).send(spec, ctx(0));
        expect(r).toMatchObject({ ok: false, status: f.status, error: { code: 'http_4xx' } });
        expect(r.error?.message).toContain(message.slice(0, 60));
      });
    }

    it('probes /version and /v1/models', async () => {
      const p = await probeTarget(`${replay.url}/${gen}/probe`, undefined, { timeoutMs: 5000 });
      expect(p).toMatchObject({ kind: 'vllm', simulated: false, reachable: true, serverVersion: GENERATIONS[gen] });
      expect(p).toMatchObject({ models: [MODEL], model: MODEL, maxModelLen: 4096 });
    });
  });

  describe(`vLLM ${GENERATIONS[gen]} (${gen}): the simulator with --vllm-version reproduces the fixtures`, () => {
    let sim: RunningSim;
    beforeAll(async () => {
      const argv = ['--port', '0', '--stats-interval-s', '0', '--max-model-len', '4096', '--vllm-version', GENERATIONS[gen]];
      sim = await serveSim(parseServeArgs(argv), () => {});
    });
    afterAll(async () => {
      await sim?.close();
    });

    const send = (f: Fixture) =>
      fetch(`${sim.url}${f.path}`, {
        method: f.method,
        ...(f.method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(f.request) } : {}),
      });

    for (const file of [...streamFiles(gen), 'chat.json', 'completions.json', 'version.json', 'models.json']) {
      it(`answers the request of ${file} with its structure`, async () => {
        const f = readFixture(join(dir(gen), file));
        const res = await send(f);
        expect(res.status).toBe(f.status);
        const text = await res.text();
        if (!file.endsWith('.json')) {
          expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
          const want = skeleton(f.body);
          const got = skeleton(text);
          expect(got.main).toEqual(want.main);
          for (const t of got.tokens) expect([...want.tokens]).toContain(t);
        } else {
          expect(JSON.stringify(normalise(JSON.parse(text)))).toBe(JSON.stringify(normalise(JSON.parse(f.body))));
        }
      });
    }

    it(`stream_options {} ${gen === 'v0.19' ? 'adds no usage chunk' : 'adds the usage chunk'} (StreamOptions.include_usage default)`, async () => {
      const f = readFixture(join(dir(gen), 'chat-stream.txt'));
      const res = await send({ ...f, request: { ...f.request, stream_options: {} } });
      const last = events(await res.text()).at(-1) as { choices: unknown[]; usage?: unknown };
      expect(last.choices.length === 0 && last.usage !== undefined).toBe(gen !== 'v0.19');
    });

    for (const file of errorFiles(gen)) {
      it(`sends errors/${file} byte for byte`, async () => {
        const f = readFixture(join(dir(gen), 'errors', file));
        const res = await send(f);
        expect(res.status).toBe(f.status);
        expect(res.headers.get('content-type')).toBe('application/json');
        expect(await res.text()).toBe(f.body);
      });
    }
  });
}

describe('mid-stream error events per generation', () => {
  const internal = { status: 500, message: 'Internal server error', type: 'InternalServerError', param: null };

  it('0.6 nests the old ErrorResponse (with object: error), later ones ErrorInfo; json.dumps spacing', () => {
    expect(streamErrorJsonFor('v0.6', internal)).toBe(
      '{"error": {"object": "error", "message": "Internal server error", "type": "InternalServerError", "param": null, "code": 500}}',
    );
    expect(streamErrorJsonFor('v0.10', internal)).toBe(
      '{"error": {"message": "Internal server error", "type": "InternalServerError", "param": null, "code": 500}}',
    );
  });

  it('the client reads both', () => {
    for (const g of ['v0.6', 'v0.19'] as const)
      expect(describeStreamError(JSON.parse(streamErrorJsonFor(g, internal)))).toBe(
        'server error event mid-stream: 500 InternalServerError: Internal server error',
      );
  });

  it('before VLLMValidationError there is no suffix and no param', () => {
    const e = { status: 400, message: 'm (parameter=max_tokens, value=0)', type: 'BadRequestError', param: 'max_tokens' };
    const wording = { 'v0.6': 'm', 'v0.10': 'm' };
    expect(errorInfoFor('v0.10', { ...e, wording })).toEqual({ message: 'm', type: 'BadRequestError', param: null, code: 400 });
    expect(errorInfoFor('v0.19', { ...e, wording })).toEqual({
      message: e.message,
      type: 'BadRequestError',
      param: 'max_tokens',
      code: 400,
    });
  });
});
