/**
 * How the simulator frames a streamed response on the wire (src/sim/http/chunk-socket.ts, `chunkSocket`): over HTTP/1.1,
 * each SSE event is one HTTP chunk of its own, written to the socket as uvicorn writes a body message; over
 * HTTP/1.0 (no chunked encoding) the events go through Node's `res.write` unframed. Read with a raw `net` socket,
 * so the bytes are the server's, not a client library's view of them.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkFrame } from '../src/sim/http/chunk-socket';
import { startSim, type SimHandle } from '../src/sim/start';

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ extraArgs: ['--stats-interval-s', '0'] });
});

afterAll(async () => {
  await sim?.stop();
});

/** Sends one raw streamed chat request and returns the whole response (the server closes or the body ends). */
function rawExchange(version: '1.0' | '1.1'): Promise<string> {
  const body = JSON.stringify({
    model: sim.model,
    messages: [{ role: 'user', content: 'Say anything.' }],
    max_tokens: 6,
    ignore_eos: true,
    stream: true,
    stream_options: { include_usage: true },
  });
  const { port } = new URL(sim.baseUrl);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), '127.0.0.1');
    let text = '';
    sock.setEncoding('latin1');
    sock.on('data', (d: string) => {
      text += d;
      if (version === '1.1' && text.endsWith('\r\n0\r\n\r\n')) sock.end();
    });
    sock.on('end', () => resolve(text));
    sock.on('error', reject);
    sock.write(
      `POST /v1/chat/completions HTTP/${version}\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n${version === '1.0' ? 'Connection: close\r\n' : ''}\r\n${body}`,
    );
  });
}

/** The chunks of a chunked body: each size line's hex must equal its data's byte length, and each ends in CRLF. */
function dechunk(body: string): string[] {
  const chunks: string[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    const size = Number.parseInt(body.slice(at, eol), 16);
    expect(Number.isNaN(size)).toBe(false);
    if (size === 0) break;
    const data = body.slice(eol + 2, eol + 2 + size);
    expect(body.slice(eol + 2 + size, eol + 4 + size)).toBe('\r\n');
    chunks.push(Buffer.from(data, 'latin1').toString('utf8'));
    at = eol + 4 + size;
  }
  return chunks;
}

describe('streamed responses on the wire', () => {
  it('HTTP/1.1: one chunk per SSE event, sizes in bytes, then [DONE] and the terminating chunk', async () => {
    const res = await rawExchange('1.1');
    const [head, body] = [res.slice(0, res.indexOf('\r\n\r\n')), res.slice(res.indexOf('\r\n\r\n') + 4)];
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.toLowerCase()).toContain('transfer-encoding: chunked');
    const chunks = dechunk(body);
    expect(chunks.at(-1)).toBe('data: [DONE]\n\n');
    // Role chunk, 6 token chunks, the usage chunk: each its own HTTP chunk holding exactly one event.
    expect(chunks.length).toBe(9);
    for (const c of chunks) expect(c).toMatch(/^data: [^\n]+\n\n$/);
    expect(body.endsWith('\r\n0\r\n\r\n')).toBe(true);
  });

  it('HTTP/1.0: no chunked encoding, the same events unframed until the server closes', async () => {
    const res = await rawExchange('1.0');
    const [head, body] = [res.slice(0, res.indexOf('\r\n\r\n')), res.slice(res.indexOf('\r\n\r\n') + 4)];
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.toLowerCase()).not.toContain('transfer-encoding');
    const events = body.split('\n\n').slice(0, -1);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(events.length).toBe(9);
  });

  it('chunkFrame sizes a chunk in UTF-8 bytes and frames no empty chunk', () => {
    expect(chunkFrame('data: 显存\n\n')).toBe(`e\r\ndata: 显存\n\n\r\n`);
    expect(chunkFrame('')).toBe(''); // a zero-size chunk would end the body
  });
});
