// fetchText (src/client/fetch-text.ts), the probes' request, over the lean pool and over undici, against a real server.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/client';
import { dispatcherFor, fetchText } from '../src/client/fetch-text';

let server: Server;
let base: string;
const seen: Array<{ method?: string; url?: string; length?: string; te?: string; body: string }> = [];
let release: (() => void) | undefined;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      seen.push({
        method: req.method,
        url: req.url,
        length: req.headers['content-length'],
        te: req.headers['transfer-encoding'],
        body,
      });
      if (req.url === '/hold') {
        release = () => res.end('held');
        return;
      }
      res.setHeader('x-answer', '42');
      res.end(`${req.method} ${req.url} ${body} 你好`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('fetchText', () => {
  it.each(['lean', 'undici'])('%s: a GET without a body, a POST with one; status, headers and UTF-8 text', async (kind) => {
    if (kind === 'undici') process.env.LOADLAB_HTTP_CLIENT = 'undici';
    try {
      seen.length = 0;
      const get = await fetchText(`${base}/metrics?x=1`);
      expect(get).toMatchObject({ status: 200, text: 'GET /metrics?x=1  你好' });
      expect(get.headers['x-answer']).toBe('42');
      const post = await fetchText(`${base}/tokenize`, {
        method: 'POST',
        body: '{"a":"é"}',
        headers: { 'content-type': 'application/json' },
      });
      expect(post.text).toBe('POST /tokenize {"a":"é"} 你好');
      expect(seen[0]).toMatchObject({ method: 'GET', length: undefined, te: undefined, body: '' });
      expect(seen[1]).toMatchObject({ method: 'POST', length: String(Buffer.byteLength('{"a":"é"}')), body: '{"a":"é"}' });
    } finally {
      delete process.env.LOADLAB_HTTP_CLIENT;
    }
  });

  it('an abort rejects with its reason, also while the request waits for a socket', async () => {
    const one = dispatcherFor(base, 1);
    const held = fetchText(`${base}/hold`, { dispatcher: one });
    while (release === undefined) await new Promise((r) => setTimeout(r, 5));
    const ac = new AbortController();
    const queued = fetchText(`${base}/queued`, { dispatcher: one, signal: ac.signal });
    ac.abort(new Error('stop waiting'));
    await expect(queued).rejects.toThrow('stop waiting');
    release();
    expect((await held).text).toBe('held');
    expect(seen.some((s) => s.url === '/queued')).toBe(false); // never written
    await expect(fetchText(`${base}/x`, { signal: AbortSignal.abort(new Error('already')) })).rejects.toThrow('already');
    await one.close();
  });

  it('a refused connection rejects with ECONNREFUSED', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    await expect(fetchText(`http://127.0.0.1:${port}/health`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it("sends the caller's Host when given (a gateway routing by name), else the target's", async () => {
    const hosts: Array<string | undefined> = [];
    const srv = createServer((req, res) => {
      hosts.push(req.headers.host);
      res.end();
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`;
    await fetchText(url);
    await fetchText(url, { headers: { Host: 'model-a.internal' } });
    srv.closeAllConnections();
    await new Promise((r) => srv.close(r));
    expect(hosts).toEqual([new URL(url).host, 'model-a.internal']);
  });

  it('a LOADLAB_HTTP_CLIENT it does not know throws at once, naming the values', () => {
    process.env.LOADLAB_HTTP_CLIENT = 'undicci';
    try {
      expect(() => createClient({ baseUrl: base, model: 'm' })).toThrow(
        /LOADLAB_HTTP_CLIENT must be 'lean' \(the default\) or 'undici', got 'undicci'/,
      );
      expect(() => dispatcherFor(base, 1)).toThrow(TypeError);
    } finally {
      delete process.env.LOADLAB_HTTP_CLIENT;
    }
  });

  it.each(['lean', 'undici'])('%s: a header that would break the request rejects; nothing is left unhandled', async (kind) => {
    if (kind === 'undici') process.env.LOADLAB_HTTP_CLIENT = 'undici';
    try {
      const d = dispatcherFor(base, 1);
      await expect(fetchText(`${base}/x`, { dispatcher: d, headers: { a: 'b\r\nc: d' } })).rejects.toThrow(/invalid/i);
      await d.close();
      await expect(fetchText(`${base}/x`, { dispatcher: d })).rejects.toThrow(/closed|destroyed/i);
    } finally {
      delete process.env.LOADLAB_HTTP_CLIENT;
    }
  });
});
