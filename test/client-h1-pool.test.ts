// The lean pool (src/client/h1-pool.ts) against real HTTP servers on 127.0.0.1: reuse, queueing, stale sockets,
// failures as errors with undici's codes, aborts, and an idle pool that lets the process exit.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { H1Pool } from '../src/client/h1-pool';
import { tsxImportExpr } from '../src/proc/dist';

interface Outcome {
  status?: number;
  body: string;
  error?: { code?: string; message: string };
}

/** Dispatch one POST and collect what its handler hears; `abortAfter`: abort after that many body chunks. */
function send(pool: H1Pool, path = '/x', abortAfter?: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const out: Outcome = { body: '' };
    let chunks = 0;
    const handler: Dispatcher.DispatchHandler = {
      onResponseStart: (_c, status) => (out.status = status),
      onResponseData: (c, b) => {
        out.body += b.toString();
        if (abortAfter !== undefined && ++chunks >= abortAfter) c.abort(new Error('enough'));
      },
      onResponseEnd: () => resolve(out),
      onResponseError: (_c, e) => resolve({ ...out, error: { code: (e as { code?: string }).code, message: e.message } }),
    };
    pool.dispatch({ path, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"q":"你好"}' }, handler);
  });
}

const servers: Array<Server | NetServer> = [];
const pools: H1Pool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  for (const s of servers.splice(0)) {
    (s as Server).closeAllConnections?.();
    await new Promise((r) => s.close(r));
  }
});

/** A node:http server that counts connections and the most open at once. */
async function httpServer(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const stats = { connections: 0, open: 0, maxOpen: 0 };
  const srv = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (body += d));
    req.on('end', () => handle(req, res, body));
  });
  srv.on('connection', (s: Socket) => {
    stats.connections++;
    stats.maxOpen = Math.max(stats.maxOpen, ++stats.open);
    s.on('close', () => stats.open--);
  });
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, stats, srv };
}

/** A raw TCP server answering each connection's first request with `reply` (bytes as given). */
async function rawServer(reply: (s: Socket) => void) {
  const srv = createNetServer((s) => s.once('data', () => reply(s)));
  servers.push(srv);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

const pool = (origin: string, connections = 1, keepAliveMs?: number) => {
  const p = new H1Pool(origin, { connections, keepAliveMs });
  pools.push(p);
  return p;
};

describe('H1Pool', () => {
  it('streams a chunked answer and reuses one keep-alive connection; the body arrives as sent (UTF-8)', async () => {
    const { origin, stats } = await httpServer((_q, res, body) => {
      res.write('data: 1\n\n');
      setTimeout(() => res.end(`data: ${body}\n\n`), 5);
    });
    const p = pool(origin);
    for (let k = 0; k < 5; k++) expect(await send(p)).toEqual({ status: 200, body: 'data: 1\n\ndata: {"q":"你好"}\n\n' });
    expect(stats.connections).toBe(1);
  });

  it('holds at most `connections` sockets and queues the rest in order', async () => {
    const { origin, stats } = await httpServer((q, res) => setTimeout(() => res.end(q.url), 20));
    const p = pool(origin, 2);
    const paths = Array.from({ length: 7 }, (_, k) => `/r${k}`);
    const out = await Promise.all(paths.map((path) => send(p, path)));
    expect(out.map((o) => o.body)).toEqual(paths);
    expect(stats.maxOpen).toBe(2);
    expect(stats.connections).toBe(2);
  });

  it('opens a fresh socket instead of reusing one idle longer than keepAliveMs, or one the server closed', async () => {
    const { origin, stats, srv } = await httpServer((_q, res) => res.end('ok'));
    const p = pool(origin, 1, 50);
    await send(p);
    await new Promise((r) => setTimeout(r, 120));
    expect(await send(p)).toMatchObject({ status: 200, body: 'ok' });
    expect(stats.connections).toBe(2);
    srv.closeIdleConnections();
    await new Promise((r) => setTimeout(r, 30));
    expect(await send(p)).toMatchObject({ status: 200, body: 'ok' });
    expect(stats.connections).toBe(3);
  });

  it("fails with undici's codes: refused, closed mid-body, a malformed answer; the pool goes on", async () => {
    const { origin: ok } = await httpServer((_q, res) => res.end('fine'));
    const dead = `http://127.0.0.1:${new URL(ok).port}`;
    servers.pop()?.close();
    await new Promise((r) => setTimeout(r, 20));
    expect((await send(pool(dead))).error?.code).toBe('ECONNREFUSED');
    const cut = await rawServer((s) => s.end('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel'));
    const o = await send(pool(cut));
    expect(o).toMatchObject({ status: 200, body: 'hel', error: { code: 'UND_ERR_SOCKET' } });
    const bad = await rawServer((s) => s.end('SPDY/3 200 OK\r\n\r\n'));
    expect((await send(pool(bad))).error).toMatchObject({ code: 'HPE_INVALID', message: expect.stringMatching(/status line/) });
    const close = await rawServer((s) => s.write('HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok'));
    expect(await send(pool(close))).toEqual({ status: 200, body: 'ok' });
  });

  it('an abort mid-stream ends the request with its reason and closes only that socket', async () => {
    let closed = 0;
    const { origin } = await httpServer((q, res) => {
      if (q.url === '/long') {
        const t = setInterval(() => res.write('data: x\n\n'), 5);
        res.on('close', () => (clearInterval(t), closed++));
      } else res.end('short');
    });
    const p = pool(origin, 1);
    const o = await send(p, '/long', 3);
    expect(o.error?.message).toBe('enough');
    expect(o.body).toBe('data: x\n\n'.repeat(3));
    expect(await send(p, '/short')).toEqual({ status: 200, body: 'short' });
    expect(closed).toBe(1);
  });

  it('refuses a header or path that would break the request head, and dispatch after close', async () => {
    const p = pool('http://127.0.0.1:9');
    const h: Dispatcher.DispatchHandler = {};
    expect(() => p.dispatch({ path: '/x', method: 'POST', headers: { a: 'b\r\nc: d' }, body: '' }, h)).toThrow(/invalid header/);
    expect(() => p.dispatch({ path: '/x y', method: 'POST', headers: {}, body: '' }, h)).toThrow(/invalid request path/);
    await p.close();
    expect(() => p.dispatch({ path: '/x', method: 'POST', headers: {}, body: '' }, h)).toThrow(/closed/);
    expect(() => new H1Pool('https://127.0.0.1:1', { connections: 1 })).toThrow(/plain http only/);
  });

  it('an idle pool never keeps the process alive (a script that forgets close() still exits)', async () => {
    const { origin } = await httpServer((_q, res) => res.end('bye'));
    const script =
      `${tsxImportExpr(`${process.cwd()}/src/client/h1-pool.ts`)}.then(({ H1Pool }) => {` +
      `const p = new H1Pool(${JSON.stringify(origin)}, { connections: 1 });` +
      `p.dispatch({ path: '/', method: 'POST', headers: {}, body: '' }, { onResponseEnd: () => console.log('ended') }); })`;
    // Not spawnSync: this process's server must answer meanwhile. A child still running at 20 s is killed, and fails.
    const r = await promisify(execFile)(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('ended');
  }, 30_000);
});
