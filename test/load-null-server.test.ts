/**
 * The null server's options for the benches (src/calibrate/null-server.ts): phase, lockstep,
 * flat out with several chunks per write, bad fields, `GET /now`, `GET /stats` open streams, and
 * the child process of `spawnNullServer`. Real HTTP on 127.0.0.1, port 0; timing-dependent
 * behaviour is asserted as invariants (never earlier than asked, one ticker per gap and phase).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStreamTimer } from '../src/client/timing';
import { epochNow } from '../src/calibrate/epoch-clock';
import { spawnNullServer, startNullServer, type NullServer } from '../src/calibrate/null-server';

let ns: NullServer;
let url: string;
beforeAll(async () => {
  ns = await startNullServer(0);
  url = `http://127.0.0.1:${ns.port}`;
});
afterAll(() => ns?.close());

const getJson = async <T>(path: string): Promise<T> => (await (await fetch(`${url}${path}`)).json()) as T;

const post = (body: Record<string, unknown>, id?: string, signal?: AbortSignal) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(id ? { 'x-request-id': id } : {}) },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
    signal,
  });

/** Token chunks of a finished stream, parsed. */
async function tokens(res: Response): Promise<Array<{ t: number; usage: { completion_tokens: number }; choices: any[] }>> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice(6)))
    .filter((c) => c.choices.length === 1 && c.choices[0].delta.content === ' tok');
}

describe('null server options', () => {
  it('null_phase_ms and null_gap_ms: the first step is never earlier than phase + gap after the request', async () => {
    const t0 = epochNow();
    const toks = await tokens(await post({ max_tokens: 3, null_gap_ms: 5, null_phase_ms: 30 }));
    expect(toks).toHaveLength(3);
    // Node timers may fire up to ~1 ms early against performance.now(); nothing else may.
    expect(toks[0].t - t0).toBeGreaterThanOrEqual(35 - 1.5);
    for (let k = 1; k < 3; k++) expect(toks[k].t).toBeGreaterThan(toks[k - 1].t);
  });

  it('streams with the same gap and phase step together: every send of one is a send of the other', async () => {
    const [a, b] = await Promise.all([
      post({ max_tokens: 20, null_gap_ms: 25 }).then(tokens),
      post({ max_tokens: 4, null_gap_ms: 25 }).then(tokens),
    ]);
    // One ticker writes both streams in one synchronous pass: their send times of a step are µs apart,
    // while steps are 25 ms apart. B (shorter) may join A's ticker a step late, so match each of B's times to A's.
    const late = b.map((x) => Math.min(...a.map((y) => Math.abs(y.t - x.t))));
    expect(Math.max(...late)).toBeLessThan(12.5);
  });

  it('flat out with null_batch: every token chunk once, in order, usage counting up, then [DONE]', async () => {
    const res = await post({ max_tokens: 10, null_gap_ms: 0, null_batch: 4 }, 'batch-1');
    const text = await res.clone().text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const toks = await tokens(res);
    expect(toks.map((c) => c.usage.completion_tokens)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(toks.map((c) => c.choices[0].finish_reason)).toEqual([...Array(9).fill(null), 'length']);
    const timer = createStreamTimer('chat');
    timer.sent(0);
    timer.feed(text, 1);
    expect(timer.toRecord({ index: 0, requestId: 'batch-1', intendedStartMs: 0 }).outputTokens).toBe(10);
    const sent = await getJson<Record<string, number[]>>('/sent');
    expect(sent['batch-1']).toHaveLength(10);
  });

  it('a bad option is a 400 that names the field and what it takes', async () => {
    for (const [body, msg] of [
      [{ null_batch: 0 }, 'null_batch must be an integer ≥ 1, got 0'],
      [{ null_gap_ms: -1 }, 'null_gap_ms must be a number ≥ 0 (ms), got -1'],
      [{ null_phase_ms: '5' }, 'null_phase_ms must be a number ≥ 0 (ms), got "5"'],
      [{ max_tokens: 1.5 }, 'max_tokens must be an integer ≥ 1, got 1.5'],
    ] as const) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toBe(msg);
    }
  });

  it('GET /now is this process clock; GET /stats counts open streams and their peak since the last call', async () => {
    const before = epochNow();
    const { t } = await getJson<{ t: number }>('/now');
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(epochNow());
    await getJson('/stats');
    const ac = new AbortController();
    const res = await post({ max_tokens: 1000, null_gap_ms: 50 }, 'open-1', ac.signal);
    expect(res.status).toBe(200);
    const s1 = await getJson<{ open: number; peakOpen: number; cpuMs: number; wallMs: number }>('/stats');
    expect(s1.open).toBe(1);
    expect(s1.peakOpen).toBe(1);
    expect(s1.cpuMs).toBeGreaterThanOrEqual(0);
    ac.abort();
    let open = 1;
    for (let i = 0; i < 100 && open > 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      open = (await getJson<{ open: number }>('/stats')).open;
    }
    expect(open).toBe(0);
    expect((await getJson<{ peakOpen: number }>('/stats')).peakOpen).toBe(0);
  });
});

describe('spawnNullServer', () => {
  it('runs the null server as its own process, with the offset of its stamps, and stops it', async () => {
    const child = await spawnNullServer();
    try {
      expect(child.baseUrl).toBe(`http://127.0.0.1:${child.port}`);
      expect(Number.isFinite(child.offsetMs)).toBe(true);
      expect(child.pid).not.toBe(process.pid);
      const models = (await (await fetch(`${child.baseUrl}/v1/models`)).json()) as { data: Array<{ id: string }> };
      expect(models.data[0].id).toBe('loadlab-null');
    } finally {
      await child.stop();
    }
    expect(() => process.kill(child.pid, 0)).toThrow();
  });
});
