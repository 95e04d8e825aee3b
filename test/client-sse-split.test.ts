// The same byte stream split at random points must parse the same way, and each event must be
// stamped with the arrival of the network chunk holding its last byte (STYLE.md point 10).
import { describe, expect, it } from 'vitest';
import { createStreamTimer } from '../src/client';
import { randInt, seededRng, type Rng } from '../src/rng';
import type { Api } from '../src/types';
import { chunkJson, usageJson, type StreamShape } from './helpers/sse-shapes';

interface Built {
  bytes: Buffer;
  /** Byte offset just past each token chunk event (its blank line). */
  tokenEventEnds: number[];
  doneEnd: number;
}

/** A vLLM stream with continuous usage, multi-byte text, and a final usage chunk. */
function buildStream(api: Api, tokens: number): Built {
  const s: StreamShape = { api, id: 'split', created: 1, model: 'm', promptTokens: 7, cachedTokens: 2, usageNull: true };
  const words = [' héllo', ' 世界', ' 🚀', ' ok', ' naïve'];
  let text = '';
  const tokenEventEnds: number[] = [];
  const add = (json: string, isToken: boolean) => {
    text += `data: ${json}\n\n`;
    if (isToken) tokenEventEnds.push(Buffer.byteLength(text));
  };
  if (api === 'chat') add(chunkJson(s, { role: true, usageCount: 0 }), false);
  for (let i = 0; i < tokens; i++) {
    const last = i === tokens - 1;
    add(chunkJson(s, { text: words[i % words.length], usageCount: i + 1, finishReason: last ? 'length' : undefined }), true);
  }
  add(usageJson(s, tokens), false);
  text += 'data: [DONE]\n\n';
  const bytes = Buffer.from(text, 'utf8');
  return { bytes, tokenEventEnds, doneEnd: bytes.length };
}

/** Random split points (sorted, unique, inside the buffer), some pieces as small as one byte. */
function splitPoints(rng: Rng, length: number): number[] {
  const n = randInt(rng, 0, 40);
  const cuts = new Set<number>();
  for (let i = 0; i < n; i++) cuts.add(randInt(rng, 1, length - 1));
  return [...cuts].sort((a, b) => a - b);
}

/** Feed the pieces, each stamped with the byte offset where it ends (a clock we can predict). */
function feedPieces(api: Api, bytes: Buffer, cuts: number[]) {
  const t = createStreamTimer(api, () => 0);
  t.sent(0);
  const ends = [...cuts, bytes.length];
  let from = 0;
  for (const end of ends) {
    t.feed(bytes.subarray(from, end), end);
    from = end;
  }
  return { record: t.toRecord({ index: 0, requestId: 'x', intendedStartMs: 0 }), ends };
}

/** Expected stamp of an event ending at byte `e`: the end of the first piece reaching it. */
const stampOf = (ends: number[], e: number): number => ends.find((x) => x >= e)!;

describe('SSE parsing is independent of chunk boundaries', () => {
  for (const api of ['chat', 'completions'] as const) {
    it(`${api}: 300 seeded random byte splits give the same record up to arrival stamps`, () => {
      const built = buildStream(api, 12);
      const whole = feedPieces(api, built.bytes, []).record;
      expect(whole).toMatchObject({ ok: true, outputTokens: 12, promptTokens: 7, cachedTokens: 2, finishReason: 'length' });
      expect(whole.chunkTokens).toEqual(new Array(12).fill(1));
      const rng = seededRng(api === 'chat' ? 1 : 2);
      for (let iter = 0; iter < 300; iter++) {
        const cuts = splitPoints(rng, built.bytes.length);
        const { record, ends } = feedPieces(api, built.bytes, cuts);
        expect(record.error).toBeUndefined();
        expect(record.chunkTokens).toEqual(whole.chunkTokens);
        expect(record.outputTokens).toBe(12);
        expect(record.finishReason).toBe('length');
        expect(record.chunkMs).toEqual(built.tokenEventEnds.map((e) => stampOf(ends, e)));
        expect(record.endMs).toBe(stampOf(ends, built.doneEnd));
      }
    });
  }

  it('one byte at a time works too (multi-byte characters split across chunks)', () => {
    const built = buildStream('chat', 5);
    const cuts = Array.from({ length: built.bytes.length - 1 }, (_, i) => i + 1);
    const { record } = feedPieces('chat', built.bytes, cuts);
    expect(record).toMatchObject({ ok: true, outputTokens: 5 });
    expect(record.chunkMs).toEqual(built.tokenEventEnds);
  });

  it('a WHATWG stream with no socket (new Response(text).body) gives the same record', async () => {
    const built = buildStream('completions', 6);
    const t = createStreamTimer('completions', () => 1);
    t.sent(0);
    const reader = new Response(built.bytes).body!.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      t.feed(value);
    }
    const r = t.toRecord({ index: 0, requestId: 'x', intendedStartMs: 0 });
    expect(r).toMatchObject({ ok: true, outputTokens: 6, chunkTokens: [1, 1, 1, 1, 1, 1] });
  });
});
