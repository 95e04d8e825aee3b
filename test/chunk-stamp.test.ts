/**
 * How token chunks are stamped (src/client/chunk-stamp.ts): one reading per event-loop turn, or one
 * per data callback. The clock's rules on an injected clock; then real HTTP on 127.0.0.1: a lockstep
 * server in this process writes one chunk to every open stream in one timer callback, so the client's
 * next poll phase reads them all in one turn.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CHUNK_STAMPS, checkChunkStamp, chunkClock, createClient, TURN_HOLD_MAX_MS } from '../src/client/index';
import { TURN_POLL_BATCH } from '../src/client/chunk-stamp';
import type { ChunkStamp } from '../src/client/chunk-stamp';

const nextTurn = () => new Promise<void>((r) => setImmediate(r));

describe('the chunk clock', () => {
  const a = {};
  const b = {};
  const c = {};

  it("'turn' gives the turn's first reading to each stream's first bytes in the turn, until the check phase", async () => {
    let t = 100;
    const clock = chunkClock(() => (t += 0.25), 'turn');
    expect([clock(a), clock(b), clock(c)]).toEqual([100.25, 100.25, 100.25]);
    await nextTurn();
    expect(clock(a)).toBe(101); // every call reads the clock; only the first of a turn is kept
  });

  it("'turn': a stream's later bytes in the same turn get a fresh reading (they may have come after the wake-up)", () => {
    let t = 0;
    const clock = chunkClock(() => (t += 0.5), 'turn');
    expect(clock(a)).toBe(0.5);
    expect(clock(a)).toBe(1); // a's second chunk in this turn
    expect(clock(b)).toBe(0.5);
    expect(clock(b)).toBe(2);
  });

  it(`'turn' never holds a reading longer than ${TURN_HOLD_MAX_MS} ms`, () => {
    let t = 0;
    const clock = chunkClock(
      () => t,
      'turn',
      () => 0,
    );
    expect(clock(a)).toBe(0);
    t = TURN_HOLD_MAX_MS;
    expect(clock(b)).toBe(0);
    t = TURN_HOLD_MAX_MS + 0.5;
    expect(clock(c)).toBe(TURN_HOLD_MAX_MS + 0.5); // a fresh reading, held from here
    t += 1;
    expect(clock({})).toBe(TURN_HOLD_MAX_MS + 0.5);
    expect(clock(a)).toBe(t); // seen before in this turn: fresh
  });

  it("'turn' gives up its reading once the loop has waited for I/O since (its idle time grew)", () => {
    let t = 0;
    let idleMs = 5;
    const clock = chunkClock(
      () => t,
      'turn',
      () => idleMs,
    );
    expect(clock(a)).toBe(0);
    t = 1;
    expect(clock(b)).toBe(0); // same poll batch: the loop has not waited
    idleMs += 0.1; // epoll_wait blocked: what comes now was not there at the reading
    t = 1.5;
    expect(clock(c)).toBe(1.5);
    t = 2;
    expect(clock({})).toBe(1.5);
  });

  it(`'turn' shares one reading among at most ${TURN_POLL_BATCH} streams (one epoll batch)`, () => {
    let t = 0;
    const clock = chunkClock(
      () => (t += 0.001),
      'turn',
      () => 0,
    );
    const first = clock({});
    for (let i = 1; i < TURN_POLL_BATCH; i++) expect(clock({})).toBe(first);
    expect(clock({})).toBeGreaterThan(first); // the 1025th stream: a fresh reading
  });

  it("'callback' reads the clock every time", () => {
    let t = 0;
    const clock = chunkClock(() => ++t, 'callback');
    expect([clock(a), clock(a), clock(b)]).toEqual([1, 2, 3]);
  });

  it('a wrong mode throws naming both modes; undefined is the default turn', () => {
    expect(CHUNK_STAMPS).toEqual(['turn', 'callback']);
    expect(checkChunkStamp(undefined)).toBe('turn');
    expect(checkChunkStamp('callback')).toBe('callback');
    expect(() => checkChunkStamp('per-event')).toThrow(/stamp must be 'turn' .* or 'callback' .*got "per-event"/);
    expect(() => createClient({ baseUrl: 'http://127.0.0.1:1', model: 'm', stamp: 'wake' as unknown as ChunkStamp })).toThrow(
      TypeError,
    );
  });
});

/** Streams that each get one chunk per round, all written in one timer callback. */
async function lockstepServer(streams: number, rounds: number, gapMs: number): Promise<{ url: string; server: Server }> {
  const open: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      open.push(res);
      if (open.length === streams) void play(open.splice(0), rounds, gapMs);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function play(all: ServerResponse[], rounds: number, gapMs: number): Promise<void> {
  for (let k = 0; k < rounds; k++) {
    await new Promise((r) => setTimeout(r, gapMs));
    for (const res of all) {
      const chunk = {
        id: 'x',
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: { content: `t${k}` }, finish_reason: null }],
      };
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    }
  }
  for (const res of all) res.end('data: [DONE]\n\n');
}

let current: Server | undefined;
afterEach(() => {
  current?.close();
  current = undefined;
});

async function stampsOf(stamp: ChunkStamp, streams = 8, rounds = 5): Promise<number[][]> {
  const { url, server } = await lockstepServer(streams, rounds, 15);
  current = server;
  const client = createClient({ baseUrl: url, model: 'm', connections: streams, stamp });
  const records = await Promise.all(
    Array.from({ length: streams }, (_, i) => client.send({ prompt: 'hi', maxTokens: rounds }, { index: i, intendedStartMs: 0 })),
  );
  await client.close();
  for (const r of records) expect(r, r.error?.message).toMatchObject({ ok: true });
  return records.map((r) => r.chunkMs);
}

describe('stamps of chunks read in one turn (real HTTP)', () => {
  it("'turn': the chunks every stream got in one round share a stamp, and each round has its own", async () => {
    const stamps = await stampsOf('turn');
    for (let k = 0; k < 5; k++) {
      // One turn reads all 8; a turn longer than TURN_HOLD_MAX_MS (a loaded machine) starts another reading.
      const round = new Set(stamps.map((s) => s[k]));
      expect(round.size, `round ${k}`).toBeLessThan(8);
      if (k > 0) expect(stamps[0][k]).toBeGreaterThan(stamps[0][k - 1]);
    }
  });

  it("'callback': each stream's chunk has its own reading", async () => {
    const stamps = await stampsOf('callback');
    for (let k = 0; k < 5; k++) expect(new Set(stamps.map((s) => s[k])).size, `round ${k}`).toBe(8);
  });
});
