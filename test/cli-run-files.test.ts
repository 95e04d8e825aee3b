/**
 * `loadlab run` (the real bin/loadlab.js, as a child process) never loses or moves a user's files,
 * checks --out before talking to the server, and names the real cause of a bad target
 * (issue #17 items 5, 6, 9, 10).
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from './helpers/sse-server';
import { writeScriptedStream } from './helpers/sse-stream';

const BIN = join(__dirname, '..', 'bin', 'loadlab.js');
const KEY = 'sk-test-SECRET123';

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function loadlab(args: string[], env: Record<string, string | undefined> = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const childEnv = { ...process.env, LOADLAB_API_KEY: undefined, OPENAI_API_KEY: undefined, ...env };
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A vLLM-like server on port 0: `/v1/models`, `/tokenize` (1 token per character), streamed chat;
 * or HTML everywhere. With `key`, every route answers 401 `{"error":"Unauthorized"}` without it, as
 * vLLM's `--api-key` does for all but its public routes (vllm/entrypoints/openai/server_utils.py).
 */
function startServer(mode: {
  key?: string;
  html?: boolean;
}): Promise<{ url: string; seen: Array<{ path: string; auth: boolean }>; close: () => Promise<void> }> {
  const seen: Array<{ path: string; auth: boolean }> = [];
  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const url = req.url ?? '/';
    const auth = req.headers.authorization === `Bearer ${mode.key}`;
    seen.push({ path: `${req.method} ${url}`, auth });
    if (mode.html) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return void res.end('<!doctype html><html><body>Welcome to my router</body></html>');
    }
    const json = (status: number, v: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(v));
    };
    if (mode.key && !auth) return json(401, { error: 'Unauthorized' });
    if (url === '/v1/models') return json(200, { object: 'list', data: [{ id: 'm', object: 'model', max_model_len: 4096 }] });
    if (url === '/tokenize') {
      const b = JSON.parse(body) as { prompt?: string; messages?: Array<{ content: string }> };
      const n = b.prompt !== undefined ? [...b.prompt].length : (b.messages ?? []).reduce((k, m) => k + [...m.content].length, 0);
      return json(200, { count: n, max_model_len: 4096, tokens: [] });
    }
    if (url === '/v1/chat/completions') {
      return writeScriptedStream(
        req,
        res,
        { firstTokenDelayMs: 1, gapMs: 1, tokens: 3 },
        JSON.parse(body),
        performance.now(),
        undefined,
      );
    }
    json(404, { detail: 'Not Found' });
  };
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(parts).toString('utf8')));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        seen,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    }),
  );
}

const run = ['--max-concurrency', '1', '--num-prompts', '2', '--max-tokens', '3', '--quiet'];
let tmp: string;
let open: Awaited<ReturnType<typeof startServer>>;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-cli-files-'));
  open = await startServer({});
});
afterAll(async () => {
  await open?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const ls = (dir: string) => readdirSync(dir, { recursive: true }).map(String).sort();

describe("--out: the user's files are safe (items 5, 6)", () => {
  it("--replace overwrites a complete run's files only; the user's notes and plots stay", { timeout: 60_000 }, async () => {
    const out = join(tmp, 'replace');
    expect((await loadlab(['run', '--base-url', open.url, ...run, '--out', out])).code).toBe(0);
    const again = await loadlab(['run', '--base-url', open.url, ...run, '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already holds a complete run; pass --replace to overwrite it');
    writeFileSync(join(out, 'analysis.md'), '# notes');
    mkdirSync(join(out, 'plots'));
    writeFileSync(join(out, 'plots', 'p1.png'), 'png');
    const r = await loadlab(['run', '--base-url', open.url, ...run, '--out', out, '--replace']);
    expect(r.code).toBe(0);
    expect(ls(out)).toEqual(['analysis.md', 'manifest.json', 'plots', join('plots', 'p1.png'), 'requests.jsonl', 'summary.json']);
    expect(readFileSync(join(out, 'analysis.md'), 'utf8')).toBe('# notes');
  });

  it('never moves a folder that merely contains requests.jsonl; says where an incomplete run went', {
    timeout: 60_000,
  }, async () => {
    const project = join(tmp, 'project');
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'thesis.tex'), 'x');
    writeFileSync(join(project, 'requests.jsonl'), '{}\n');
    const r = await loadlab(['run', '--base-url', open.url, ...run, '--out', project]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'project is not empty and holds no LoadLab run (requests.jsonl, src, thesis.tex); LoadLab never deletes or moves such files',
    );
    expect(readdirSync(tmp).filter((n) => n.startsWith('project.incomplete'))).toEqual([]);
    expect(ls(project)).toEqual(['requests.jsonl', 'src', 'thesis.tex']);

    const half = join(tmp, 'half');
    mkdirSync(half);
    writeFileSync(join(half, 'manifest.json'), '{"schema":1,"runId":"x","status":"running"');
    writeFileSync(join(half, 'requests.jsonl'), '{"index":0}\n');
    const h = await loadlab(['run', '--base-url', open.url, ...run, '--out', half]);
    expect(h.code).toBe(0);
    const moved = readdirSync(tmp).filter((n) => n.startsWith('half.incomplete-'));
    expect(moved).toHaveLength(1);
    expect(h.stderr).toContain(
      `loadlab: ${half} held an incomplete run; moved its files to ${join(tmp, moved[0])} (nothing deleted)`,
    );
    expect(ls(join(tmp, moved[0]))).toEqual(['manifest.json', 'requests.jsonl']);
  });
});

describe('checked before any request, with the fix named (item 10)', () => {
  it('a --out that is a file fails before the server is contacted', async () => {
    const file = join(tmp, 'afile');
    writeFileSync(file, 'x');
    const port = await closedPort(); // nothing listens: a probe would say "Cannot reach"
    const r = await loadlab(['run', '--base-url', `http://127.0.0.1:${port}`, ...run, '--out', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file} is a file, not a folder; give the run a folder path`);
    expect(r.stderr).not.toMatch(/EEXIST|ENOTDIR|Cannot reach/);
    const sub = await loadlab(['run', '--base-url', `http://127.0.0.1:${port}`, ...run, '--out', join(file, 'x')]);
    expect(sub.stderr).toContain('part of its path is a file, not a folder');
  });

  it('--timeout-s past the timer limit is refused with the range, no Node warning', async () => {
    const r = await loadlab(['run', '--base-url', open.url, ...run, '--timeout-s', '3000000', '--out', join(tmp, 't')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "--timeout-s must be at most 2147483 s (about 24 days, the longest timer Node allows), got '3000000'",
    );
    expect(r.stderr).not.toContain('TimeoutOverflowWarning');
    const i = await loadlab(['run', '--base-url', open.url, ...run, '--idle-timeout-s', '1e9', '--out', join(tmp, 't')]);
    expect(i.stderr).toContain('--idle-timeout-s must be at most 2147483 s');
    expect(existsSync(join(tmp, 't'))).toBe(false);
  });

  it('a --base-url with a path is told to use the server root; an HTML server is told it is not vLLM', {
    timeout: 60_000,
  }, async () => {
    const p = await loadlab(['run', '--base-url', `${open.url}/api`, ...run, '--out', join(tmp, 'p')]);
    expect(p.code).toBe(1);
    expect(p.stderr).toContain(
      `the base URL has a path (/api), and ${open.url}/api/v1/models does not exist (HTTP 404); give the server root instead, e.g. ${open.url}`,
    );
    expect(p.stderr).not.toContain('API key');
    const html = await startServer({ html: true });
    try {
      const h = await loadlab(['run', '--base-url', html.url, ...run, '--out', join(tmp, 'h')]);
      expect(h.code).toBe(1);
      expect(h.stderr).toContain(`${html.url} answered GET /v1/models with an HTML page (HTTP 200), so it is not a vLLM server`);
      expect(h.stderr).not.toContain('API key');
    } finally {
      await html.close();
    }
  });
});

describe("--prompt-tokens uses the run's API key (item 9)", () => {
  let locked: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    locked = await startServer({ key: KEY });
  });
  afterAll(() => locked?.close());

  it('LOADLAB_API_KEY reaches /tokenize, so the length is counted, not estimated', { timeout: 60_000 }, async () => {
    const out = join(tmp, 'key-env');
    const r = await loadlab(['run', '--base-url', locked.url, ...run, '--prompt-tokens', '50', '--out', out], {
      LOADLAB_API_KEY: KEY,
    });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('estimated');
    const tok = locked.seen.filter((s) => s.path === 'POST /tokenize');
    expect(tok.length).toBeGreaterThan(0);
    expect(tok.every((s) => s.auth)).toBe(true);
    const m = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8'));
    expect(m.notes[0]).toBe('prompt of 50 tokens (tokenize)');
    expect(readFileSync(join(out, 'manifest.json'), 'utf8')).not.toContain(KEY);
  });

  it('without a key the fallback to an estimate is said, with the reason and the fix', { timeout: 60_000 }, async () => {
    const r = await loadlab([
      'run',
      '--base-url',
      locked.url,
      ...run,
      '--prompt-tokens',
      '50',
      '--model',
      'm',
      '--out',
      join(tmp, 'key-none'),
    ]);
    expect(r.stderr).toContain('prompt length is estimated, not counted');
    expect(r.stderr).toContain(
      'POST /tokenize answered 401: the server wants an API key; pass --api-key (apiKey) or set LOADLAB_API_KEY',
    );
  });
});
