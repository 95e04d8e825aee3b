// The lean pool's HTTP/1.1 response parser (src/client/h1-parse.ts), fed whole messages and the same messages cut
// at every byte, and into every pair of pieces: the events must not depend on how the socket's reads fall.
import { describe, expect, it } from 'vitest';
import { H1ParseError, H1Parser } from '../src/client/h1-parse';

interface Seen {
  heads: Array<{ status: number; headers: Record<string, string>; text: string }>;
  body: string;
  done: boolean[];
  used: number[];
}

/** Feed `wire` in pieces cut at `cuts`; each piece is copied into a reused buffer, as the pool's reads are. */
function parse(wire: string, cuts: number[] = [], bodyless = false): Seen {
  const seen: Seen = { heads: [], body: '', done: [], used: [] };
  const p = new H1Parser(
    {
      onHead: (status, headers, text) => seen.heads.push({ status, headers, text }),
      onBody: (buf, s, e) => (seen.body += buf.toString('latin1', s, e)),
      onDone: (k) => seen.done.push(k),
    },
    bodyless,
  );
  const all = Buffer.from(wire, 'latin1');
  const shared = Buffer.alloc(all.length + 8);
  const edges = [0, ...cuts, all.length];
  for (let k = 0; k + 1 < edges.length; k++) {
    const n = all.copy(shared, 0, edges[k], edges[k + 1]);
    shared.fill(0x7e, n); // stale bytes past the read must never be seen
    seen.used.push(p.feed(shared, 0, n));
    if (p.done) break;
  }
  return seen;
}

const chunk = (s: string) => `${Buffer.byteLength(s, 'latin1').toString(16)}\r\n${s}\r\n`;
const SSE = ['data: {"a":1}\n\n', 'data: {"b":22}\n\n', 'data: [DONE]\n\n'];
const CHUNKED =
  'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n' +
  SSE.map(chunk).join('') +
  '0\r\n\r\n';

describe('H1Parser', () => {
  it('reads a chunked stream whole: head, body views in order, keep-alive end', () => {
    const s = parse(CHUNKED);
    expect(s.heads).toEqual([
      { status: 200, headers: { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' }, text: 'OK' },
    ]);
    expect(s.body).toBe(SSE.join(''));
    expect(s.done).toEqual([true]);
  });

  it('gives the same events however the reads fall: every single cut and every pair of cuts', () => {
    const whole = parse(CHUNKED);
    for (let a = 1; a < CHUNKED.length; a++) {
      expect(parse(CHUNKED, [a])).toMatchObject({ heads: whole.heads, body: whole.body, done: whole.done });
      for (let b = a + 1; b < CHUNKED.length; b += 7) {
        expect(parse(CHUNKED, [a, b])).toMatchObject({ heads: whole.heads, body: whole.body, done: whole.done });
      }
    }
  });

  it('skips interim heads, reads chunk extensions and trailers', () => {
    const wire =
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n' +
      '5;name=x\r\nhello\r\n0\r\nx-trailer: 1\r\n\r\n';
    expect(() => parse(wire)).toThrow(/unsupported transfer-encoding: gzip, chunked/);
    const plain = wire.replace('gzip, ', '');
    for (let a = 1; a < plain.length; a++) {
      const s = parse(plain, [a]);
      expect(s.heads.map((h) => h.status)).toEqual([200]);
      expect(s.body).toBe('hello');
      expect(s.done).toEqual([true]);
    }
  });

  it('frames by content-length and says where the message ended', () => {
    const wire = 'HTTP/1.1 400 Bad Request\r\ncontent-length: 11\r\n\r\n{"error":1}EXTRA';
    const s = parse(wire);
    expect(s.heads[0]).toMatchObject({ status: 400, text: 'Bad Request' });
    expect(s.body).toBe('{"error":1}');
    expect(s.done).toEqual([true]);
    expect(s.used).toEqual([wire.length - 'EXTRA'.length]);
  });

  it('ends at once with no body: 204, 304, a HEAD request, content-length 0', () => {
    expect(parse('HTTP/1.1 204 No Content\r\n\r\n').done).toEqual([true]);
    expect(parse('HTTP/1.1 304 Not Modified\r\ncontent-length: 5\r\n\r\n').done).toEqual([true]);
    expect(parse('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n', [], true)).toMatchObject({ body: '', done: [true] });
    expect(parse('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n').done).toEqual([true]);
  });

  it('keeps the connection per RFC 9112 §9.3: close, HTTP/1.0, and a body framed by the close', () => {
    expect(parse('HTTP/1.1 200 OK\r\nConnection: close\r\ncontent-length: 0\r\n\r\n').done).toEqual([false]);
    expect(parse('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n').done).toEqual([false]);
    expect(parse('HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n').done).toEqual([true]);
    const events: string[] = [];
    const p = new H1Parser({
      onHead: () => events.push('head'),
      onBody: (b, s, e) => events.push(b.toString('latin1', s, e)),
      onDone: (k) => events.push(`done ${k}`),
    });
    const b = Buffer.from('HTTP/1.1 200 OK\r\n\r\nuntil the end');
    p.feed(b, 0, b.length);
    expect(p.eof()).toBeUndefined();
    expect(events).toEqual(['head', 'until the end', 'done false']);
  });

  it('reports a close before the end, and malformed messages, as H1ParseError', () => {
    const p = new H1Parser({ onHead: () => {}, onBody: () => {}, onDone: () => {} });
    const b = Buffer.from(CHUNKED.slice(0, 120), 'latin1');
    p.feed(b, 0, b.length);
    expect(p.eof()?.message).toMatch(/other side closed before the response body was complete/);
    for (const bad of [
      'HTTP/2 200 OK\r\n\r\n',
      'HTTP/1.1 200 OK\r\nno colon\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabXY',
    ]) {
      expect(() => parse(bad), bad).toThrow(H1ParseError);
    }
    expect(() => parse(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(70_000)}`)).toThrow(/longer than 65536 bytes/);
  });

  it('reads the next response on the same connection after reset', () => {
    const seen: number[] = [];
    const p = new H1Parser({ onHead: (s) => seen.push(s), onBody: () => {}, onDone: () => {} });
    for (const wire of ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok', 'HTTP/1.1 503 X\r\ncontent-length: 0\r\n\r\n']) {
      p.reset();
      const b = Buffer.from(wire);
      expect(p.feed(b, 0, b.length)).toBe(b.length);
      expect(p.done).toBe(true);
    }
    expect(seen).toEqual([200, 503]);
  });
});
