/**
 * The simulator's floor (bench/sim-yardstick.ts): a minimal HTTP server that writes FIXED chunk
 * bytes (captured from the simulator: its role chunk, one token chunk, its usage chunk) to every
 * open stream on one step loop: one timer for all streams, absolute due times every `gapMs`, one
 * `write` per stream per step (`res.write`, or with `socketWrites` one framed chunk straight to the socket, as the
 * simulator writes), `max_tokens` token chunks, then the usage chunk and `[DONE]`.
 * No engine, no JSON serialising, no metrics. It runs in its own process, started by
 * `spawnChild` (src/proc/child.ts) with the env `LOADLAB_BARE_WRITER` = JSON
 * `{role, token, usage, gapMs}`; ready line `LOADLAB_BARE_WRITER_LISTENING <port>`.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { watchParent } from '../src/proc/child';
import { chunkFrame } from '../src/sim/http/chunk-socket';

/** Ready-line marker. */
export const BARE_WRITER_MARKER = 'LOADLAB_BARE_WRITER_LISTENING';

/** What the bare writer sends (whole SSE events, `data: …\n\n`) and its step gap, ms. */
export interface BareWriterConfig {
  role: string;
  token: string;
  usage: string;
  gapMs: number;
  /**
   * Write each chunk to the socket itself, framed as one HTTP chunk (`chunkFrame`, as the simulator writes streamed
   * events), instead of through `res.write`. Default false: `res.write`, Node's own framing.
   */
  socketWrites?: boolean;
}

interface Stream {
  res: ServerResponse;
  left: number;
  first: boolean;
}

function main(cfg: BareWriterConfig): void {
  const streams = new Set<Stream>();
  let due = 0;
  let written = 0;
  const tick = () => {
    for (const s of streams) {
      if (s.res.destroyed) {
        streams.delete(s);
        continue;
      }
      s.left--;
      written++;
      const text = s.first ? cfg.role + cfg.token : cfg.token;
      s.first = false;
      if (s.left > 0) {
        if (cfg.socketWrites && s.res.socket) s.res.socket.write(chunkFrame(text));
        else s.res.write(text);
      } else {
        s.res.end(`${text}${cfg.usage}data: [DONE]\n\n`);
        streams.delete(s);
      }
    }
    if (streams.size === 0) return void (due = 0);
    due += cfg.gapMs;
    setTimeout(tick, Math.max(0, due - performance.now()));
  };
  const server = createServer((req, res) => {
    if (req.url === '/count') return void res.end(String(written)); // token chunks written so far
    const parts: Buffer[] = [];
    req.on('data', (b: Buffer) => parts.push(b));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { max_tokens?: number };
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      res.flushHeaders();
      streams.add({ res, left: Math.max(1, body.max_tokens ?? 16), first: true });
      if (due === 0) {
        due = performance.now() + cfg.gapMs;
        setTimeout(tick, cfg.gapMs);
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
    process.stdout.write(`${BARE_WRITER_MARKER} ${(server.address() as AddressInfo).port}\n`);
  });
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  watchParent(stop);
}

const env = process.env.LOADLAB_BARE_WRITER;
if (env !== undefined) main(JSON.parse(env) as BareWriterConfig);
