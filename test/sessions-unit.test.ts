import { describe, expect, it } from 'vitest';
import { formatTurnTable } from '../src/cli/turn-table';
import { multiTurnFlags } from '../src/cli/run-dataset-args';
import { parseRunArgs } from '../src/cli/run-args';
import { createStreamTimer, StreamTimer } from '../src/client/timing';
import { recordProblem } from '../src/run/record-check';
import { runSessions, type SessionFire } from '../src/schedule/session-driver';
import { describeShape } from '../src/schedule/shapes';
import { sessions, sessionTurns, turnAt, turnPositions, turnSpec, type SessionScript } from '../src/schedule/sessions';
import { summarizeRun } from '../src/stats/summary';
import { summarizeTurns } from '../src/stats/turns';
import type { RequestRecord } from '../src/types';
import { type Conversation, sessionScriptOf, sessionScripts } from '../src/workload/datasets/sharegpt';
import { makeRequest } from '../src/workload/workload';

const conv = (id: string, ...roles: Array<[Conversation['turns'][number]['role'], string]>): Conversation => ({
  id,
  turns: roles.map(([role, content]) => ({ role, content })),
});

function rec(turn: number | undefined, ok: boolean, ttftMs: number, extra: Partial<RequestRecord> = {}): RequestRecord {
  return {
    index: 0,
    requestId: `r${Math.random()}`,
    warmup: false,
    ok,
    api: 'chat',
    intendedStartMs: 0,
    startMs: 0,
    chunkMs: [],
    chunkTokens: [],
    endMs: 100,
    itlMs: [],
    queueMs: 0,
    ...(ok ? { ttftMs } : { error: { code: 'http_5xx', message: 'x' } }),
    ...(turn !== undefined ? { session: 's', turn } : {}),
    ...extra,
  };
}

describe('the sessions shape', () => {
  const a: SessionScript = { id: 'a', turns: [makeRequest('a0', { system: 'sys' }), makeRequest('a1'), makeRequest('a2')] };
  const b: SessionScript = { id: 'b', turns: [makeRequest('b0')] };

  it('builds each turn from the turns before it and the answers given', () => {
    expect(turnSpec(a, 0, []).messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'a0' },
    ]);
    expect(turnSpec(a, 2, ['A0', 'A1']).messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'a0' },
      { role: 'assistant', content: 'A0' },
      { role: 'user', content: 'a1' },
      { role: 'assistant', content: 'A1' },
      { role: 'user', content: 'a2' },
    ]);
    expect(a.turns[2].messages).toHaveLength(1); // the script is not changed
  });

  it('numbers turns turn-major: every first turn, then every second turn', () => {
    const shape = sessions([a, b], { maxConcurrency: 2 });
    expect(sessionTurns(shape)).toBe(4);
    expect(turnPositions(shape)).toEqual([[0, 2, 3], [1]]);
    expect(turnAt(shape)).toEqual([
      { c: 0, k: 0 },
      { c: 1, k: 0 },
      { c: 0, k: 1 },
      { c: 0, k: 2 },
    ]);
    expect(describeShape(shape)).toBe('sessions 2 conversations, max 2 live, think 0 ms');
  });

  it('throws messages that name the fix', () => {
    expect(() => sessions([])).toThrow('sessions needs at least one conversation');
    expect(() => sessions([a], { maxConcurrency: 0 })).toThrow(
      'maxConcurrency (conversations live at once) must be an integer ≥ 1',
    );
    expect(() => sessions([a], { thinkTimeMs: -1 })).toThrow('thinkTimeMs must be a number of ms');
    expect(() => sessions([a, { ...b, id: 'a' }])).toThrow("conversation id 'a' appears twice");
    expect(() => sessions([{ id: 'c', turns: [makeRequest('x', { api: 'completions' })] }])).toThrow(
      "conversation 'c' turn 0 must be a chat request",
    );
  });
});

describe('ShareGPT conversations as session scripts', () => {
  it('keeps alternating user/assistant pairs, leading system messages with turn 0, and the dataset answers', () => {
    const s = sessionScriptOf(
      conv(
        'x',
        ['system', 'be brief'],
        ['assistant', 'hello again'],
        ['user', 'q0'],
        ['assistant', 'a0'],
        ['user', 'q1'],
        ['assistant', 'a1'],
        ['user', 'q2'],
      ),
    );
    if (typeof s === 'string') throw new Error(s);
    expect(s.turns.map((t) => t.messages)).toEqual([
      [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'q0' },
      ],
      [{ role: 'user', content: 'q1' }],
    ]);
    expect(s.datasetAnswers).toEqual(['a0', 'a1']); // the unanswered q2 is dropped
    expect(s.turns.every((t) => (t.maxTokens ?? 0) >= 1 && t.fixedOutput === undefined)).toBe(true);
    const fixed = sessionScriptOf(conv('y', ['user', 'q'], ['assistant', 'a']), { outputLen: 7, ignoreEos: true });
    expect(typeof fixed !== 'string' && fixed.turns[0]).toMatchObject({ maxTokens: 7, fixedOutput: true });
  });

  it('refuses conversations that do not alternate, and samples with the seed', () => {
    expect(sessionScriptOf(conv('z', ['user', 'q'], ['user', 'q again'], ['assistant', 'a']))).toMatch(/do not alternate/);
    expect(sessionScriptOf(conv('w', ['user', 'q']))).toBe('no user turn with an answer');
    const convs = Array.from({ length: 6 }, (_, i) => conv(`c${i}`, ['user', `q${i}`], ['assistant', `a${i}`]));
    convs.push(conv('bad', ['user', 'only']));
    const one = sessionScripts(convs, { numConversations: 4, seed: 3 });
    expect(one.scripts).toHaveLength(4);
    expect(sessionScripts(convs, { numConversations: 4, seed: 3 }).scripts.map((s) => s.id)).toEqual(
      one.scripts.map((s) => s.id),
    );
    const all = sessionScripts(convs, { numConversations: 99 });
    expect([all.scripts.length, all.dropped]).toEqual([6, 1]);
  });
});

describe('per-turn summary and records', () => {
  it('summarizes TTFT per turn over successful measured records only', () => {
    const records = [rec(0, true, 10), rec(0, true, 20), rec(1, true, 40), rec(1, false, 0), rec(0, true, 999, { warmup: true })];
    const turns = summarizeTurns(records)!;
    expect(turns.map((t) => [t.turn, t.requests, t.completed, t.failed, t.ttftMs.n, t.ttftMs.p50])).toEqual([
      [0, 2, 2, 0, 2, 15],
      [1, 2, 1, 1, 1, 40],
    ]);
    expect(summarizeRun(records).byTurn).toEqual(turns);
    expect(summarizeTurns([rec(undefined, true, 10)])).toBeUndefined();
    expect('byTurn' in summarizeRun([rec(undefined, true, 10)])).toBe(false);
    const table = formatTurnTable(turns);
    expect(table.split('\n')[0]).toBe('TTFT by turn (ms)');
    expect(table).toMatch(/^1\s+2\s+1\s+1\s+40\.0\s+40\.0\s+40\.0$/m);
  });

  it('the loader accepts session and turn, old records without them, and rejects a bad turn', () => {
    expect(recordProblem(rec(2, true, 5))).toBeUndefined();
    expect(recordProblem(rec(undefined, true, 5))).toBeUndefined();
    expect(recordProblem({ ...rec(1, true, 5), turn: 1.5 })).toBe("'turn' must be an integer ≥ 0, got 1.5");
    expect(recordProblem({ ...rec(1, true, 5), session: 3 })).toBe("'session' must be a string, got 3");
  });
});

describe('the answer text of a stream', () => {
  const events = [
    '{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}',
    '{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"}}]}',
    '{"choices":[{"index":0,"delta":{"content":"Hello"}}]}',
    '{"choices":[{"index":0,"delta":{"content":", world"},"finish_reason":"stop"}]}',
    '[DONE]',
  ];
  it('is collected (content only, as vLLM multi-turn keeps it) only when asked', () => {
    const parts: string[] = [];
    const t = new StreamTimer('chat', () => 0, parts);
    t.sent(0);
    for (const [i, e] of events.entries()) t.feed(`data: ${e}\n\n`, i);
    expect(parts.join('')).toBe('Hello, world');
    const plain = createStreamTimer('chat', () => 0);
    for (const e of events) plain.feed(`data: ${e}\n\n`, 1);
    expect(JSON.stringify(plain.toRecord({ index: 0, requestId: 'r', intendedStartMs: 0 }))).not.toContain('Hello');
  });
});

describe('the multi-turn flags', () => {
  const base = ['--base-url', 'http://127.0.0.1:1', '--out', '/tmp/loadlab-never-written', '--num-prompts', '2'];
  const sharegpt = ['--dataset-name', 'sharegpt', '--dataset-path', 'x.json'];
  const flags = (argv: string[]) => {
    const a = parseRunArgs([...base, ...argv]);
    if (a === 'help') throw new Error('help');
    return multiTurnFlags(a.v as Record<string, unknown>);
  };
  it('default think time 0, and errors that name the fix', () => {
    expect(flags([...sharegpt, '--multi-turn'])).toEqual({ thinkTimeMs: 0 });
    expect(flags([...sharegpt, '--multi-turn', '--think-time-ms', '1500'])).toEqual({ thinkTimeMs: 1500 });
    expect(flags(sharegpt)).toBeUndefined();
    expect(() => flags([...sharegpt, '--think-time-ms', '5'])).toThrow('--think-time-ms needs --multi-turn');
    expect(() => flags([...sharegpt, '--multi-turn', '--think-time-ms', 'soon'])).toThrow(
      '--think-time-ms must be a number of ms',
    );
    expect(() => flags([...sharegpt, '--multi-turn', '--request-rate', '4'])).toThrow(
      '--request-rate does not apply with --multi-turn',
    );
    expect(() => flags([...sharegpt, '--multi-turn', '--num-warmups', '1'])).toThrow(
      '--num-warmups does not apply with --multi-turn',
    );
    expect(() => flags([...sharegpt, '--multi-turn', '--api', 'completions'])).toThrow('drop --api completions');
    expect(() => flags(['--dataset-name', 'random', '--multi-turn'])).toThrow(
      '--multi-turn does not apply to --dataset-name random',
    );
    expect(() => flags(['--multi-turn'])).toThrow('--multi-turn needs --dataset-name');
  });
});

describe('runSessions (the driver) with a scripted fire', () => {
  const conv3 = (id: string, n: number): SessionScript => ({
    id,
    turns: Array.from({ length: n }, (_, k) => makeRequest(`${id}${k}`)),
  });
  const now = () => performance.now();

  it('keeps at most maxConcurrency conversations live and stops one at its failed turn', async () => {
    let active = 0;
    let peak = 0;
    const order: string[] = [];
    const fire: SessionFire = async (i, spec, due, info) => {
      active++;
      peak = Math.max(peak, active);
      order.push(`${info.session}${info.turn}`);
      await new Promise((r) => setTimeout(r, 3));
      active--;
      info.onText(`ans-${info.session}${info.turn}`);
      const ok = !(info.session === 'b' && info.turn === 1);
      expect(spec.messages?.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual(
        Array.from({ length: info.turn }, (_, j) => `ans-${info.session}${j}`),
      );
      return { ...rec(info.turn, ok, 1), index: i, session: info.session, intendedStartMs: due, endMs: now() };
    };
    const shape = sessions([conv3('a', 3), conv3('b', 3), conv3('c', 2)], { maxConcurrency: 2 });
    const r = await runSessions(shape, fire, { now, signal: new AbortController().signal });
    expect(peak).toBeLessThanOrEqual(2);
    expect(r).toMatchObject({ dispatched: 7, conversations: 3, finished: 2, turnsNotSent: 1 });
    expect(r.stopped).toEqual([{ session: 'b', turn: 1, code: 'http_5xx' }]);
    expect(order).not.toContain('b2');
    expect(r.latenessMs).toHaveLength(4); // turns after the first: a1, a2, b1, c1
  });

  it('sends nothing once stopped, and rethrows a bug in fire', async () => {
    const stopped = new AbortController();
    stopped.abort();
    const never: SessionFire = async () => {
      throw new Error('must not be called');
    };
    const shape = sessions([conv3('a', 2)]);
    expect(await runSessions(shape, never, { now, signal: stopped.signal })).toMatchObject({ dispatched: 0, turnsNotSent: 2 });
    await expect(runSessions(shape, never, { now, signal: new AbortController().signal })).rejects.toThrow('must not be called');
  });
});
