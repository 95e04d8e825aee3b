// The pure stream timer and derived metrics, with an injected clock: exact values, no sockets.
import { describe, expect, it } from 'vitest';
import { createStreamTimer, deriveMetrics } from '../src/client';
import { chunkJson, errorEventJson, usageJson, type StreamShape } from './helpers/sse-shapes';

/** A clock that returns the scripted times in order (then repeats the last). */
function clock(times: number[]): () => number {
  let i = 0;
  return () => times[Math.min(i++, times.length - 1)];
}

const meta = { index: 0, requestId: 'r0', intendedStartMs: 0 };
const ev = (json: string): string => `data: ${json}\n\n`;
const DONE = 'data: [DONE]\n\n';
const chatShape: StreamShape = { api: 'chat', id: 'x', created: 1, model: 'm', promptTokens: 12, usageNull: true };
const complShape: StreamShape = { ...chatShape, api: 'completions' };

describe('stream timer, completions', () => {
  it('scripted [0, 120, 150, 190] gives TTFT 120, ITL [30, 40], E2E 190, TPOT 35', () => {
    const t = createStreamTimer('completions', clock([0, 120, 150, 190]));
    t.sent();
    t.feed(ev(chunkJson(complShape, { text: ' a' })));
    t.feed(ev(chunkJson(complShape, { text: ' b' })));
    t.feed(ev(chunkJson(complShape, { text: ' c', finishReason: 'length' })) + DONE);
    const r = t.toRecord(meta);
    expect(r).toMatchObject({ ok: true, api: 'completions', startMs: 0, firstChunkMs: 120, firstTokenMs: 120, endMs: 190 });
    expect(r.chunkMs).toEqual([120, 150, 190]);
    expect(r.chunkTokens).toEqual([1, 1, 1]);
    expect(r.ttftMs).toBe(120);
    expect(r.itlMs).toEqual([30, 40]);
    expect(r.e2eMs).toBe(190);
    expect(r.outputTokens).toBe(3); // no usage: sum of chunkTokens
    expect(r.tpotMs).toBe(35); // (190 - 120) / (3 - 1)
    expect(r.finishReason).toBe('length');
    expect(r.error).toBeUndefined();
  });

  it('treats "usage": null and a missing usage alike', () => {
    const run = (usageNull: boolean) => {
      const s = { ...complShape, usageNull };
      const t = createStreamTimer('completions', clock([0, 10, 20, 30]));
      t.sent();
      t.feed(ev(chunkJson(s, { text: 'a' })));
      t.feed(ev(chunkJson(s, { text: 'b', finishReason: 'stop' })));
      t.feed(ev(usageJson(s, 2)) + DONE);
      return t.toRecord(meta);
    };
    const withNull = run(true);
    expect(withNull).toEqual(run(false));
    expect(withNull).toMatchObject({ ok: true, promptTokens: 12, outputTokens: 2, chunkMs: [10, 20], endMs: 30, e2eMs: 20 });
  });

  it('counts continuous-usage deltas as tokens per chunk', () => {
    const t = createStreamTimer('completions', clock([0, 50, 60, 90, 91]));
    t.sent();
    t.feed(ev(chunkJson(complShape, { text: ' a b', usageCount: 2 })));
    t.feed(ev(chunkJson(complShape, { text: ' c', usageCount: 3 })));
    t.feed(ev(chunkJson(complShape, { text: ' d e f', usageCount: 6, finishReason: 'length' })));
    t.feed(ev(usageJson(complShape, 6)) + DONE);
    const r = t.toRecord(meta);
    expect(r.chunkTokens).toEqual([2, 1, 3]);
    expect(r.outputTokens).toBe(6);
    expect(r.itlMs).toEqual([10, 30]);
    expect(r.e2eMs).toBe(90);
    expect(r.tpotMs).toBe((90 - 50) / 5);
  });
});

describe('stream timer, chat', () => {
  it('keeps the role chunk as firstChunkMs and stamps TTFT on the first token', () => {
    const t = createStreamTimer('chat', clock([0, 5, 100, 101, 130, 170, 171]));
    t.sent();
    t.headers(200);
    t.feed(ev(chunkJson(chatShape, { role: true })));
    t.feed(ev(chunkJson(chatShape, { text: 'Hel' })));
    t.feed(ev(chunkJson(chatShape, { text: 'lo' })));
    t.feed(ev(chunkJson(chatShape, { text: '!', finishReason: 'length' })));
    t.feed(ev(usageJson(chatShape, 3)) + DONE);
    const r = t.toRecord({ ...meta, tag: 'short', warmup: true });
    expect(r).toMatchObject({ ok: true, status: 200, headersMs: 5, firstChunkMs: 100, firstTokenMs: 101, endMs: 171 });
    expect(r).toMatchObject({ tag: 'short', warmup: true, promptTokens: 12, outputTokens: 3, finishReason: 'length' });
    expect(r.ttftMs).toBe(101);
    expect(r.itlMs).toEqual([29, 40]);
    expect(r.e2eMs).toBe(170); // the usage chunk and [DONE] do not move E2E
    expect(r.tpotMs).toBe(34.5);
  });

  it('counts the EOS chunk (content "") when continuous usage rises, not otherwise', () => {
    const stream = (continuous: boolean) => {
      const u = (n: number) => (continuous ? n : undefined);
      const t = createStreamTimer('chat', clock([0, 10, 10, 20, 30, 31]));
      t.sent();
      t.feed(ev(chunkJson(chatShape, { role: true, usageCount: u(0) })));
      t.feed(ev(chunkJson(chatShape, { text: 'a', usageCount: u(1) })));
      t.feed(ev(chunkJson(chatShape, { text: 'b', usageCount: u(2) })));
      t.feed(ev(chunkJson(chatShape, { text: '', finishReason: 'stop', usageCount: u(3) })));
      t.feed(ev(usageJson(chatShape, 3)) + DONE);
      return t.toRecord(meta);
    };
    const c = stream(true);
    expect(c.chunkMs).toEqual([10, 20, 30]);
    expect(c.chunkTokens).toEqual([1, 1, 1]);
    expect(c.finishReason).toBe('stop');
    const p = stream(false);
    expect(p.chunkMs).toEqual([10, 20]);
    expect(p.outputTokens).toBe(3); // usage counts the EOS token
    expect(p.finishReason).toBe('stop');
  });

  it('stamps every event completed by one network chunk with that chunk', () => {
    const t = createStreamTimer('chat', clock([0, 42]));
    t.sent();
    t.feed(
      ev(chunkJson(chatShape, { role: true })) +
        ev(chunkJson(chatShape, { text: 'a' })) +
        ev(chunkJson(chatShape, { text: 'b' })) +
        DONE,
    );
    const r = t.toRecord(meta);
    expect(r).toMatchObject({ firstChunkMs: 42, firstTokenMs: 42, chunkMs: [42, 42], itlMs: [0], endMs: 42, ok: true });
  });

  it('reads cached tokens and counts reasoning deltas as tokens', () => {
    const t = createStreamTimer('chat', clock([0, 10, 20, 30]));
    t.sent();
    t.feed(ev('{"choices":[{"index":0,"delta":{"reasoning_content":"hmm"},"finish_reason":null}]}'));
    t.feed(ev('{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}'));
    t.feed(
      ev(
        '{"choices":[],"usage":{"prompt_tokens":9,"total_tokens":11,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":8}}}',
      ) + DONE,
    );
    expect(t.toRecord(meta)).toMatchObject({
      firstTokenMs: 10,
      chunkMs: [10, 20],
      cachedTokens: 8,
      promptTokens: 9,
      outputTokens: 2,
    });
  });
});

describe('stream timer, failures keep partial timing', () => {
  it('an error event mid-stream is stream_error with the server message', () => {
    const t = createStreamTimer('chat', clock([0, 10, 20, 25]));
    t.sent();
    t.feed(ev(chunkJson(chatShape, { role: true })) + ev(chunkJson(chatShape, { text: 'a' })));
    t.feed(ev(chunkJson(chatShape, { text: 'b' })));
    t.feed(ev(errorEventJson('Internal server error', 500)) + DONE);
    const r = t.toRecord(meta);
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe('stream_error');
    expect(r.error?.message).toContain('500 InternalServerError: Internal server error');
    expect(r).toMatchObject({ ttftMs: 10, chunkMs: [10, 20], endMs: 25, outputTokens: 2 });
  });

  it('malformed JSON is parse', () => {
    const t = createStreamTimer('completions', clock([0, 10, 20]));
    t.sent();
    t.feed(ev(chunkJson(complShape, { text: 'a' })));
    t.feed(`data: {"choices":[{"text":"b"}\n\n${ev(chunkJson(complShape, { text: 'c' }))}${DONE}`);
    const r = t.toRecord(meta);
    expect(r).toMatchObject({ ok: false, error: { code: 'parse' }, chunkMs: [10], endMs: 20 });
    expect(r.error?.message).toContain('malformed JSON');
  });

  it('a body that is not SSE is parse', () => {
    const t = createStreamTimer('chat', clock([0, 10]));
    t.sent();
    t.feed('{"id":"chatcmpl-1","choices":[]}\n');
    expect(t.toRecord(meta).error?.code).toBe('parse');
  });

  it('a stream that ends without [DONE] is incomplete', () => {
    const t = createStreamTimer('completions', clock([0, 10, 20, 30]));
    t.sent();
    t.feed(ev(chunkJson(complShape, { text: 'a' })));
    t.feed(ev(chunkJson(complShape, { text: 'b' })));
    t.end();
    const r = t.toRecord(meta);
    expect(r).toMatchObject({ ok: false, error: { code: 'incomplete' }, chunkMs: [10, 20], endMs: 30, ttftMs: 10 });
    t.feed(DONE, 40); // ignored once finished
    expect(t.toRecord(meta).ok).toBe(false);
  });

  it('the first failure wins', () => {
    const t = createStreamTimer('chat', clock([0]));
    t.sent(0);
    t.fail('idle_timeout', 'no bytes', 60);
    t.fail('aborted', 'late', 70);
    t.end(80);
    expect(t.toRecord(meta)).toMatchObject({ error: { code: 'idle_timeout' }, endMs: 60 });
  });
});

describe('deriveMetrics', () => {
  it('follows vllm bench serve definitions', () => {
    const d = deriveMetrics({ intendedStartMs: 100, startMs: 103, firstTokenMs: 203, chunkMs: [203, 213, 233], outputTokens: 5 });
    expect(d).toEqual({ queueMs: 3, ttftMs: 100, ttftFromIntendedMs: 103, e2eMs: 130, itlMs: [10, 20], tpotMs: 30 / 4 });
  });

  it('leaves TPOT undefined below 2 output tokens and E2E/TTFT undefined without tokens', () => {
    expect(deriveMetrics({ intendedStartMs: 0, startMs: 0, firstTokenMs: 50, chunkMs: [50], outputTokens: 1 })).toEqual({
      queueMs: 0,
      ttftMs: 50,
      ttftFromIntendedMs: 50,
      e2eMs: 50,
      itlMs: [],
    });
    expect(deriveMetrics({ intendedStartMs: 0, startMs: 2, chunkMs: [] })).toEqual({ queueMs: 2, itlMs: [] });
  });
});
