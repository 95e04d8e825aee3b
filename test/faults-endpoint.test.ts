/**
 * `GET`/`POST /loadlab/faults` on the real simulator process: what it shows, how a POST
 * replaces the settings, what it refuses (400/405), the 403 for a non-loopback peer, and that
 * the simulator listens on 127.0.0.1 unless asked otherwise.
 */
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAULT_KINDS } from '../src/sim/http/faults';
import { startSim, type SimHandle } from '../src/sim/start';

let sim: SimHandle;
/** A non-loopback IPv4 address of this machine, if it has one. */
const external = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

beforeAll(async () => {
  sim = await startSim({ extraArgs: ['--stats-interval-s', '0'] });
});
afterAll(async () => {
  await sim?.stop();
});

const url = () => `${sim.baseUrl}/loadlab/faults`;
const post = (body: string, type = 'application/json') =>
  fetch(url(), { method: 'POST', headers: { 'content-type': type }, body });

describe('/loadlab/faults', () => {
  it('GET shows every setting with its default and the injected counts', async () => {
    const res = await fetch(url());
    expect(res.status).toBe(200);
    expect(res.headers.get('x-loadlab-sim')).toBe('1');
    expect(await res.json()).toEqual({
      http500: 0,
      http503: 0,
      reset: 0,
      streamError: 0,
      stall: 0,
      stallS: 5,
      slowHeaders: 0,
      slowHeadersS: 2,
      malformed: 0,
      afterChunks: 2,
      exitAfterS: 0,
      injected: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])),
      loadlab_sim: true,
    });
  });

  it('POST replaces the settings (unset fields go back to their defaults); a GET answer can be posted back', async () => {
    let res = await post(JSON.stringify({ http503: 0.5, stallS: 1 }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ http503: 0.5, stallS: 1, reset: 0 });
    res = await post(JSON.stringify({ reset: 0.2 }));
    expect(await res.json()).toMatchObject({ http503: 0, stallS: 5, reset: 0.2 });
    const shown = await (await fetch(url())).text();
    res = await post(shown);
    expect(res.status).toBe(200);
    expect(await (await fetch(url())).text()).toBe(shown);
    // And the faults act at once: every request now gets a 503.
    await post(JSON.stringify({ http503: 1 }));
    const gen = await fetch(`${sim.baseUrl}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'Hi', max_tokens: 2, stream: true }),
    });
    expect(gen.status).toBe(503);
    expect(await gen.text()).toBe(
      '{"error":{"message":"Service Unavailable","type":"Service Unavailable","param":null,"code":503}}',
    );
    // Side endpoints never draw a fault.
    expect((await fetch(`${sim.baseUrl}/v1/models`)).status).toBe(200);
    expect((await post('{}')).status).toBe(200);
  });

  it('refuses bad settings with vLLM-shaped 400s that name the fix, and other methods with 405', async () => {
    const bad = async (body: string, re: RegExp, type?: string) => {
      const res = await post(body, type);
      expect(res.status).toBe(400);
      const j = (await res.json()) as { error: { message: string; code: number } };
      expect(j.error.code).toBe(400);
      expect(j.error.message).toMatch(re);
    };
    await bad(JSON.stringify({ http500: 0.7, http503: 0.7 }), /fault fractions add up to 1\.4, more than 1/);
    await bad(JSON.stringify({ http_500: 0.1 }), /unknown fault setting 'http_500'; known: http500/);
    await bad(JSON.stringify({ stall: 'half' }), /fault setting stall must be a fraction in \[0, 1\], got "half"/);
    await bad(JSON.stringify({ seed: 1.5 }), /seed must be an integer/);
    await bad('{"reset": 0.1', /JSON decode error/);
    await bad('reset=0.1', /Only 'application\/json' is allowed/, 'application/x-www-form-urlencoded');
    expect((await fetch(url(), { method: 'DELETE' })).status).toBe(405);
    // A rejected POST changes nothing.
    expect(await (await fetch(url())).json()).toMatchObject({ http500: 0, http503: 0 });
  });
});

describe('network exposure', () => {
  it('the simulator listens on 127.0.0.1 by default', async () => {
    const port = Number(new URL(sim.baseUrl).port);
    expect(new URL(sim.baseUrl).hostname).toBe('127.0.0.1');
    if (process.platform === 'linux') {
      // /proc/net/tcp: local address as hex IP:port; state 0A = LISTEN. 0100007F = 127.0.0.1.
      const rows = readFileSync('/proc/net/tcp', 'utf8')
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/));
      const listening = rows
        .filter((c) => c[3] === '0A' && parseInt(c[1].split(':')[1], 16) === port)
        .map((c) => c[1].split(':')[0]);
      expect(listening).toEqual(['0100007F']);
      const rows6 = readFileSync('/proc/net/tcp6', 'utf8')
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/));
      expect(rows6.filter((c) => c[3] === '0A' && parseInt(c[1]?.split(':')[1] ?? '', 16) === port)).toEqual([]);
    }
    if (external) {
      const err = await fetch(`http://${external}:${port}/health`).then(
        () => undefined,
        (e: Error) => e,
      );
      expect((err?.cause as { code?: string })?.code).toBe('ECONNREFUSED');
    }
  });

  it.skipIf(!external)('answers 403 to a peer that is not loopback (and still serves it the API)', async () => {
    const open = await startSim({ host: external!, extraArgs: ['--stats-interval-s', '0'] });
    try {
      expect(new URL(open.baseUrl).hostname).toBe(external);
      for (const init of [{}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"http500": 1}' }]) {
        const res = await fetch(`${open.baseUrl}/loadlab/faults`, init);
        expect(res.status).toBe(403);
        const j = (await res.json()) as { error: { message: string; type: string; code: number } };
        expect(j.error).toMatchObject({ type: 'Forbidden', code: 403 });
        expect(j.error.message).toMatch(/only answers loopback clients/);
      }
      expect((await fetch(`${open.baseUrl}/v1/models`)).status).toBe(200);
      const gen = await fetch(`${open.baseUrl}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'Hi', max_tokens: 2 }),
      });
      expect(gen.status).toBe(200); // the forbidden POST did not switch faults on
    } finally {
      await open.stop();
    }
  });
});
