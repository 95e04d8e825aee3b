import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRun } from '../src/run/loader';
import { runLoad } from '../src/runner/runner';
import { type SessionScript, sessions } from '../src/schedule/sessions';
import { summarizeRun } from '../src/stats/summary';
import type { RequestRecord } from '../src/types';
import { makeRequest } from '../src/workload/workload';
import { answerTo, type SessionServer, startSessionServer } from './helpers/session-server';

/** A conversation whose turn k asks `<id> q<k>`; the dataset's answers are never what the server says. */
function script(id: string, turns: number, failAt?: number): SessionScript {
  return {
    id,
    turns: Array.from({ length: turns }, (_, k) => makeRequest(`${id} q${k}${k === failAt ? ' FAIL' : ''}`, { maxTokens: 8 })),
    datasetAnswers: Array.from({ length: turns }, (_, k) => `DATASET ANSWER ${id} ${k}`),
  };
}

const byTurn = (records: RequestRecord[], session: string) =>
  records.filter((r) => r.session === session).sort((a, b) => (a.turn ?? 0) - (b.turn ?? 0));

let tmp: string;
let server: SessionServer;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-sessions-'));
  server = await startSessionServer({ firstTokenDelayMs: 3, gapMs: 2, slowGapMs: 150 });
});
afterAll(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('sessions: each turn after the live answer', () => {
  it('sends the live answers as history, paced at end of the previous turn + think time', { timeout: 60_000 }, async () => {
    const convs = [script('a', 3), script('b', 2), script('c', 1), script('d', 3)];
    const dir = join(tmp, 'live');
    const from = server.log.length;
    const r = await runLoad({
      baseUrl: server.url,
      shape: sessions(convs, { maxConcurrency: 2, thinkTimeMs: 25 }),
      out: dir,
      abortOnSigint: false,
    });
    const seen = server.log.slice(from);
    expect(r.records).toHaveLength(9);
    expect(r.records.every((x) => x.ok)).toBe(true);
    expect(r.peakInFlight).toBeLessThanOrEqual(2);
    expect(server.peakInFlight()).toBeLessThanOrEqual(2);

    for (const c of convs) {
      const recs = byTurn(r.records, c.id);
      expect(recs.map((x) => x.turn)).toEqual(c.turns.map((_, k) => k));
      for (let k = 1; k < recs.length; k++) {
        // Intended = end of the previous turn + think time; never sent before it.
        expect(recs[k].intendedStartMs).toBe(recs[k - 1].endMs + 25);
        expect(recs[k].startMs).toBeGreaterThanOrEqual(recs[k].intendedStartMs);
        expect(recs[k].queueMs).toBeGreaterThanOrEqual(0);
        // The server log agrees: turn k arrived ≥ 25 ms after it finished writing turn k−1.
        const prev = seen.find((s) => s.requestId === recs[k - 1].requestId)!;
        const cur = seen.find((s) => s.requestId === recs[k].requestId)!;
        expect(cur.receivedAtMs).toBeGreaterThanOrEqual(prev.endedAtMs! + 25);
        // History = each earlier user turn followed by the answer the server actually gave.
        const expected = Array.from({ length: k }, (_, j) => [
          { role: 'user', content: `${c.id} q${j}` },
          { role: 'assistant', content: answerTo(`${c.id} q${j}`) },
        ]).flat();
        expect(cur.messages).toEqual([...expected, { role: 'user', content: `${c.id} q${k}` }]);
      }
    }
    // The generated text is handed over, never stored.
    expect(readFileSync(join(dir, 'requests.jsonl'), 'utf8')).not.toContain('re: ');
    expect(JSON.stringify(r.records)).not.toContain('DATASET ANSWER');

    // Per-turn TTFT: n per turn = conversations that have that turn.
    expect(r.summary.byTurn?.map((t) => [t.turn, t.requests, t.ttftMs.n])).toEqual([
      [0, 4, 4],
      [1, 3, 3],
      [2, 2, 2],
    ]);
    for (const t of r.summary.byTurn!) expect(t.ttftMs.p50).toBeLessThanOrEqual(t.ttftMs.p99);

    // The saved run loads with its session fields and gives the same per-turn table.
    const loaded = loadRun(dir);
    expect(loaded.records.filter((x) => x.session === 'a').map((x) => x.turn)).toEqual([0, 1, 2]);
    expect(summarizeRun(loaded.records).byTurn).toEqual(r.summary.byTurn);
    expect(r.manifest.load.shape).toBe('sessions');
    expect(JSON.stringify(r.manifest)).not.toContain('q0'); // conversations are not copied into the manifest
    expect(r.manifest.client?.sessions).toMatchObject({ conversations: 4, finished: 4, stopped: [], turnsNotSent: 0 });
  });

  it('a failed turn ends its conversation with a record carrying the error code', { timeout: 60_000 }, async () => {
    const convs = [script('ok', 3), script('bad', 3, 1)];
    const from = server.log.length;
    const r = await runLoad({
      baseUrl: server.url,
      shape: sessions(convs, { maxConcurrency: 2 }),
      out: false,
      abortOnSigint: false,
    });
    const bad = byTurn(r.records, 'bad');
    expect(bad.map((x) => [x.turn, x.ok, x.error?.code])).toEqual([
      [0, true, undefined],
      [1, false, 'http_5xx'],
    ]);
    expect(server.log.slice(from).some((s) => s.messages.at(-1)?.content === 'bad q2')).toBe(false);
    expect(byTurn(r.records, 'ok').every((x) => x.ok)).toBe(true);
    expect(r.summary.errors).toEqual({ http_5xx: 1 });
    expect(r.summary.byTurn?.map((t) => [t.turn, t.requests, t.failed, t.ttftMs.n])).toEqual([
      [0, 2, 0, 2],
      [1, 2, 1, 1],
      [2, 1, 0, 1],
    ]);
    expect(r.manifest.client?.sessions).toMatchObject({
      finished: 1,
      stopped: [{ session: 'bad', turn: 1, code: 'http_5xx' }],
      turnsNotSent: 1,
    });
  });

  it('an interrupt mid-run keeps what finished and sends no new turn', { timeout: 60_000 }, async () => {
    const slow = (id: string): SessionScript => ({
      id,
      turns: [makeRequest(`${id} q0`, { maxTokens: 8 }), makeRequest(`${id} SLOW q1`), makeRequest(`${id} q2`)],
    });
    const dir = join(tmp, 'interrupted');
    const stop = new AbortController();
    const from = server.log.length;
    const r = await runLoad({
      baseUrl: server.url,
      shape: sessions([slow('x'), slow('y'), slow('z')], { maxConcurrency: 2 }),
      out: dir,
      signal: stop.signal,
      abortOnSigint: false,
      // Stop once a turn-1 request (a slow one) is on the wire: it is in flight when the abort lands.
      onRecord: (rec) => {
        if (rec.turn === 0 && rec.ok) setTimeout(() => stop.abort(), 60);
      },
    });
    expect(r.manifest.status).toBe('interrupted');
    const sent = server.log.slice(from);
    expect(sent.length).toBe(r.records.length); // every request sent has its record, none sent after the stop
    expect(r.records.some((x) => x.error?.code === 'aborted')).toBe(true);
    expect(r.records.some((x) => x.turn === 2)).toBe(false);
    const loaded = loadRun(dir);
    expect(loaded.manifest.status).toBe('interrupted');
    expect(loaded.records.map((x) => x.requestId).sort()).toEqual(r.records.map((x) => x.requestId).sort());
    expect(loaded.records.filter((x) => x.ok).length).toBeGreaterThanOrEqual(1);
  });

  it('refuses what a sessions run cannot do, naming the fix', async () => {
    const shape = sessions([script('a', 2)]);
    const base = { baseUrl: server.url, shape, out: false as const, abortOnSigint: false };
    await expect(runLoad({ ...base, warmup: 1 })).rejects.toThrow(/warmup is not supported with a sessions shape/);
    await expect(runLoad({ ...base, workload: [makeRequest('x')] })).rejects.toThrow('drop workload');
    await expect(runLoad({ ...base, requests: 5 })).rejects.toThrow('sends every turn of its conversations (2)');
  });
});
