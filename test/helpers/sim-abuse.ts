/**
 * Drivers for abusing a running simulator (test/sim-abuse.test.ts, bench/soak.ts): a
 * streaming request whose token gaps are recorded, a /health poller, big raw POST bodies,
 * the simulator's resident memory, and clients that disconnect mid-stream. Plain `node:http`
 * on 127.0.0.1, nothing mocked.
 */
import { readFileSync } from 'node:fs';
import { request, type ClientRequest } from 'node:http';

/** The simulator process's resident memory from /proc/<pid>/status, MiB (Linux). */
export function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

/** POSTs `body` (JSON text) to `baseUrl + path`; resolves to the status and the reply text. */
export function postRaw(
  baseUrl: string,
  path: string,
  body: string | Buffer,
): Promise<{ status: number; text: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (b: Buffer) => parts.push(b));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8'), ms: performance.now() - t0 }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A stream being watched: SSE chunk times and the largest gap between two chunks. */
export interface WatchedStream {
  /** Chunks received so far. */
  readonly chunks: number;
  /** Largest gap between two consecutive chunks so far, ms. */
  readonly worstGapMs: number;
  /** Resolves once the first chunk arrived. */
  readonly started: Promise<void>;
  /** Disconnect (the server sees an abort). */
  stop(): void;
}

/** Opens a long streamed chat completion (`maxTokens` with `ignore_eos`) and records its chunk gaps. */
export function watchStream(baseUrl: string, maxTokens = 20000): WatchedStream {
  let chunks = 0;
  let worst = 0;
  let last = 0;
  let onFirst!: () => void;
  const started = new Promise<void>((r) => {
    onFirst = r;
  });
  const body = JSON.stringify({
    messages: [{ role: 'user', content: 'Tell me a long story.' }],
    max_tokens: maxTokens,
    ignore_eos: true,
    stream: true,
  });
  const req: ClientRequest = request(
    `${baseUrl}/v1/chat/completions`,
    { method: 'POST', headers: { 'content-type': 'application/json' } },
    (res) => {
      res.on('data', () => {
        const t = performance.now();
        if (chunks > 0) worst = Math.max(worst, t - last);
        last = t;
        if (++chunks === 1) onFirst();
      });
      res.on('error', () => undefined);
    },
  );
  req.on('error', () => undefined);
  req.end(body);
  return {
    get chunks() {
      return chunks;
    },
    get worstGapMs() {
      return worst;
    },
    started,
    stop() {
      req.destroy();
    },
  };
}

/** Polls `GET /health` back to back (one at a time, `pauseMs` apart) and records each latency. */
export function watchHealth(
  baseUrl: string,
  pauseMs = 20,
): { readonly latencies: number[]; readonly failures: number; stop(): Promise<void> } {
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const once = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = request(`${baseUrl}/health`, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(performance.now() - t0);
          else failures++;
          resolve();
        });
      });
      req.on('error', () => {
        failures++;
        resolve();
      });
      req.end();
    });
  const loop = (async () => {
    while (running) {
      await once();
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  })();
  return {
    latencies,
    get failures() {
      return failures;
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

/** Starts `n` streams and drops each after its first chunk; resolves when all were dropped. */
export async function disconnectMidStream(baseUrl: string, n: number): Promise<void> {
  const streams = Array.from({ length: n }, () => watchStream(baseUrl, 500));
  await Promise.all(streams.map((s) => s.started.then(() => s.stop())));
}

/** Reads one unlabelled or first-matching series' value from `/metrics`. */
export async function metricValue(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  if (!line) throw new Error(`${name} is not on /metrics`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}
