/**
 * The real simulator process against timer overflows and odd control requests (issue #17
 * items 1, 10a, 10g): a 30-day `--fault-exit-after-s` and `POST {"exitAfterS":3000000}` leave
 * it serving, out-of-range and inherited setting names get a 400 naming the fix, and every
 * 405 carries `Allow`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSim, type SimHandle } from '../src/sim/start';

let sim: SimHandle;
beforeAll(async () => {
  sim = await startSim({ extraArgs: ['--stats-interval-s', '0', '--fault-exit-after-s', '2592000'] });
}, 60_000);
afterAll(async () => {
  await sim?.stop();
});

const faults = (body: unknown) =>
  fetch(`${sim.baseUrl}/loadlab/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
/** The JSON of a reply, loosely typed (the test checks its fields). */
const body = async (res: Response) => (await res.json()) as { error: { message: string }; [k: string]: unknown };
const alive = async () => (await fetch(`${sim.baseUrl}/health`)).status;

describe('fault timers on the real process', () => {
  it('--fault-exit-after-s 2592000 (30 days) and POST exitAfterS 3000000 leave the simulator serving', async () => {
    expect(await alive()).toBe(200);
    const res = await faults({ exitAfterS: 3_000_000 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ exitAfterS: 3_000_000 });
    // The overflowed timer used to fire after 1 ms; a request after the POST's reply shows it did not.
    const chat = await fetch(`${sim.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
    });
    expect(chat.status).toBe(200);
    expect(await alive()).toBe(200);
    expect(sim.logTail(200)).not.toMatch(/TimeoutOverflowWarning|simulated fault: the server dies/);
    expect((await faults({})).status).toBe(200);
  });

  it('refuses seconds out of range and inherited names with a 400 that names the allowed range or the known names', async () => {
    let res = await faults({ exitAfterS: 1e9 });
    expect(res.status).toBe(400);
    expect((await body(res)).error.message).toBe(
      'fault setting exitAfterS must be seconds in [0, 31536000] (0 to 365 days), got 1000000000',
    );
    for (const name of ['constructor', 'toString', '__proto__']) {
      res = await fetch(`${sim.baseUrl}/loadlab/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"${name}": 0}`,
      });
      expect(res.status, name).toBe(400);
      expect((await body(res)).error.message).toMatch(new RegExp(`^unknown fault setting '${name}'; known: http500`));
    }
    const view = await body(await fetch(`${sim.baseUrl}/loadlab/faults`));
    expect(Object.keys(view)).not.toContain('constructor');
  });
});

describe('405 carries Allow', () => {
  it.each([
    ['PUT', '/loadlab/faults', 'GET, HEAD, POST'],
    ['GET', '/v1/chat/completions', 'POST'],
    ['DELETE', '/v1/completions', 'POST'],
    ['POST', '/health', 'GET, HEAD'],
    ['POST', '/metrics', 'GET, HEAD'],
    ['GET', '/tokenize', 'POST'],
  ])('%s %s → 405, Allow: %s', async (method, path, allow) => {
    const res = await fetch(`${sim.baseUrl}${path}`, { method });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect((await body(res)).error).toMatchObject({ message: 'Method Not Allowed', code: 405 });
  });
});
