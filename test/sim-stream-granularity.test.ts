/**
 * How tokens become SSE chunks in the simulator, as in vLLM (`vllm/v1/engine/output_processor.py`):
 * a slow reader makes a request's outputs merge into fewer, larger chunks (`RequestOutputCollector`),
 * and `--stream-interval N` sends the first token, then every N tokens, then the finish. Real
 * simulator processes on port 0; every comparison is against a fresh simulator with the same seed,
 * whose first requests get the same text. No wall-clock assertions.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/client';
import { createSimServer, type SimServerOptions } from '../src/sim/http/http';
import { startSim, type SimHandle } from '../src/sim/start';
import { parseServeArgs, toServeArgs } from '../src/vllm/flags';

const NO_STATS = ['--stats-interval-s', '0'];
let ref: SimHandle; // interval 1, the reference for the slow reader
let slow: SimHandle; // interval 1, read by a slow reader
let one: SimHandle; // interval 1
let five: SimHandle; // --stream-interval 5

beforeAll(async () => {
  [ref, slow, one, five] = await Promise.all([
    startSim({ extraArgs: NO_STATS }),
    startSim({ extraArgs: NO_STATS }),
    startSim({ extraArgs: NO_STATS }),
    startSim({ flags: { streamInterval: 5 }, extraArgs: NO_STATS }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([ref, slow, one, five].map((s) => s?.stop()));
});

/** The JSON events of an SSE body, `[DONE]` checked and left out. */
function events(text: string): any[] {
  expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  const parts = text.split('\n\n').slice(0, -2);
  for (const p of parts) expect(p.startsWith('data: ')).toBe(true);
  return parts.map((p) => JSON.parse(p.slice(6)));
}

async function post(sim: SimHandle, path: string, body: Record<string, unknown>): Promise<any[]> {
  const res = await fetch(`${sim.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: sim.model, ...body }),
  });
  expect(res.status).toBe(200);
  return events(await res.text());
}

/** Per choice: its token chunks (role chunks left out), text, logprob tokens and finish. */
interface ChoiceStream {
  chunks: number;
  /** Tokens per chunk, from the rise of continuous usage. */
  tokensPerChunk: number[];
  text: string;
  logprobTokens: string[];
  finish: string[];
}

function perChoice(evs: any[]): Map<number, ChoiceStream> {
  const out = new Map<number, ChoiceStream>();
  for (const e of evs) {
    const c = e.choices[0];
    if (!c || c.delta?.role) continue;
    const s = out.get(c.index) ?? { chunks: 0, tokensPerChunk: [], text: '', logprobTokens: [], finish: [] };
    out.set(c.index, s);
    const before = s.tokensPerChunk.reduce((a, b) => a + b, 0);
    s.chunks++;
    s.text += c.delta ? c.delta.content : c.text;
    if (e.usage) s.tokensPerChunk.push(e.usage.completion_tokens - before);
    for (const lp of c.logprobs?.content ?? c.logprobs?.tokens ?? [])
      s.logprobTokens.push(typeof lp === 'string' ? lp : lp.token);
    if (c.finish_reason) s.finish.push(c.finish_reason);
  }
  return out;
}

/** Bytes the loopback path can hold for a reader that never reads: send buffer max + receive buffer default (Linux). */
function socketBufferBytes(): number {
  try {
    const wmem = readFileSync('/proc/sys/net/ipv4/tcp_wmem', 'utf8').trim().split(/\s+/).map(Number);
    const rmem = readFileSync('/proc/sys/net/ipv4/tcp_rmem', 'utf8').trim().split(/\s+/).map(Number);
    return wmem[2] + rmem[1];
  } catch {
    return 4 * 1024 * 1024 + 128 * 1024;
  }
}

async function generationTokens(sim: SimHandle): Promise<number> {
  const text = await (await fetch(`${sim.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('vllm:generation_tokens_total'));
  return line ? Number(line.split(' ').pop()) : 0;
}

/**
 * POSTs `body` and reads nothing (the response stays paused, so the kernel's buffers fill and the
 * server's writes block) until `ready()` resolves; then reads the whole body.
 */
function slowPost(sim: SimHandle, body: Record<string, unknown>, ready: () => Promise<void>): Promise<string> {
  const url = new URL(sim.baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: '/v1/chat/completions', method: 'POST', agent: false },
      (res) => {
        ready().then(() => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => {
            text += d;
          });
          res.on('end', () => resolve(text));
        }, reject);
      },
    );
    req.on('error', reject);
    req.setHeader('content-type', 'application/json');
    req.end(JSON.stringify({ model: sim.model, ...body }));
  });
}

describe('a slow reader gets merged chunks (RequestOutputCollector)', () => {
  it('merges outputs while the socket is blocked: fewer chunks than tokens, same text, tokens, logprobs and usage', async () => {
    const n = 16;
    // ~1.5 kB per chunk with 20 top logprobs: twice what the socket buffers hold, so writes must block.
    const maxTokens = Math.min(2000, Math.ceil((2 * socketBufferBytes()) / (n * 1500)));
    const body = {
      messages: [{ role: 'user', content: 'Write a long story.' }],
      max_tokens: maxTokens,
      ignore_eos: true,
      n,
      logprobs: true,
      top_logprobs: 20,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    };
    const want = n * maxTokens;
    // Read nothing until the engine has produced every token of the request.
    const engineDone = async () => {
      while ((await generationTokens(slow)) < want) await new Promise((r) => setTimeout(r, 100));
    };
    const slowEvents = events(await slowPost(slow, body, engineDone));
    const refEvents = await post(ref, '/v1/chat/completions', body);

    const got = perChoice(slowEvents);
    const exp = perChoice(refEvents);
    expect([...got.keys()].sort((a, b) => a - b)).toEqual([...Array(n).keys()]);
    let chunks = 0;
    for (const [i, g] of got) {
      const e = exp.get(i)!;
      chunks += g.chunks;
      expect(g.text).toBe(e.text);
      expect(g.logprobTokens).toEqual(e.logprobTokens);
      expect(g.logprobTokens).toHaveLength(maxTokens);
      // Continuous usage rises by exactly the tokens a merged chunk carries (one logprob entry each).
      expect(g.tokensPerChunk).toHaveLength(g.chunks);
      expect(g.tokensPerChunk.reduce((a, b) => a + b, 0)).toBe(maxTokens);
      expect(g.finish).toEqual(['length']);
    }
    expect(chunks).toBeLessThan(want);
    expect([...got.values()].some((g) => g.tokensPerChunk.some((t) => t > 1))).toBe(true);
    // Role chunks first, one per choice; the usage chunk last, with the totals.
    expect(slowEvents.slice(0, n).map((e) => e.choices[0].delta.role)).toEqual(Array(n).fill('assistant'));
    expect(slowEvents.at(-1).choices).toEqual([]);
    expect(slowEvents.at(-1).usage).toEqual(refEvents.at(-1).usage);
    expect(slowEvents.at(-1).usage.completion_tokens).toBe(want);
  }, 120_000);
});

describe('--stream-interval', () => {
  const L = 23;
  const plain = {
    messages: [{ role: 'user', content: 'Tell me about GPUs.' }],
    max_tokens: L,
    ignore_eos: true,
    stream: true,
    stream_options: { include_usage: true, continuous_usage_stats: true },
  };

  it('sends the first token, then every 5 tokens, then the finish; same text and usage as interval 1', async () => {
    // Request 1 on each fresh server: the same seed, so the same text.
    const [a, b] = await Promise.all([post(one, '/v1/chat/completions', plain), post(five, '/v1/chat/completions', plain)]);
    const x = perChoice(a).get(0)!;
    const y = perChoice(b).get(0)!;
    expect(x.tokensPerChunk).toEqual(Array(L).fill(1));
    // Sent at tokens 1, 6, 11, 16, 21 (5 gathered since the last) and 23 (finished): 1 + ceil((L − 1)/5) chunks.
    expect(y.tokensPerChunk).toEqual([1, 5, 5, 5, 5, 2]);
    expect(y.chunks).toBe(1 + Math.ceil((L - 1) / 5));
    expect(y.text).toBe(x.text);
    expect(y.finish).toEqual(['length']);
    expect(b.at(-1).usage).toEqual(a.at(-1).usage);
  });

  it('holds back stop-string prefixes and merges logprobs the same way (requests 2 and 3 on both servers)', async () => {
    const stopped = { ...plain, max_tokens: 200, stop: ['. T', '. W', '. I'], stream_options: undefined };
    const [a, b] = await Promise.all([post(one, '/v1/chat/completions', stopped), post(five, '/v1/chat/completions', stopped)]);
    const x = perChoice(a).get(0)!;
    const y = perChoice(b).get(0)!;
    expect(y.text).toBe(x.text);
    expect(x.finish).toEqual(['stop']); // seed 0's second request meets '. I' (deterministic)
    expect(y.finish).toEqual(x.finish);
    expect(b.at(-1).choices[0].stop_reason).toBe(a.at(-1).choices[0].stop_reason);
    expect(y.chunks).toBe(1 + Math.ceil((x.chunks - 1) / 5));

    const lp = { prompt: 'The GPU', max_tokens: 12, ignore_eos: true, logprobs: 2, stream: true };
    const [c, d] = await Promise.all([post(one, '/v1/completions', lp), post(five, '/v1/completions', lp)]);
    const u = perChoice(c).get(0)!;
    const v = perChoice(d).get(0)!;
    expect(v.text).toBe(u.text);
    expect(v.logprobTokens).toEqual(u.logprobTokens);
    expect(v.chunks).toBe(1 + Math.ceil((12 - 1) / 5));
    // text_offset runs on across merged chunks as across single-token ones.
    const offsets = (evs: any[]) => evs.flatMap((e) => e.choices[0]?.logprobs?.text_offset ?? []);
    expect(offsets(d)).toEqual(offsets(c));
  });

  it("the client counts several tokens per chunk: ITL per chunk, TPOT from the server's token count", async () => {
    const client = createClient({ baseUrl: five.baseUrl, model: five.model });
    try {
      const r = await client.send(
        { prompt: 'Tell me about GPUs.', maxTokens: L, fixedOutput: true },
        { index: 0, intendedStartMs: 0 },
      );
      expect(r.ok).toBe(true);
      expect(r.outputTokens).toBe(L);
      expect(r.chunkTokens).toEqual([1, 5, 5, 5, 5, 2]);
      expect(r.chunkMs).toHaveLength(6);
      expect(r.itlMs).toHaveLength(5);
      expect(r.tpotMs).toBeCloseTo((r.e2eMs! - r.ttftMs!) / (L - 1), 9);
    } finally {
      await client.close();
    }
  });
});

describe('--stream-interval flag', () => {
  it('parses an integer ≥ 1 into ServerFlags and writes it back for a real vLLM', () => {
    expect(parseServeArgs(['--stream-interval', '5']).flags.streamInterval).toBe(5);
    expect(parseServeArgs(['--stream-interval=1']).flags.streamInterval).toBe(1);
    expect(toServeArgs({ streamInterval: 10 }, { target: 'vllm' })).toEqual(['--stream-interval', '10']);
  });

  it.each(['0', '-2', '2.5', 'abc'])('refuses --stream-interval %s, naming the range', (v) => {
    expect(() => parseServeArgs(['--stream-interval', v])).toThrow(`--stream-interval must be an integer ≥ 1, got '${v}'`);
  });

  it('createSimServer refuses a bad streamInterval at once, naming the fix', () => {
    for (const v of [0, 1.5, Number.NaN])
      expect(() => createSimServer({ streamInterval: v } as unknown as SimServerOptions)).toThrow(
        `streamInterval (--stream-interval) must be an integer ≥ 1, got ${v}; use 1 to stream every token`,
      );
  });

  it('startSim refuses a bad interval before starting a process', async () => {
    await expect(startSim({ flags: { streamInterval: 0 } })).rejects.toThrow(/--stream-interval must be an integer ≥ 1/);
  });
});
