/**
 * The step's write batch (src/sim/http/write-batch.ts): frames go out after the callback that queued them, in order,
 * and a response's end or reset follows its last frame. The reset is checked on a real simulator process over real
 * HTTP: a stream reset after 1 event has sent exactly that one, the role chunk, which was queued in the same callback
 * as the reset (it strikes at the first token chunk, written with the role chunk).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultArgs } from '../src/sim/http/faults';
import { afterQueued, type BatchedWriter, queueWrite } from '../src/sim/http/write-batch';
import { startSim, type SimHandle } from '../src/sim/start';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A writer that logs what the batch sends it. */
const writer = (name: string, log: string[]): BatchedWriter => ({ writeNow: (frame) => log.push(`${name}:${frame}`) });

describe('the write batch', () => {
  it('writes nothing during the callback, then every frame in the order queued, calls in their place', async () => {
    const log: string[] = [];
    const a = writer('a', log);
    const b = writer('b', log);
    queueWrite(a, '1');
    queueWrite(b, '1');
    afterQueued(() => log.push('end a'));
    queueWrite(b, '2');
    expect(log).toEqual([]);
    await turn();
    expect(log).toEqual(['a:1', 'b:1', 'end a', 'b:2']);
  });

  it('runs a call at once when nothing is queued, and drains a second batch on its own', async () => {
    const log: string[] = [];
    afterQueued(() => log.push('now'));
    expect(log).toEqual(['now']);
    queueWrite(writer('a', log), 'x');
    await turn();
    queueWrite(writer('a', log), 'y');
    await turn();
    expect(log).toEqual(['now', 'a:x', 'a:y']);
  });
});

describe('a reset fault after the batch (real simulator)', () => {
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

  it('sends exactly the events before the reset, then drops the connection without [DONE]', async () => {
    const text = await rawStream();
    const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
    expect(events).toHaveLength(1);
    expect(events[0]).toContain('"role":"assistant"');
    expect(events.every((e) => e.startsWith('data: {'))).toBe(true);
    expect(text).not.toContain('[DONE]');
  });
});
