/**
 * The token-chunk fast path (src/client/fast-chunk.ts) must give exactly what the JSON.parse
 * path gives, and must refuse (undefined → JSON.parse) every text it cannot read exactly.
 * Also: a StreamTimer fed the same bytes one event per network chunk (fast path) and all at once
 * (parser path) builds the same record.
 */
import { describe, expect, it } from 'vitest';
import { readTokenChunk, tokenChunkEvent } from '../src/client/fast-chunk';
import { StreamTimer } from '../src/client/timing';
import { chunkHead, chunkJson, sseData, usageChunkJson, usageJson } from '../src/wire/chunks';

const head = chunkHead({ api: 'chat', id: 'chatcmpl-abc', created: 1764720000, model: 'Qwen/Qwen2.5-7B-Instruct' });
const tok = (text: string, usage?: string, extra?: string, tokenIds = true) =>
  chunkJson('chat', head, { text }, { usage, extra, tokenIds });

/** What the JSON.parse path reads from a chunk (the fields the timer uses). */
function reference(data: string) {
  const o = JSON.parse(data);
  const c = o.choices[0];
  const out: Record<string, unknown> = { hasText: typeof c.delta.content === 'string' && c.delta.content.length > 0 };
  if (o.usage) {
    out.promptTokens = o.usage.prompt_tokens;
    out.completionTokens = o.usage.completion_tokens;
    if (o.usage.prompt_tokens_details?.cached_tokens !== undefined)
      out.cachedTokens = o.usage.prompt_tokens_details.cached_tokens;
  }
  return out;
}

describe('readTokenChunk', () => {
  const accepted = [
    tok(' hello'),
    tok(''),
    tok('吞吐 ✓ 😀'),
    tok('quote " back \\ slash / tab \t nl \n cr \r \u0001 \u2028'),
    tok('x', usageJson({ promptTokens: 12, completionTokens: 3 })),
    tok('', usageJson({ promptTokens: 12, completionTokens: 0 })),
    tok('x', usageJson({ promptTokens: 12, completionTokens: 3, cachedTokens: 8 })),
    tok('x', usageJson({ promptTokens: 12, completionTokens: 3, cachedTokens: 0 })),
    tok('x', usageJson({ promptTokens: 12, completionTokens: 3, cachedTokens: null })),
    tok('x', usageJson({ promptTokens: 0, completionTokens: Number('9007199254740993') })),
    tok('x', undefined, undefined, false),
    tok('x', usageJson({ promptTokens: 1, completionTokens: 2 }), ',"t":1764720000123.4567'),
    tok('x', undefined, ',"t":-1.5e3'),
  ];
  it.each(accepted.map((d) => [d]))('reads %s as JSON.parse does', (data) => {
    expect(readTokenChunk(data)).toEqual(reference(data));
  });

  const refused: Array<[string, string]> = [
    ['role chunk', chunkJson('chat', head, { role: true })],
    ['finishing chunk', chunkJson('chat', head, { text: 'x', finishReason: 'length' })],
    ['usage chunk', usageChunkJson(head, usageJson({ promptTokens: 1, completionTokens: 2 }))],
    ['error event', '{"error": {"message": "boom", "type": "InternalServerError", "param": null, "code": 500}}'],
    ['completions chunk', chunkJson('completions', head.replace('chat.completion.chunk', 'text_completion'), { text: 'x' })],
    ['logprobs', chunkJson('chat', head, { text: 'x', logprobs: '{"content":[]}' })],
    ['raw control character in a string (invalid JSON)', tok('a\u0001b').replace('\\u0001', '\u0001')],
    ['invalid escape (invalid JSON)', tok('a').replace('"content":"a"', '"content":"\\q"')],
    [
      'leading zero (invalid JSON)',
      tok('x', usageJson({ promptTokens: 12, completionTokens: 3 })).replace('"completion_tokens":3', '"completion_tokens":03'),
    ],
    [
      'fractional count',
      tok('x', usageJson({ promptTokens: 12, completionTokens: 3 })).replace('"completion_tokens":3', '"completion_tokens":3.0'),
    ],
    ['whitespace', tok('x').replace('"index":0', '"index": 0')],
    ['extra key', tok('x').replace('"logprobs":null', '"logprobs":null,"stop_reason":null')],
    ['trailing error key', tok('x', undefined, ',"error":{"message":"m"}')],
    ['truncated', tok('x').slice(0, -1)],
    ['trailing garbage', `${tok('x')} `],
    ['[DONE]', '[DONE]'],
  ];
  it.each(refused)('refuses a %s', (_name, data) => {
    expect(readTokenChunk(data)).toBeUndefined();
  });
});

describe('tokenChunkEvent', () => {
  it('takes exactly one `data: …` line and a blank line', () => {
    const d = tok('x');
    expect(tokenChunkEvent(sseData(d))).toEqual({ hasText: true });
    expect(tokenChunkEvent(`data:${d}\n\n`)).toBeUndefined(); // no space: the parser's business
    expect(tokenChunkEvent(`${sseData(d)}${sseData(d)}`)).toBeUndefined();
    expect(tokenChunkEvent(`data: ${d}\r\n\r\n`)).toBeUndefined();
    expect(tokenChunkEvent(`data: ${d}\n`)).toBeUndefined();
    expect(tokenChunkEvent(`event: x\ndata: ${d}\n\n`)).toBeUndefined();
  });
});

describe('StreamTimer with and without the fast path', () => {
  const events = [
    sseData(chunkJson('chat', head, { role: true }, { usage: usageJson({ promptTokens: 7, completionTokens: 0 }) })),
    ...[1, 2, 2, 4].map((k) =>
      sseData(tok(k === 2 ? '' : `w${k}`, usageJson({ promptTokens: 7, completionTokens: k, cachedTokens: 4 }))),
    ),
    sseData(tok('no usage')),
    sseData(
      chunkJson(
        'chat',
        head,
        { text: 'end', finishReason: 'stop' },
        { usage: usageJson({ promptTokens: 7, completionTokens: 5 }) },
      ),
    ),
    sseData(usageChunkJson(head, usageJson({ promptTokens: 7, completionTokens: 5, cachedTokens: 4 }))),
    'data: [DONE]\n\n',
  ];
  const meta = { index: 0, requestId: 'r', intendedStartMs: 0 };

  it('builds the same record from one event per network chunk as from one network chunk', () => {
    const fast = new StreamTimer('chat', () => 0);
    events.forEach((e, i) => fast.feed(Buffer.from(e), i + 1));
    const slow = new StreamTimer('chat', () => 0);
    slow.feed(Buffer.from(events.join('')), 1);
    const a = fast.toRecord(meta);
    const b = slow.toRecord(meta);
    expect(a.ok).toBe(true);
    expect(a.chunkTokens).toEqual(b.chunkTokens);
    expect({
      ...a,
      chunkMs: [],
      itlMs: [],
      endMs: 0,
      firstChunkMs: 0,
      firstTokenMs: 0,
      ttftMs: 0,
      e2eMs: 0,
      tpotMs: 0,
      ttftFromIntendedMs: 0,
    }).toEqual({
      ...b,
      chunkMs: [],
      itlMs: [],
      endMs: 0,
      firstChunkMs: 0,
      firstTokenMs: 0,
      ttftMs: 0,
      e2eMs: 0,
      tpotMs: 0,
      ttftFromIntendedMs: 0,
    });
    expect(a.chunkMs).toEqual([2, 3, 5, 6, 7]); // the stamps of the token chunks (the k=2 repeat carries no token)
  });

  it('leaves a chunk that follows a split event to the parser', () => {
    const t = new StreamTimer('chat', () => 0);
    const e = sseData(tok('a', usageJson({ promptTokens: 1, completionTokens: 1 })));
    t.feed(events[0], 1);
    t.feed(e.slice(0, 20), 2); // the parser now holds a partial line
    t.feed(e.slice(20), 3);
    t.feed(e.replace('"completion_tokens":1', '"completion_tokens":2'), 4);
    t.feed('data: [DONE]\n\n', 5);
    const r = t.toRecord(meta);
    expect(r.ok).toBe(true);
    expect(r.chunkMs).toEqual([3, 4]);
  });
});
