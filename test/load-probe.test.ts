import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeTarget } from '../src/observe/probe';
import { closedPort, startScriptedServer } from './helpers/sse-server';

const METRICS = [
  '# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig',
  '# TYPE vllm:cache_config_info gauge',
  'vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",engine="0",note="a \\"quoted\\" \\\\ value",num_gpu_blocks="17595"} 1.0',
  'vllm:num_requests_running{engine="0",model_name="m"} 0.0',
  '',
].join('\n');

let sim: Server;
let simUrl: string;
beforeAll(async () => {
  // A stand-in for the simulator: marks itself the way the simulator does.
  sim = createServer((req, res) => {
    res.setHeader('x-loadlab-sim', '1');
    if (req.url === '/version') return void res.end(JSON.stringify({ version: '0.19.0', loadlab_sim: true }));
    if (req.url === '/v1/models') {
      return void res.end(
        JSON.stringify({
          object: 'list',
          data: [
            { id: 'a', owned_by: 'vllm', max_model_len: 8192 },
            { id: 'b', owned_by: 'vllm', max_model_len: 2048 },
          ],
        }),
      );
    }
    if (req.url === '/metrics') return void res.end(METRICS);
    res.statusCode = 404;
    res.end('{"detail":"Not Found"}');
  });
  sim.listen(0, '127.0.0.1');
  await new Promise((r) => sim.once('listening', r));
  simUrl = `http://127.0.0.1:${(sim.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => sim.close(() => r())));

describe('probe', () => {
  it('recognises the simulator and reads version, models, max_model_len, cache config', async () => {
    const p = await probeTarget(`${simUrl}/v1/`, undefined, { model: 'b' });
    expect(p).toMatchObject({
      kind: 'sim',
      simulated: true,
      reachable: true,
      serverVersion: '0.19.0',
      models: ['a', 'b'],
      model: 'b',
      maxModelLen: 2048,
    });
    expect(p.cacheConfig?.enable_prefix_caching).toBe('True');
  });

  it('a vLLM-shaped server without simulator marks is not "simulated"', async () => {
    const s = await startScriptedServer();
    try {
      const p = await probeTarget(s.url);
      expect(p.simulated).toBe(false);
      expect(p.kind).toBe('vllm');
      expect(p.model).toBe('scripted');
    } finally {
      await s.close();
    }
  });

  it('nothing listening: reachable false with the network error, never throws', async () => {
    const port = await closedPort();
    const p = await probeTarget(`http://127.0.0.1:${port}`);
    expect(p.reachable).toBe(false);
    expect(p.error).toMatch(/connection refused/);
  });
});
