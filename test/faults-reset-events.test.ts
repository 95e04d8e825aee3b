/**
 * A mid-stream reset sends exactly the events before it, on a real simulator process over real HTTP: with a reset
 * after 1 event, the client gets the role chunk, which the simulator writes in the same callback as the first token
 * chunk the reset strikes at, and then the connection drops without `[DONE]`. (bench/README.md §27 tried queueing a
 * step's writes: a reset there had to wait for the queue, and this test failed when it did not.)
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultArgs } from '../src/sim/http/faults';
import { startSim, type SimHandle } from '../src/sim/start';

let sim: SimHandle;
beforeAll(async () => {
  sim = await startSim({ extraArgs: ['--stats-interval-s', '0', ...faultArgs({ reset: 1, afterChunks: 1 })] });
}, 60_000);
afterAll(async () => {
  await sim?.stop();
});

/** The raw body a streamed chat request got before its connection closed. */
function rawStream(): Promise<string> {
  const url = new URL('/v1/chat/completions', sim.baseUrl);
  const body = JSON.stringify({
    model: sim.model,
    messages: [{ role: 'user', content: 'hello' }],
    max_tokens: 20,
    ignore_eos: true,
    stream: true,
  });
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (s: string) => {
        text += s;
      });
      res.on('error', () => resolve(text));
      res.on('close', () => resolve(text));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('a reset fault after 1 event (real simulator)', () => {
  it('sends exactly that event, the role chunk, then drops the connection without [DONE]', async () => {
    const text = await rawStream();
    const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
    expect(events).toHaveLength(1);
    expect(events[0]).toContain('"role":"assistant"');
    expect(text).not.toContain('[DONE]');
  });
});
