/**
 * The scripted server's gateway mode ({@link ServerConfig.gateway} in `sse-server.ts`): an API
 * gateway in front of a vLLM-shaped server that refuses every request without its header, on every
 * route a run calls (`/v1/models`, `/version`, `/metrics`, `/tokenize`, the generation routes,
 * `/health`). In this mode the server also answers `/version`, `/metrics` and `/tokenize`, so a
 * test can check that each of them got the header. Real HTTP; nothing here is mocked.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';

/** A header the gateway wants on every request. */
export interface Gateway {
  /** Header name (any case; Node lower-cases incoming names). */
  header: string;
  value: string;
  /** Status of a refusal; default 403 (an API gateway's "forbidden"). */
  status?: 401 | 403;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A small `/metrics` text in vLLM's names (one engine), with the live running count. */
function metricsText(running: number): string {
  return [
    '# HELP vllm:num_requests_running Number of requests in model execution batches.',
    '# TYPE vllm:num_requests_running gauge',
    `vllm:num_requests_running{engine="0",model_name="scripted"} ${running}`,
    '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
    '# TYPE vllm:num_requests_waiting gauge',
    'vllm:num_requests_waiting{engine="0",model_name="scripted"} 0',
    '',
  ].join('\n');
}

/**
 * Answer `req` if the gateway decides it: a refusal (`{"error": "..."}` with the gateway's status)
 * when the header is missing or wrong, else `/version`, `/metrics` or `/tokenize` (1 token per
 * character, `max_model_len` 4096). Returns false for anything the server itself should answer.
 */
export function gatewayAnswer(req: IncomingMessage, res: ServerResponse, gw: Gateway, running: () => number): boolean {
  const url = req.url ?? '/';
  if (req.headers[gw.header.toLowerCase()] !== gw.value) {
    json(res, gw.status ?? 403, { error: `the gateway wants the ${gw.header} header` });
    return true;
  }
  if (req.method === 'GET' && url === '/version') {
    json(res, 200, { version: 'scripted' });
    return true;
  }
  if (req.method === 'GET' && url === '/metrics') {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
    res.end(metricsText(running()));
    return true;
  }
  if (req.method === 'POST' && url === '/tokenize') {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const b = JSON.parse(Buffer.concat(parts).toString('utf8')) as { prompt?: string; messages?: Array<{ content: string }> };
      const n = b.prompt !== undefined ? [...b.prompt].length : (b.messages ?? []).reduce((k, m) => k + [...m.content].length, 0);
      json(res, 200, { count: n, max_model_len: 4096, tokens: [] });
    });
    return true;
  }
  return false;
}
