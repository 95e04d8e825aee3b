/**
 * The simulated vLLM server as a real separate process (startSim, port 0): stream shapes
 * and ordering, usage semantics, length rules, vLLM's errors, the side endpoints, /metrics,
 * the official `openai` client, client disconnects, and a clean stop.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheus, pickValue } from '../src/observe/prometheus';
import { SIM_CPU_SERIES } from '../src/wire/sim-series';
import { hostCpu, threadSched } from '../src/proc/cpu-times';
import { simCpuShare } from '../src/runner/sim-lateness';
import { readFileSync } from 'node:fs';
import { SIM_NODE_ARGS, startSim, type SimHandle } from '../src/sim/start';

let sim: SimHandle;
const ZH = '在人工智能领域，显存带宽与计算能力的平衡是至关重要的。';

beforeAll(async () => {
  sim = await startSim({ extraArgs: ['--stats-interval-s', '0'] });
});

afterAll(async () => {
  await sim?.stop();
});

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${sim.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** `data:` payloads of an SSE body, in order; asserts every event is exactly `data: …\n\n`. */
function sseData(text: string): string[] {
  expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  const events = text.split('\n\n').slice(0, -1);
  for (const e of events) expect(e).toMatch(/^data: [^\n]+$/);
  return events.map((e) => e.slice(6));
}

async function json(res: Response | Promise<Response>): Promise<any> {
  return (await res).json();
}

async function metricValue(line: RegExp): Promise<number> {
  const text = await (await fetch(`${sim.baseUrl}/metrics`)).text();
  const found = text.split('\n').find((l) => line.test(l));
  return found ? Number(found.split(' ').pop()) : Number.NaN;
}

describe('simulated vLLM over HTTP', () => {
  it("runs with V8's memory reducer off: its Node options come before its entry on the command line", () => {
    const argv = readFileSync(`/proc/${sim.pid}/cmdline`, 'utf8').split('\0');
    expect(SIM_NODE_ARGS).toContain('--no-memory-reducer');
    const entry = argv.findIndex((a) => /sim[/\\]main\.(ts|js)$/.test(a));
    expect(entry).toBeGreaterThan(0);
    for (const flag of SIM_NODE_ARGS) {
      expect(argv.indexOf(flag)).toBeGreaterThan(0);
      expect(argv.indexOf(flag)).toBeLessThan(entry);
    }
  });

  it('streams a chat completion as vLLM: role chunk, token chunks, finish in the last, usage chunk, [DONE]', async () => {
    const res = await post(
      '/v1/chat/completions',
      {
        model: sim.model,
        messages: [{ role: 'user', content: 'Say hello' }],
        max_tokens: 6,
        ignore_eos: true,
        stream: true,
        stream_options: { include_usage: true },
      },
      { 'x-request-id': 'lesson-1' },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-loadlab-sim')).toBe('1');
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks).toHaveLength(1 + 6 + 1);
    const created = chunks[0].created;
    for (const c of chunks) {
      expect(Object.keys(c).slice(0, 5)).toEqual(['id', 'object', 'created', 'model', 'choices']);
      expect(c).toMatchObject({ id: 'chatcmpl-lesson-1', object: 'chat.completion.chunk', created, model: sim.model });
    }
    expect(data[0]).toBe(
      `{"id":"chatcmpl-lesson-1","object":"chat.completion.chunk","created":${created},"model":"${sim.model}",` +
        '"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null}',
    );
    for (let i = 1; i <= 6; i++) {
      const ch = chunks[i].choices[0];
      expect(Object.keys(ch)).toEqual(
        i < 6
          ? ['index', 'delta', 'logprobs', 'finish_reason', 'token_ids']
          : ['index', 'delta', 'logprobs', 'finish_reason', 'stop_reason', 'token_ids'],
      );
      expect(Object.keys(ch.delta)).toEqual(['content']);
      expect(ch.finish_reason).toBe(i < 6 ? null : 'length');
      expect(chunks[i].usage).toBeUndefined();
    }
    expect(chunks[6].choices[0].stop_reason).toBeNull();
    expect(data[7]).toMatch(/"choices":\[\],"usage":\{"prompt_tokens":\d+,"total_tokens":\d+,"completion_tokens":6\}\}$/);
    // "Say hello" inside Qwen2.5's default template: 2 text tokens + 29 template tokens.
    expect(chunks[7].usage).toEqual({ prompt_tokens: 31, total_tokens: 37, completion_tokens: 6 });
  });

  it('streams a completion with "usage":null on every chunk, then the usage chunk', async () => {
    const res = await post('/v1/completions', {
      prompt: 'The capital of France is',
      max_tokens: 4,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    });
    const data = sseData(await res.text());
    expect(data).toHaveLength(4 + 1 + 1);
    const chunks = data.slice(0, 5).map((d) => JSON.parse(d));
    expect(chunks[0].id).toMatch(/^cmpl-[0-9a-f]{16}$/);
    for (let i = 0; i < 4; i++) {
      expect(chunks[i].object).toBe('text_completion');
      expect(Object.keys(chunks[i])).toEqual(['id', 'object', 'created', 'model', 'choices', 'usage']);
      expect(chunks[i].usage).toBeNull();
      expect(Object.keys(chunks[i].choices[0])).toEqual([
        'index',
        'text',
        'logprobs',
        'finish_reason',
        'stop_reason',
        'prompt_token_ids',
        'token_ids',
      ]);
      expect(chunks[i].choices[0].finish_reason).toBe(i < 3 ? null : 'length');
    }
    expect(chunks[4].choices).toEqual([]);
    expect(chunks[4].usage).toEqual({ prompt_tokens: 5, total_tokens: 9, completion_tokens: 4 });
  });

  it('continuous_usage_stats puts running usage on every chunk, role chunk included', async () => {
    const res = await post('/v1/chat/completions', {
      messages: [{ role: 'user', content: ZH }],
      max_completion_tokens: 5,
      max_tokens: 99,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    const chunks = sseData(await res.text())
      .slice(0, -1)
      .map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.usage.completion_tokens)).toEqual([0, 1, 2, 3, 4, 5, 5]);
    for (const c of chunks)
      expect(c.usage).toEqual({
        prompt_tokens: 46,
        total_tokens: 46 + c.usage.completion_tokens,
        completion_tokens: c.usage.completion_tokens,
      });
    // A Chinese prompt gets Chinese pseudo-text.
    expect(
      chunks
        .slice(1, 6)
        .map((c) => c.choices[0].delta.content)
        .join(''),
    ).toMatch(/[\u4e00-\u9fff]/);
  });

  it('no usage chunk without stream_options; include_usage without continuous gives only the final one', async () => {
    const plain = sseData(await (await post('/v1/completions', { prompt: 'Hi', max_tokens: 3, stream: true })).text());
    expect(plain.slice(0, -1).every((d) => JSON.parse(d).choices.length === 1)).toBe(true);
  });

  it('ignore_eos yields exactly max_tokens with finish_reason length (non-streamed)', async () => {
    const res = await post('/v1/chat/completions', {
      messages: [{ role: 'user', content: 'Write a story' }],
      max_tokens: 40,
      ignore_eos: true,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-loadlab-sim')).toBe('1');
    const body = await json(res);
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0].finish_reason).toBe('length');
    expect(body.choices[0].message.role).toBe('assistant');
    expect(body.choices[0].message.content.length).toBeGreaterThan(0);
    expect(body.usage).toMatchObject({ completion_tokens: 40, prompt_tokens: 32, total_tokens: 72 });
  });

  it('completions default to 16 output tokens when max_tokens is unset', async () => {
    const body = await json(post('/v1/completions', { prompt: 'Once upon a time', ignore_eos: true }));
    expect(body.object).toBe('text_completion');
    expect(body.usage.completion_tokens).toBe(16);
    expect(body.choices[0].finish_reason).toBe('length');
  });

  it("rejects prompt + max_tokens > max_model_len with vLLM's 400", async () => {
    const res = await post('/v1/chat/completions', { messages: [{ role: 'user', content: ZH }], max_tokens: 32740 });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-loadlab-sim')).toBe('1');
    expect(await res.json()).toEqual({
      error: {
        message:
          "This model's maximum context length is 32768 tokens. However, you requested 32740 output tokens and your prompt contains 46 input tokens, for a total of 32786 tokens. Please reduce the length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=46)",
        type: 'BadRequestError',
        param: 'input_tokens',
        code: 400,
      },
    });
    const tooMany = await json(post('/v1/completions', { prompt: 'x', max_tokens: 40000 }));
    expect(tooMany.error.message).toBe(
      'max_tokens=40000 cannot be greater than max_model_len=max_total_tokens=32768. Please request fewer output tokens. (parameter=max_tokens, value=40000)',
    );
    expect(tooMany.error.param).toBe('max_tokens');
  });

  it("answers vLLM's other errors: unknown model 404, min_tokens > max_tokens, stream_options without stream, bad JSON", async () => {
    const nf = await post('/v1/chat/completions', { model: 'foo', messages: [{ role: 'user', content: 'hi' }] });
    expect(nf.status).toBe(404);
    expect(await nf.text()).toBe(
      '{"error":{"message":"The model `foo` does not exist.","type":"NotFoundError","param":"model","code":404}}',
    );
    const mt = await post('/v1/completions', { prompt: 'hi', max_tokens: 5, min_tokens: 6 });
    expect(mt.status).toBe(400);
    expect((await json(mt)).error.param).toBe(null); // a VLLMValidationError without a parameter
    const so = await post('/v1/completions', { prompt: 'hi', stream_options: { include_usage: true } });
    expect(so.status).toBe(400);
    expect((await json(so)).error).toMatchObject({ param: 'stream_options', code: 400 });
    const bad = await post('/v1/completions', '{"prompt": ');
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.code).toBe(400);
    const route = await fetch(`${sim.baseUrl}/v2/nothing`);
    expect(route.status).toBe(404);
    expect(route.headers.get('x-loadlab-sim')).toBe('1');
    expect(await route.text()).toBe('{"detail":"Not Found"}'); // FastAPI's default 404
  });

  it('/tokenize counts the course sentence as 17 tokens, 46 inside the default chat template', async () => {
    const plain = await json(post('/tokenize', { prompt: ZH, return_token_strs: true }));
    expect(plain.count).toBe(17);
    expect(plain.max_model_len).toBe(32768);
    expect(plain.tokens).toHaveLength(17);
    expect(plain.token_strs).toHaveLength(17);
    const chat = await json(post('/tokenize', { messages: [{ role: 'user', content: ZH }] }));
    expect(chat).toMatchObject({ count: 46, token_strs: null });
    const back = await json(post('/detokenize', { tokens: plain.tokens }));
    expect(back).toEqual({ prompt: ZH });
  });

  it('/version, /v1/models and /health say what they are', async () => {
    const v = await fetch(`${sim.baseUrl}/version`);
    expect(v.headers.get('x-loadlab-sim')).toBe('1');
    // Where its engine thread is pinned, when it is (test/cpu-split.test.ts checks the CPU).
    // And its machine's boot and its process, so a client there can tell it from other programs (src/proc/cpu-users.ts).
    const {
      loadlab_engine_cpu: cpu,
      loadlab_boot_id: boot,
      loadlab_pid: pid,
      ...said
    } = (await v.json()) as Record<string, unknown>;
    expect(cpu === undefined || Number.isInteger(cpu)).toBe(true);
    expect(cpu === undefined || typeof boot === 'string').toBe(true);
    if (process.platform === 'linux') expect([typeof boot, pid]).toEqual(['string', sim.pid]);
    expect(said).toEqual({
      version: '0.19.0',
      loadlab_sim: true,
      simulated: true,
      loadlab_profile: {
        id: 'rtx4090-qwen2.5-7b-instruct-gptq-int4',
        status: 'spec-derived, not calibrated',
        gpu: 'NVIDIA GeForce RTX 4090',
        model: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
      },
    });
    const models = await json(fetch(`${sim.baseUrl}/v1/models`));
    expect(models.object).toBe('list');
    expect(models.data[0]).toMatchObject({
      id: sim.model,
      object: 'model',
      owned_by: 'vllm',
      root: sim.model,
      parent: null,
      max_model_len: 32768,
      loadlab_sim: true,
    });
    const h = await fetch(`${sim.baseUrl}/health`);
    expect(h.status).toBe(200);
    expect(await h.text()).toBe('');
    expect(h.headers.get('x-loadlab-sim')).toBe('1');
  });

  it("/metrics has vLLM's series with engine/model_name labels, and counters rise after a request", async () => {
    const text = await (await fetch(`${sim.baseUrl}/metrics`)).text();
    const lbl = `{engine="0",model_name="${sim.model}"}`;
    for (const g of ['vllm:num_requests_running', 'vllm:num_requests_waiting', 'vllm:kv_cache_usage_perc']) {
      expect(text).toContain(`# TYPE ${g} gauge\n${g}${lbl} `);
    }
    // The default generation (0.19) no longer has vllm:gpu_cache_usage_perc (removed in 0.12, vLLM #29330).
    expect(text).not.toContain('vllm:gpu_cache_usage_perc');
    for (const c of [
      'vllm:num_preemptions',
      'vllm:prompt_tokens',
      'vllm:generation_tokens',
      'vllm:prefix_cache_queries',
      'vllm:prefix_cache_hits',
      'loadlab:sim_steps',
      'loadlab:sim_resyncs',
    ]) {
      expect(text).toContain(`# TYPE ${c}_total counter\n${c}_total${lbl} `);
      expect(text).toContain(`${c}_created${lbl} `);
    }
    expect(text).toContain(`vllm:request_success_total{engine="0",finished_reason="length",model_name="${sim.model}"} `);
    for (const h of [
      'vllm:time_to_first_token_seconds',
      'vllm:inter_token_latency_seconds',
      'vllm:e2e_request_latency_seconds',
      'vllm:request_queue_time_seconds',
      'vllm:iteration_tokens_total',
      'loadlab:sim_step_lateness_seconds',
    ]) {
      expect(text).toContain(`# TYPE ${h} histogram`);
      expect(text).toContain(`${h}_bucket{engine="0",le="+Inf",model_name="${sim.model}"} `);
      expect(text).toContain(`${h}_count${lbl} `);
      expect(text).toContain(`${h}_sum${lbl} `);
    }
    expect(text).toContain(`vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="${sim.model}"} `);
    expect(text).toContain(`vllm:e2e_request_latency_seconds_bucket{engine="0",le="7680.0",model_name="${sim.model}"} `);
    expect(text).toMatch(
      /^vllm:cache_config_info\{block_size="16",cache_dtype="auto",.*enable_prefix_caching="True",engine="0",gpu_memory_utilization="0.9",.*num_gpu_blocks="\d+".*\} 1\.0$/m,
    );
    expect(text).toMatch(/^loadlab:sim_info\{.*simulated="true".*\} 1\.0$/m);

    const gen = /^vllm:generation_tokens_total\{/;
    const ttft = /^vllm:time_to_first_token_seconds_count\{/;
    const ok = /^vllm:request_success_total\{engine="0",finished_reason="length"/;
    const before = [await metricValue(gen), await metricValue(ttft), await metricValue(ok)];
    await json(post('/v1/completions', { prompt: 'Count to ten', max_tokens: 7, ignore_eos: true }));
    const after = [await metricValue(gen), await metricValue(ttft), await metricValue(ok)];
    expect(after[0] - before[0]).toBe(7);
    expect(after[1] - before[1]).toBe(1);
    expect(after[2] - before[2]).toBe(1);
  });

  it("/metrics says where the engine thread's time went (Linux /proc): counters that only rise", async () => {
    const read = async () => parsePrometheus(await (await fetch(`${sim.baseUrl}/metrics`)).text());
    const a = await read();
    await json(post('/v1/completions', { prompt: 'Count to ten', max_tokens: 7, ignore_eos: true }));
    const b = await read();
    const names = Object.values(SIM_CPU_SERIES).map((n) => `${n}_total`);
    if (threadSched() === undefined || hostCpu() === undefined) {
      for (const n of names) expect(pickValue(b, n)).toBeUndefined(); // unreadable here: left out, never 0
      return;
    }
    for (const n of names) {
      expect(pickValue(a, n)).toBeGreaterThanOrEqual(0);
      expect(pickValue(b, n)).toBeGreaterThanOrEqual(pickValue(a, n)!);
    }
    for (const cause of ['waiting_for_cpu', 'woken_late', 'gc', 'other']) {
      expect(pickValue(b, 'loadlab:sim_late_step_seconds_total', { cause })).toBeGreaterThanOrEqual(0);
    }
    const share = simCpuShare(b, a, 1000)!;
    expect(share.threadCpuPercent).toBeGreaterThan(0); // the request and the scrape ran on the engine thread
    expect(share.threadWaitMs).toBeGreaterThanOrEqual(0);
    expect(share.stealPercent).toBeGreaterThanOrEqual(0);
    expect(share.stealPercent).toBeLessThanOrEqual(100);
  });

  it('serves the official openai client (streamed chat)', async () => {
    const client = new OpenAI({ baseURL: `${sim.baseUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: sim.model,
      messages: [{ role: 'user', content: 'Tell me about GPUs' }],
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: { completion_tokens: number } | undefined;
    for await (const chunk of stream) {
      if (chunk.choices[0]) {
        text += chunk.choices[0].delta.content ?? '';
        finish = chunk.choices[0].finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(['stop', 'length']).toContain(finish);
    expect(usage!.completion_tokens).toBeGreaterThanOrEqual(1);
    expect(usage!.completion_tokens).toBeLessThanOrEqual(8);
  });

  it('aborts the engine request when the client goes away mid-stream', async () => {
    const res = await post('/v1/completions', {
      prompt: 'A very long answer',
      max_tokens: 20000,
      ignore_eos: true,
      stream: true,
    });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    const running = /^vllm:num_requests_running\{/;
    let n = await metricValue(running);
    for (let i = 0; i < 50 && n !== 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      n = await metricValue(running);
    }
    expect(n).toBe(0);
  });
});

describe('startSim', () => {
  it('rejects an unknown flag before starting a process, listing the known flags', async () => {
    await expect(startSim({ extraArgs: ['--max-num-seqz', '4'] })).rejects.toThrow(
      /unknown flag --max-num-seqz[\s\S]*--max-num-seqs/,
    );
  });

  it('rejects with the log tail when the simulator exits during startup', async () => {
    await expect(startSim({ flags: { maxModelLen: 40000 } })).rejects.toThrow(
      /exited \(code 1\) before listening[\s\S]*max_position_embeddings 32768/,
    );
  });

  it('stop() leaves no process behind', async () => {
    const pid = sim.pid;
    await sim.stop();
    expect(() => process.kill(pid, 0)).toThrow();
    await sim.stop(); // idempotent
  });
});
