/**
 * `/metrics` per vLLM generation: the conformance fixtures in test/fixtures/vllm-wire/<gen>/metrics.txt
 * (each README names the vLLM file and commit it follows), the simulator started with `--vllm-version`
 * for each generation, and LoadLab's readers (parser, sample mapping, engine detection, effective
 * config, probe, sampler) on every fixture, all over real HTTP on 127.0.0.1.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recordEffectiveConfig } from '../src/observe/effective-config';
import { detectEngine } from '../src/observe/engine';
import { readHistogram } from '../src/observe/histogram';
import { probeTarget } from '../src/observe/probe';
import { findFamily, parsePromFloat, parsePrometheus, pickValue, type MetricFamily } from '../src/observe/prometheus';
import { startMetricsSampler } from '../src/observe/sampler';
import { sampleLines, toMetricsSample } from '../src/observe/vllm-metrics';
import { resolveEngineConfig } from '../src/sim/engine/config';
import type { EngineStats, StepInfo } from '../src/sim/engine/types';
import { SimMetrics } from '../src/sim/http/metrics';
import { type RunningSim, serveSim } from '../src/sim/serve';
import { parseServeArgs } from '../src/vllm/flags';

const GENS = [
  { id: 'v0.6', version: '0.6.6', engine: 'V0' },
  { id: 'v0.10', version: '0.10.2', engine: 'V1' },
  { id: 'v0.19', version: '0.19.0', engine: 'V1' },
] as const;
const fixture = (id: string) => readFileSync(join(__dirname, 'fixtures', 'vllm-wire', id, 'metrics.txt'), 'utf8');

/** A family's shape: type, label names (`le` aside) and histogram bounds; values and times left out. */
interface Shape {
  type: string;
  labels: string[];
  le: string[];
}

/** The `vllm:` families of a scrape by name, `_created` samples and families aside (prometheus_client versions differ there). */
function shapes(fams: readonly MetricFamily[]): Map<string, Shape> {
  const out = new Map<string, Shape>();
  for (const f of fams) {
    if (!f.name.startsWith('vllm:') || f.name.endsWith('_created')) continue;
    const samples = f.samples.filter((s) => !s.name.endsWith('_created'));
    const labels = new Set(samples.flatMap((s) => Object.keys(s.labels)).filter((k) => k !== 'le'));
    const le = new Set(samples.filter((s) => s.labels.le !== undefined).map((s) => String(parsePromFloat(s.labels.le))));
    out.set(f.name, { type: f.type, labels: [...labels].sort(), le: [...le] });
  }
  return out;
}

const sims: RunningSim[] = [];
const servers: Server[] = [];
const dir = mkdtempSync(join(tmpdir(), 'loadlab-metrics-gen-'));
afterAll(async () => {
  for (const s of sims) await s.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A simulator of generation `version`, with a few finished requests (one prompt sent twice: its second
 * run hits the prefix cache). `--max-model-len 4096` as in the fixtures (the 1-2-5 token buckets end there).
 */
async function loadedSim(version: string): Promise<{ sim: RunningSim; prompts: number }> {
  const argv = ['--port', '0', '--stats-interval-s', '0', '--max-model-len', '4096', '--vllm-version', version];
  const sim = await serveSim(parseServeArgs(argv), () => {});
  sims.push(sim);
  const long = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
  const prompts = [long, long, 'Say hello.', 'Count to three.'];
  const model = ((await (await fetch(`${sim.url}/v1/models`)).json()) as { data: { id: string }[] }).data[0].id;
  for (const prompt of prompts) {
    const res = await fetch(`${sim.url}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, prompt, max_tokens: 5, ignore_eos: true }),
    });
    expect(res.status).toBe(200);
    await res.json();
  }
  return { sim, prompts: prompts.length };
}

async function scrape(url: string): Promise<MetricFamily[]> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return parsePrometheus(await res.text());
}

describe.each(GENS)('simulator --vllm-version $version against fixtures/vllm-wire/$id/metrics.txt', (gen) => {
  it('serves the same vllm: families, types, label names and bucket bounds', async () => {
    const { sim } = await loadedSim(gen.version);
    const got = shapes(await scrape(sim.url));
    const want = shapes(parsePrometheus(fixture(gen.id)));
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [name, w] of want) {
      const g = got.get(name)!;
      expect({ name, type: g.type, le: g.le }).toEqual({ name, type: w.type, le: w.le });
      // cache_config_info: the simulator shows a subset of the CacheConfig fields a real server shows.
      if (name === 'vllm:cache_config_info') for (const l of g.labels) expect(w.labels, l).toContain(l);
      else expect({ name, labels: g.labels }).toEqual({ name, labels: w.labels });
    }
  }, 60_000);
});

describe('the new V1 series after a load (simulator --vllm-version 0.19)', () => {
  it('count every request, split prompt tokens into computed + cached, and sum waiting by reason', async () => {
    const { sim, prompts } = await loadedSim('0.19');
    const fams = await scrape(sim.url);
    const v = (name: string, labels?: Record<string, string>) => pickValue(fams, name, labels);
    for (const h of [
      'vllm:request_prefill_time_seconds',
      'vllm:request_inference_time_seconds',
      'vllm:request_time_per_output_token_seconds',
      'vllm:request_prefill_kv_computed_tokens',
    ])
      expect(readHistogram(fams, h)?.count, h).toBe(prompts);
    const prefill = readHistogram(fams, 'vllm:request_prefill_time_seconds')!;
    const inference = readHistogram(fams, 'vllm:request_inference_time_seconds')!;
    expect(prefill.sum).toBeGreaterThan(0);
    expect(inference.sum).toBeGreaterThanOrEqual(prefill.sum);
    // 5 tokens each: decode time / 4 per request, one sample per request.
    expect(readHistogram(fams, 'vllm:request_time_per_output_token_seconds')!.sum).toBeGreaterThan(0);

    const promptTotal = v('vllm:prompt_tokens_total')!;
    const computed = v('vllm:prompt_tokens_by_source_total', { source: 'local_compute' })!;
    const hit = v('vllm:prompt_tokens_by_source_total', { source: 'local_cache_hit' })!;
    expect(v('vllm:prompt_tokens_by_source_total', { source: 'external_kv_transfer' })).toBe(0);
    expect(computed + hit).toBe(promptTotal);
    expect(hit).toBeGreaterThan(0); // the repeated prompt
    expect(v('vllm:prompt_tokens_cached_total')).toBe(hit);
    expect(hit).toBe(v('vllm:prefix_cache_hits_total'));
    expect(readHistogram(fams, 'vllm:request_prefill_kv_computed_tokens')!.sum).toBe(computed);

    const waiting = v('vllm:num_requests_waiting')!;
    expect(
      v('vllm:num_requests_waiting_by_reason', { reason: 'capacity' })! +
        v('vllm:num_requests_waiting_by_reason', { reason: 'deferred' })!,
    ).toBe(waiting);
    expect(v('vllm:engine_sleep_state', { sleep_state: 'awake' })).toBe(1);
    expect(findFamily(fams, 'vllm:gpu_cache_usage_perc')).toBeUndefined(); // removed in 0.12 (#29330)
    const successes = fams
      .find((f) => f.name === 'vllm:request_success_total')!
      .samples.filter((s) => !s.name.endsWith('_created'));
    expect(successes.reduce((a, s) => a + s.value, 0)).toBe(prompts);
  }, 60_000);

  it('0.10 still has gpu_cache_usage_perc (same value as kv_cache_usage_perc) and 0.6 has V0 names without an engine label', async () => {
    const { sim: s10 } = await loadedSim('0.10.2');
    const f10 = await scrape(s10.url);
    expect(pickValue(f10, 'vllm:gpu_cache_usage_perc')).toBe(pickValue(f10, 'vllm:kv_cache_usage_perc'));
    expect(readHistogram(f10, 'vllm:time_per_output_token_seconds')?.count).toBe(
      readHistogram(f10, 'vllm:inter_token_latency_seconds')?.count,
    );
    const { sim: s6, prompts } = await loadedSim('0.6');
    const f6 = await scrape(s6.url);
    expect(detectEngine(f6, '0.6.6', false).engine).toBe('V0');
    expect(toMetricsSample(f6, 0)).toMatchObject({ running: 0, waiting: 0, swapped: 0, generationTokensTotal: 5 * prompts });
    expect(f6.some((f) => f.samples.some((s) => s.name.endsWith('_created')))).toBe(false);
  }, 60_000);
});

/** A tiny vLLM stand-in serving a fixture at /metrics, with `/version` and `/v1/models` as vLLM answers them. */
async function fixtureServer(text: string, version: string): Promise<string> {
  const server = createServer((req, res) => {
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/metrics')
      return res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }).end(text);
    if (req.url === '/version') return json({ version });
    if (req.url === '/v1/models') {
      const model = 'Qwen2.5-7B-Instruct-GPTQ-Int4';
      return json({
        object: 'list',
        data: [
          { id: model, object: 'model', created: 1764730321, owned_by: 'vllm', root: model, parent: null, max_model_len: 4096 },
        ],
      });
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe.each(GENS)('LoadLab readers on fixtures/vllm-wire/$id/metrics.txt', (gen) => {
  it('parser, sample mapping, engine detection, effective config, probe and sampler read it', async () => {
    const url = await fixtureServer(fixture(gen.id), gen.version);
    const fams = await scrape(url);
    const sample = toMetricsSample(fams, 7);
    for (const k of ['running', 'waiting', 'kvUsage', 'preemptionsTotal', 'promptTokensTotal', 'generationTokensTotal'] as const)
      expect(sample[k], k).toBeTypeOf('number');
    if (gen.engine === 'V1') expect(sample.prefixHitsTotal).toBeTypeOf('number');
    else expect(sample.swapped).toBeTypeOf('number');
    expect(readHistogram(fams, 'vllm:time_to_first_token_seconds')?.count).toBeGreaterThan(0);
    expect(detectEngine(fams, undefined, false).engine).toBe(gen.engine);

    const cfg = await recordEffectiveConfig(url);
    expect(cfg).toMatchObject({ reachable: true, version: gen.version, engine: gen.engine, kind: 'vllm', simulated: false });
    expect(cfg.cache?.blockSize).toBe(16);
    expect(cfg.cache?.numGpuBlocks).toBeGreaterThan(0);
    expect(cfg.problems).toEqual([]);
    const probe = await probeTarget(url);
    expect(probe).toMatchObject({ reachable: true, serverVersion: gen.version, engine: gen.engine, maxModelLen: 4096 });

    const file = join(dir, `${gen.id}-metrics.jsonl`);
    let t = 0;
    const sampler = startMetricsSampler({ baseUrl: `${url}/v1`, intervalMs: 20, now: () => (t += 10), file });
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
    // the sampler parses only the lines a sample reads: the same sample, from a fraction of the text
    const { tMs: _, ...fields } = sample;
    for (const s of samples) expect({ ...s, tMs: 7 }).toEqual({ ...fields, tMs: 7 });
    expect(toMetricsSample(parsePrometheus(sampleLines(fixture(gen.id))), 7)).toEqual(sample);
    expect(sampleLines(fixture(gen.id)).length).toBeLessThan(fixture(gen.id).length / 3);
  }, 30_000);
});

describe('SimMetrics gauges per generation (no server, no clock)', () => {
  const stats: EngineStats = {
    ...{ running: 4, waiting: 5, kvUsage: 0.75, numPreemptions: 2, promptTokens: 900, generationTokens: 300 },
    ...{
      prefixCacheQueries: 900,
      prefixCacheHits: 320,
      steps: 40,
      resyncs: 1,
      swapOutBlocks: 12,
      swapInBlocks: 4,
      swapped: 2,
      cpuKvUsage: 0.25,
    },
  };
  const config = resolveEngineConfig({ maxModelLen: 4096, preemptionMode: 'swap' });
  const facts = { modelName: 'm', config, gpuMemoryUtilization: 0.9, profile: 'p', vllmVersion: 'x' };

  it('V0 (0.6) splits swapped requests out of waiting and shows CPU swap usage', () => {
    const fams = parsePrometheus(new SimMetrics({ ...facts, generation: 'v0.6' }).render(stats));
    expect(toMetricsSample(fams, 0)).toMatchObject({ running: 4, waiting: 3, swapped: 2, kvUsage: 0.75, preemptionsTotal: 2 });
    expect(pickValue(fams, 'vllm:cpu_cache_usage_perc')).toBe(0.25);
    expect(cacheLabels(fams).swap_space_bytes).toBe(String(4 * 2 ** 30));
  });

  it("sampleLines keeps all a sample reads, the simulator's lateness between two scrapes included", () => {
    for (const generation of ['v0.6', 'v0.10', 'v0.19'] as const) {
      const m = new SimMetrics({ ...facts, generation });
      const step = (latenessMs: number) => m.observeStep({ latenessMs, iterationTokens: 8 } as StepInfo);
      for (let i = 0; i < 50; i++) step(0.2);
      const a = m.render(stats);
      for (let i = 0; i < 50; i++) step(i % 10 === 0 ? 4 : 0.3);
      const b = m.render(stats);
      const whole = toMetricsSample(parsePrometheus(b), 0, { previous: parsePrometheus(a) });
      expect(whole.simLatenessMs).toBeGreaterThan(2);
      expect(toMetricsSample(parsePrometheus(sampleLines(b)), 0, { previous: parsePrometheus(sampleLines(a)) })).toEqual(whole);
    }
  });

  it('V1 (0.10, 0.19) counts every waiting request; 0.19 by reason, all for capacity', () => {
    const f10 = parsePrometheus(new SimMetrics({ ...facts, generation: 'v0.10' }).render(stats));
    expect(toMetricsSample(f10, 0)).toMatchObject({ running: 4, waiting: 5, kvUsage: 0.75, prefixHitsTotal: 320 });
    expect(pickValue(f10, 'vllm:gpu_cache_usage_perc')).toBe(0.75);
    const f19 = parsePrometheus(new SimMetrics({ ...facts, generation: 'v0.19' }).render(stats));
    expect(pickValue(f19, 'vllm:num_requests_waiting_by_reason', { reason: 'capacity' })).toBe(5);
    expect(pickValue(f19, 'vllm:num_requests_waiting_by_reason', { reason: 'deferred' })).toBe(0);
    expect(findFamily(f19, 'vllm:num_requests_swapped')).toBeUndefined();
  });
});

/** The `vllm:cache_config_info` labels of a scrape. */
function cacheLabels(fams: readonly MetricFamily[]): Record<string, string> {
  return findFamily(fams, 'vllm:cache_config_info')!.samples[0].labels;
}
