import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedLoop } from '../src/schedule/shapes';
import { runLoad } from '../src/runner/runner';
import { makeRequest } from '../src/workload/workload';
import { LONG_PROMPT } from '../src/workload/prompts';
import { startSim, type SimHandle } from '../src/sim/start';

let sim: SimHandle;
beforeAll(async () => {
  sim = await startSim({ flags: { maxModelLen: 2048 } });
});
afterAll(() => sim?.stop());

async function promptTokensServed(): Promise<number> {
  const text = await (await fetch(`${sim.baseUrl}/metrics`)).text();
  const m = /^vllm:prompt_tokens_total\{[^}]*\} ([\d.e+]+)/m.exec(text);
  return m ? Number(m[1]) : NaN;
}

describe('prompt-length preflight (POST /tokenize before any load)', () => {
  it('a prompt longer than max_model_len fails at once, naming the fix, and sends nothing', async () => {
    // The course's long prompt is ~4k tokens; this server holds 2048.
    await expect(
      runLoad({
        baseUrl: sim.baseUrl,
        workload: [makeRequest(LONG_PROMPT, { maxTokens: 10, tag: 'long' })],
        requests: 3,
        shape: closedLoop(1),
        out: false,
      }),
    ).rejects.toThrow(
      /'long' request has a prompt of \d+ tokens and max_tokens 10, \d+ more than the server's max_model_len 2048.*--max-model-len/,
    );
    expect(await promptTokensServed()).toBe(0);
  });

  it('prompt + max_tokens just over the limit is caught too; a fitting workload runs and records the check', async () => {
    await expect(
      runLoad({
        baseUrl: sim.baseUrl,
        workload: [makeRequest('你好', { maxTokens: 2040 })],
        requests: 1,
        shape: closedLoop(1),
        out: false,
      }),
    ).rejects.toThrow(/max_tokens 2040/);
    const run = await runLoad({
      baseUrl: sim.baseUrl,
      workload: [makeRequest('你好', { maxTokens: 8 })],
      requests: 2,
      shape: closedLoop(1),
      out: false,
    });
    expect(run.summary.completed).toBe(2);
    expect((run.manifest.client as { preflight: { checked: number; maxPromptTokens: number } }).preflight).toMatchObject({
      checked: 1,
    });
  });
});
