/**
 * `loadlab run --header` behind a gateway that wants a header on every route (issue #15): the
 * header reaches the target check (`/v1/models`, `/version`, `/metrics`), the prompt sizing and the
 * preflight (`/tokenize`), the `/metrics` sampler and the generation requests; without it the run
 * stops before any load with a message naming `--header`. Real HTTP to a scripted server.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../src/cli/run';
import { API_KEY_ENV } from '../src/client/url';
import { startSimLatenessWatch } from '../src/runner/health';
import { runLoad } from '../src/runner/runner';
import { burst } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';
import { capture } from './helpers/cli-io';

const GATE = { header: 'X-Gateway-Key', value: 'gw-secret-7f3a' };

let tmp: string;
let server: ScriptedServer;
const savedEnv: Record<string, string | undefined> = {};
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-gateway-'));
  // A request takes ≈ 30 + 4 × 20 ms, so the run outlives a /metrics scrape.
  server = await startScriptedServer({ firstTokenDelayMs: 30, gapMs: 20, tokens: 5, gateway: GATE });
  for (const k of API_KEY_ENV) {
    savedEnv[k] = process.env[k];
    delete process.env[k];
  }
});
afterAll(async () => {
  for (const k of API_KEY_ENV) if (savedEnv[k] !== undefined) process.env[k] = savedEnv[k];
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const load = ['--max-concurrency', '1', '--num-prompts', '3', '--max-tokens', '5', '--quiet'];

describe('--header reaches every call a run makes to the target', () => {
  it('probe, /tokenize, /metrics sampler and requests all carry it; the value never reaches disk', {
    timeout: 60_000,
  }, async () => {
    const before = (await server.stats()).access.length;
    const out = join(tmp, 'with');
    const { out: o, io } = capture();
    const argv = ['--base-url', server.url, '--header', `${GATE.header}=${GATE.value}`, ...load];
    const code = await runCommand([...argv, '--prompt-tokens', '40', '--metrics-interval', '50', '--out', out], io);
    expect(o.stderr).toBe('');
    expect(code).toBe(0);

    const seen = (await server.stats()).access.slice(before);
    const paths = new Set(seen.map((a) => `${a.method} ${a.path}`));
    for (const p of ['GET /v1/models', 'GET /version', 'GET /metrics', 'POST /tokenize', 'POST /v1/chat/completions']) {
      expect(paths).toContain(p);
    }
    expect(seen.filter((a) => a.headers['x-gateway-key'] !== GATE.value)).toEqual([]);

    const manifest = readFileSync(join(out, 'manifest.json'), 'utf8');
    const m = JSON.parse(manifest);
    expect(m.workload.headerNames).toEqual(['x-gateway-key']);
    expect(m.notes[0]).toBe('prompt of 40 tokens (tokenize)'); // counted behind the gateway, not estimated
    expect(m.target.model).toBe('scripted');
    // The sampler's scrapes got through: samples only come from 200 answers.
    expect(readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').length).toBeGreaterThan(0);
    for (const f of ['manifest.json', 'requests.jsonl', 'summary.json']) {
      expect(readFileSync(join(out, f), 'utf8')).not.toContain(GATE.value);
    }
  });

  it('without it the run stops before any load, naming --header (with or without --model)', { timeout: 60_000 }, async () => {
    for (const extra of [[], ['--model', 'scripted']]) {
      const before = (await server.stats()).access.length;
      const out = join(tmp, `without${extra.length}`);
      const { out: o, io } = capture();
      const code = await runCommand(['--base-url', server.url, ...load, ...extra, '--out', out], io);
      expect(code).toBe(1);
      expect(o.stderr).toContain(`${server.url} wants an API key (HTTP 403 on GET /v1/models)`);
      expect(o.stderr).toContain('--header KEY=VALUE');
      const seen = (await server.stats()).access.slice(before);
      expect(seen.filter((a) => a.path.startsWith('/v1/chat'))).toEqual([]);
      expect(existsSync(join(out, 'requests.jsonl'))).toBe(false);
    }
  });

  it("runLoad's headers option does the same for the library", { timeout: 60_000 }, async () => {
    const before = (await server.stats()).access.length;
    const r = await runLoad({
      baseUrl: server.url,
      headers: { [GATE.header]: GATE.value },
      workload: [makeRequest('hello', { maxTokens: 2 })],
      shape: burst(2),
      sampleMetrics: 50,
      out: false,
      abortOnSigint: false,
    });
    expect(r.summary.completed).toBe(2);
    const seen = (await server.stats()).access.slice(before);
    expect(seen.length).toBeGreaterThanOrEqual(6); // 3 probes, /tokenize, 2 requests (+ scrapes)
    expect(seen.filter((a) => a.headers['x-gateway-key'] !== GATE.value)).toEqual([]);
    const err = await runLoad({
      baseUrl: server.url,
      model: 'scripted',
      workload: [makeRequest('hello', { maxTokens: 2 })],
      shape: burst(1),
      out: false,
      abortOnSigint: false,
    }).catch((e: Error) => e);
    expect(String(err)).toMatch(/HTTP 403 on GET \/v1\/models.*headers \(--header KEY=VALUE\)/);
  });

  it("the simulator's lateness watch scrapes /metrics with the run's headers too", async () => {
    const before = (await server.stats()).access.length;
    const watch = await startSimLatenessWatch(server.url, { auth: { headers: { [GATE.header]: GATE.value } } });
    await watch.finish();
    const seen = (await server.stats()).access.slice(before);
    expect(seen.map((a) => `${a.method} ${a.path} ${String(a.headers['x-gateway-key'])}`)).toEqual([
      `GET /metrics ${GATE.value}`,
      `GET /metrics ${GATE.value}`,
    ]);
  });
});
