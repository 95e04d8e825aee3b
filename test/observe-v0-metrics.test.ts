import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpGet } from '../src/client/http-get';
import { recordEffectiveConfig } from '../src/observe/effective-config';
import { detectEngine } from '../src/observe/engine';
import { readHistogram } from '../src/observe/histogram';
import { findFamily, parsePrometheus, pickSamples } from '../src/observe/prometheus';
import { startMetricsSampler } from '../src/observe/sampler';
import { toMetricsSample } from '../src/observe/vllm-metrics';

// A V0 vLLM's /metrics, written from `Metrics` in vllm/engine/metrics.py (see fixtures/vllm-wire/v0.6/README.md).
const FIXTURE = readFileSync(join(__dirname, 'fixtures', 'vllm-wire', 'v0.6', 'metrics.txt'), 'utf8');
const MODEL = 'Qwen2.5-7B-Instruct-GPTQ-Int4';

/** A tiny V0 vLLM stand-in: the fixture at /metrics, `/version` and `/v1/models` as vLLM 0.6 answers them. */
async function v0Server() {
  let scrapes = 0;
  const server: Server = createServer((req, res) => {
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/metrics') {
      scrapes++;
      return res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(FIXTURE);
    }
    if (req.url === '/version') return json({ version: '0.6.6' });
    if (req.url === '/v1/models')
      return json({
        object: 'list',
        data: [
          { id: MODEL, object: 'model', created: 1764730321, owned_by: 'vllm', root: MODEL, parent: null, max_model_len: 4096 },
        ],
      });
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close, scrapes: () => scrapes };
}

let srv: Awaited<ReturnType<typeof v0Server>>;
const dir = mkdtempSync(join(tmpdir(), 'loadlab-v0-'));
beforeAll(async () => {
  srv = await v0Server();
});
afterAll(async () => {
  await srv.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The fixture as a reader sees it: fetched over real HTTP, then parsed. */
async function scrape() {
  const res = await httpGet(`${srv.baseUrl}/metrics`, { timeoutMs: 5000 });
  expect(res.status).toBe(200);
  return parsePrometheus(res.text);
}

describe('a V0 vLLM /metrics (0.6.x)', () => {
  it('parses: families, types, model_name labels, counters with _total, histogram buckets', async () => {
    const fams = await scrape();
    expect(findFamily(fams, 'vllm:num_requests_swapped')?.type).toBe('gauge');
    expect(findFamily(fams, 'vllm:num_preemptions_total')?.type).toBe('counter');
    expect(findFamily(fams, 'vllm:time_to_first_token_seconds')?.type).toBe('histogram');
    // Every vllm: sample carries model_name (PrometheusStatLogger's labels) and no engine label (V1 only).
    for (const f of fams.filter((x) => x.name.startsWith('vllm:') && x.name !== 'vllm:cache_config_info'))
      for (const s of f.samples) {
        expect(s.labels.model_name).toBe(MODEL);
        expect(s.labels.engine).toBeUndefined();
      }
    // Families with no samples yet (spec decode without a draft model) still parse, empty.
    expect(findFamily(fams, 'vllm:spec_decode_efficiency')?.samples).toEqual([]);
    const ttft = readHistogram(fams, 'vllm:time_to_first_token_seconds', { model_name: MODEL });
    expect(ttft?.le).toEqual([0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, Infinity]);
    expect(ttft?.counts.at(-1)).toBe(ttft?.count);
    for (let i = 1; i < (ttft?.counts.length ?? 0); i++) expect(ttft?.counts[i]).toBeGreaterThanOrEqual(ttft?.counts[i - 1] ?? 0);
    expect(pickSamples(fams, 'vllm:request_success_total').map((s) => s.labels.finished_reason)).toEqual(['length', 'stop']);
    // vLLM calls prometheus_client.disable_created_metrics(): no _created series.
    expect(fams.some((f) => f.samples.some((s) => s.name.endsWith('_created')))).toBe(false);
  });

  it('maps to a MetricsSample: running, waiting, swapped, KV usage from gpu_cache_usage_perc, preemptions', async () => {
    const fams = await scrape();
    // V0 has no prefix-cache counters, so prefixQueriesTotal/prefixHitsTotal stay absent (never guessed).
    expect(toMetricsSample(fams, 42)).toEqual({
      tMs: 42,
      running: 6,
      waiting: 2,
      swapped: 1,
      kvUsage: 0.8125,
      preemptionsTotal: 3,
      promptTokensTotal: 48210,
      generationTokensTotal: 15377,
    });
    expect(toMetricsSample(fams, 0, { labels: { model_name: MODEL } }).running).toBe(6);
    expect(toMetricsSample(fams, 0, { labels: { model_name: 'other' } })).toEqual({ tMs: 0 });
  });

  it('is detected as V0, from its metrics alone and through the effective config', async () => {
    const fams = await scrape();
    expect(detectEngine(fams, undefined, false)).toEqual({ engine: 'V0', evidence: 'V0-only metrics present' });
    expect(detectEngine(fams, '0.6.6', false).engine).toBe('V0');
    const cfg = await recordEffectiveConfig(srv.baseUrl);
    expect(cfg).toMatchObject({ reachable: true, version: '0.6.6', engine: 'V0', kind: 'vllm', simulated: false });
    expect(cfg.models[0]).toMatchObject({ id: MODEL, maxModelLen: 4096 });
    expect(cfg.cache).toMatchObject({ numGpuBlocks: 4096, blockSize: 16, kvCapacityTokens: 65536, enablePrefixCaching: false });
    expect(cfg.startedAtS).toBe(1764730321.45);
    expect(cfg.problems).toEqual([]);
  });

  it('startMetricsSampler writes V0 samples with those fields to metrics.jsonl', async () => {
    const file = join(dir, 'metrics.jsonl');
    let t = 0;
    const sampler = startMetricsSampler({ baseUrl: `${srv.baseUrl}/v1`, intervalMs: 20, now: () => (t += 10), file });
    const before = srv.scrapes();
    await new Promise<void>((r) => {
      const poll = setInterval(() => {
        if (sampler.samples.length >= 2 || sampler.failures > 0) {
          clearInterval(poll);
          r();
        }
      }, 10);
    });
    const samples = await sampler.stop();
    expect(sampler.failures).toBe(0);
    expect(srv.scrapes() - before).toBeGreaterThanOrEqual(samples.length);
    expect(samples.length).toBeGreaterThanOrEqual(2);
    for (const s of samples)
      expect(s).toMatchObject({ running: 6, waiting: 2, swapped: 1, kvUsage: 0.8125, preemptionsTotal: 3 });
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual(samples);
  });
});
