import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startMetricsSampler } from '../src/observe/sampler';
import type { MetricsSample } from '../src/types';

/** A /metrics server whose counters grow per scrape; `behave(n)` can delay or fail scrape n. */
async function metricsServer(behave: (n: number) => { delayMs?: number; status?: number; body?: string } = () => ({})) {
  const stats = { scrapes: 0, inFlight: 0, maxInFlight: 0, afterStop: 0, stopped: false };
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') return res.writeHead(404).end();
    const n = stats.scrapes++;
    if (stats.stopped) stats.afterStop++;
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    const b = behave(n);
    setTimeout(() => {
      stats.inFlight--;
      res.writeHead(b.status ?? 200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(
        b.body ??
          `${[
            '# TYPE vllm:num_requests_running gauge',
            `vllm:num_requests_running{engine="0",model_name="m"} ${n % 4}`,
            '# TYPE vllm:generation_tokens_total counter',
            `vllm:generation_tokens_total{engine="0",model_name="m"} ${100 * n}.0`,
            '# TYPE vllm:kv_cache_usage_perc gauge',
            `vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.${n % 10}`,
          ].join('\n')}\n`,
      );
    }, b.delayMs ?? 0);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stats, close };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), 'loadlab-sampler-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('startMetricsSampler', () => {
  it('samples on the run clock, in order, and appends whole JSON lines', async () => {
    const srv = await metricsServer();
    const origin = performance.now();
    const file = join(dir, 'run1', 'metrics.jsonl');
    const seen: MetricsSample[] = [];
    const sampler = startMetricsSampler({
      baseUrl: `${srv.baseUrl}/v1/`,
      intervalMs: 40,
      now: () => performance.now() - origin,
      file,
      onSample: (s) => seen.push(s),
    });
    await sleep(400);
    const samples = await sampler.stop();
    srv.stats.stopped = true;
    await sleep(150);
    await srv.close();

    expect(samples.length).toBeGreaterThanOrEqual(4);
    expect(seen).toEqual(samples);
    for (let i = 1; i < samples.length; i++) expect(samples[i].tMs).toBeGreaterThan(samples[i - 1].tMs);
    expect(samples[0].tMs).toBeGreaterThanOrEqual(0);
    expect(samples[0]).toMatchObject({ running: 0, generationTokensTotal: 0, kvUsage: 0 });
    expect(samples[1].generationTokensTotal).toBe(100);
    expect(sampler.failures).toBe(0);
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual(samples);
    expect(srv.stats.afterStop).toBe(0); // nothing scraped once stop() resolved
  });

  it('never overlaps scrapes, even when one takes longer than the interval', async () => {
    const srv = await metricsServer((n) => ({ delayMs: n % 2 === 0 ? 90 : 5 }));
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const sampler = startMetricsSampler({ baseUrl: srv.baseUrl, intervalMs: 20 });
    await sleep(400);
    await sampler.stop(); // stops in the middle of a slow scrape half the time
    expect(timers()).toBeLessThanOrEqual(before); // no timer left behind
    await srv.close();
    expect(srv.stats.maxInFlight).toBe(1);
    expect(sampler.samples.length).toBeGreaterThanOrEqual(3);
  });

  it('counts and skips failed scrapes (HTTP 500, bad text, timeout) and keeps going', async () => {
    const srv = await metricsServer((n) =>
      n === 1 ? { status: 500, body: 'boom' } : n === 2 ? { body: 'not{ prometheus' } : n === 3 ? { delayMs: 300 } : {},
    );
    const errors: string[] = [];
    const sampler = startMetricsSampler({
      baseUrl: srv.baseUrl,
      intervalMs: 20,
      timeoutMs: 100,
      onError: (e) => errors.push(e.message),
    });
    await sleep(450);
    await sampler.stop();
    await srv.close();
    expect(sampler.failures).toBe(3);
    expect(errors[0]).toMatch(/HTTP 500/);
    expect(errors[1]).toMatch(/Prometheus text, line 1/);
    expect(errors[2]).toMatch(/timed out after 100 ms/);
    expect(sampler.samples.length).toBeGreaterThanOrEqual(2);
    expect(sampler.samples[0].generationTokensTotal).toBe(0);
    expect(sampler.samples[1].generationTokensTotal).toBe(400);
  });

  it('survives a server that is not there, and stop() is idempotent', async () => {
    const srv = await metricsServer();
    await srv.close(); // the port is now closed
    const sampler = startMetricsSampler({ baseUrl: srv.baseUrl, intervalMs: 20 });
    await sleep(120);
    const a = sampler.stop();
    expect(sampler.stop()).toBe(a);
    expect(await a).toEqual([]);
    expect(sampler.failures).toBeGreaterThanOrEqual(2);
    expect(sampler.lastError).toMatch(/connection refused/);
  });

  it('rejects a bad interval or URL with the rule', () => {
    expect(() => startMetricsSampler({ baseUrl: 'http://127.0.0.1:1', intervalMs: 0 })).toThrow(/intervalMs must be > 0/);
    expect(() => startMetricsSampler({ baseUrl: '127.0.0.1:8000' })).toThrow(
      /baseUrl must be an http\(s\) URL such as http:\/\/127\.0\.0\.1:8000/,
    );
  });
});
