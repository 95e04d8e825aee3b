/**
 * `measure` never reuses or mislabels another server's point, and never measures an external
 * server that runs other flags than asked; a lesson whose request exceeds max_model_len stops
 * before load. Real servers on 127.0.0.1: LoadLab's simulator (two of them) and a scripted SSE server.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLessonFits } from '../src/lesson/lesson-check';
import { measure } from '../src/lesson/measure';
import { LONG_PROMPT } from '../src/workload/prompts';
import { closedLoop } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import { openTarget } from '../src/lesson/open-target';
import { startSim, type SimHandle } from '../src/sim/start';
import { startScriptedServer, type ScriptedServer } from './helpers/sse-server';

let simA: SimHandle;
let simB: SimHandle;
let scripted: ScriptedServer;
let root: string;
beforeAll(async () => {
  [simA, simB, scripted] = await Promise.all([
    startSim({ flags: { maxModelLen: 2048 } }),
    startSim({ flags: { maxModelLen: 2048, servedModelName: 'other-model' } }),
    startScriptedServer({ firstTokenDelayMs: 2, gapMs: 1, tokens: 3 }),
  ]);
  root = mkdtempSync(join(tmpdir(), 'loadlab-target-reuse-'));
}, 60_000);
afterAll(async () => {
  await Promise.all([simA?.stop(), simB?.stop(), scripted?.close()]);
  rmSync(root, { recursive: true, force: true });
});

const point = (name: string, extra: Record<string, unknown> = {}) => ({
  lesson: 'reuse',
  name,
  root,
  requests: 2,
  shape: closedLoop(1),
  workload: [makeRequest('hi', { maxTokens: 3 })],
  sampleMetrics: false,
  progress: false,
  ...extra,
});

/**
 * A pass-through HTTP proxy in front of `upstream` that counts completion requests (POST
 * `/v1/chat/completions` or `/v1/completions`), including any the server would reject.
 */
async function countingProxy(
  upstream: string,
): Promise<{ url: string; generations: () => number; setUpstream: (u: string) => void; close: () => Promise<void> }> {
  let generations = 0;
  let up = new URL(upstream);
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' && /\/v1\/(chat\/)?completions$/.test(req.url ?? '')) generations++;
    const fwd = httpRequest(
      { host: up.hostname, port: up.port, path: req.url, method: req.method, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    fwd.on('error', () => res.destroy());
    req.pipe(fwd);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    generations: () => generations,
    setUpstream: (u) => (up = new URL(u)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('measure: a saved point is reused only on the same server', () => {
  it('a point saved on the simulator is measured again on another model, and on a non-simulated server', async () => {
    const onA = await measure({ baseUrl: simA.baseUrl, model: simA.model }, point('p'));
    expect(onA.resumed).toBe(false);
    expect(onA.manifest.target.simulated).toBe(true);
    expect((await measure({ baseUrl: simA.baseUrl, model: simA.model }, point('p'))).resumed).toBe(true);

    const onB = await measure({ baseUrl: simB.baseUrl, model: simB.model }, point('p'));
    expect(onB.resumed).toBe(false);
    expect(onB.manifest.target.model).toBe('other-model');

    const real = await measure({ baseUrl: scripted.url, model: 'scripted' }, point('p'));
    expect(real.resumed).toBe(false);
    expect(real.manifest.target.simulated).toBe(false);
    expect(real.manifest.runId).not.toBe(onA.manifest.runId);
    // And back: the non-simulated run is not reused on the simulator either.
    const back = await measure({ baseUrl: simA.baseUrl, model: simA.model }, point('p'));
    expect(back.resumed).toBe(false);
    expect(back.manifest.target.simulated).toBe(true);
  }, 60_000);
});

describe('external mode (LOADLAB_BASE_URL): the server must report the requested flags', () => {
  it('restart() and measure() stop before load with the vllm serve line; unverifiable flags are named', async () => {
    // The proxy stands for the learner's vLLM at a fixed URL; "restarting vLLM" = pointing it at a new simulator.
    const proxy = await countingProxy(simA.baseUrl);
    let restarted: SimHandle | undefined;
    try {
      const target = await openTarget({ env: { LOADLAB_BASE_URL: proxy.url } });
      expect(target.mode).toBe('external');
      await expect(target.restart({ enablePrefixCaching: false })).rejects.toThrow(
        /enable_prefix_caching=True, but this lesson asks for False[\s\S]*vllm serve \S+ --no-enable-prefix-caching/,
      );
      expect(target.flags).toEqual({}); // a refused restart leaves the previous flags in effect
      await expect(
        measure(
          { baseUrl: proxy.url, model: target.model, mode: 'external', flags: { enablePrefixCaching: false } },
          point('ext-nocache'),
        ),
      ).rejects.toThrow(/vllm serve \S+ --no-enable-prefix-caching/);
      await expect(target.restart({ maxModelLen: 8192 })).rejects.toThrow(/max_model_len=2048[\s\S]*--max-model-len 8192/);
      // Hidden flags changed but the server process did not (same start time in /metrics): not restarted.
      await expect(target.restart({ maxNumSeqs: 32, maxModelLen: 2048 })).rejects.toThrow(
        /same server process[\s\S]*vllm serve \S+ --max-model-len 2048 --max-num-seqs 32/,
      );
      expect(proxy.generations()).toBe(0);

      restarted = await startSim({ flags: { maxModelLen: 2048, maxNumSeqs: 32 } });
      proxy.setUpstream(restarted.baseUrl);
      await target.restart({ maxNumSeqs: 32, maxModelLen: 2048 });
      expect(target.notes.join(' ')).toMatch(/not verified: --max-num-seqs 32/);
      const run = await measure(target, point('ext-seqs32'));
      expect(run.resumed).toBe(false);
      const manifest = JSON.parse(readFileSync(join(run.dir, 'manifest.json'), 'utf8'));
      expect(manifest.target.mode).toBe('external');
      expect(manifest.target.flags).toEqual({ maxNumSeqs: 32, maxModelLen: 2048 });
      expect(manifest.target.unverifiedFlags).toEqual(['--max-num-seqs 32']);
      expect(manifest.target.verifiedFlags).toContain('max_model_len=2048');
      expect(manifest.notes.join(' ')).toMatch(/not verified: --max-num-seqs 32/);
    } finally {
      await proxy.close();
      await restarted?.stop();
    }
  }, 60_000);
});

describe('max_model_len: a lesson too long for the server stops before load', () => {
  const long = makeRequest(LONG_PROMPT, { maxTokens: 10, tag: 'long' });

  it('checkLessonFits / target.checkFits name the vllm serve flag; measure of such a point sends no request', async () => {
    const proxy = await countingProxy(simB.baseUrl);
    try {
      const lessonRequests = [makeRequest('hi', { maxTokens: 8 }), long];
      await expect(checkLessonFits({ baseUrl: proxy.url, model: simB.model }, lessonRequests)).rejects.toThrow(
        /max_model_len 2048[\s\S]*'long' request has a prompt of \d+ tokens and max_tokens 10[\s\S]*vllm serve other-model --max-model-len \d+/,
      );
      const target = await openTarget({ env: { LOADLAB_BASE_URL: proxy.url } });
      await expect(target.checkFits(lessonRequests)).rejects.toThrow(/--max-model-len/);
      await expect(measure({ baseUrl: proxy.url, model: simB.model }, point('too-long', { workload: [long] }))).rejects.toThrow(
        /--max-model-len/,
      );
      expect(proxy.generations()).toBe(0);
      const fits = await target.checkFits([makeRequest('hi', { maxTokens: 8 })]);
      expect(fits).toMatchObject({ checked: 1, maxModelLen: 2048 });
      // The proxy does count: a fitting point goes through it.
      await measure({ baseUrl: proxy.url, model: simB.model }, point('fits'));
      expect(proxy.generations()).toBe(2);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
