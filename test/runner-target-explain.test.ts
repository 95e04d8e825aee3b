import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveTarget } from '../src/runner/target';

// A web app on the port a learner thought was vLLM: every path answers an HTML page.
let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/app/v1/models') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
      return;
    }
    if (req.url?.startsWith('/app')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>JupyterLab</title>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('resolveTarget says what is wrong with a base URL that lists no models (the library, not only the CLI)', () => {
  it('an HTML page: not a vLLM server, not "does it need an API key?"', async () => {
    const err = await resolveTarget(base).catch((e: Error) => e);
    expect(String(err)).toMatch(/HTML page/);
    expect(String(err)).not.toMatch(/API key/);
  });

  it('a base URL with a path: use the server root', async () => {
    const err = await resolveTarget(`${base}/app`).catch((e: Error) => e);
    expect(String(err)).toMatch(/has a path \(\/app\)/);
  });
});
