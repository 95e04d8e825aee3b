/**
 * `--scheduling-policy priority` as vLLM V1 runs it (`vllm/v1/core/sched/scheduler.py`,
 * `vllm/v1/core/sched/request_queue.py`): the preemption victim is the worst priority, newest first,
 * even an older request already scheduled in the same step; WAITING is ordered by (priority, arrival);
 * and over real HTTP, the `priority` field (accepted and ignored under fcfs, as vLLM V1 does).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSimRequest, type SimRequest } from '../src/sim/engine/engine-request';
import { PriorityQueue, victimIndex } from '../src/sim/engine/request-queue';
import { Scheduler } from '../src/sim/engine/scheduler';
import type { EngineConfig, EngineOutput } from '../src/sim/engine/types';
import { type SimHandle, startSim } from '../src/sim/start';

function cfg(over: Partial<EngineConfig> = {}): EngineConfig {
  return {
    maxModelLen: 4096,
    maxNumSeqs: 256,
    maxNumBatchedTokens: 64,
    enableChunkedPrefill: true,
    longPrefillTokenThreshold: 0,
    enablePrefixCaching: false,
    blockSize: 16,
    numGpuBlocks: 1000,
    preemptionMode: 'recompute',
    numCpuBlocks: 0,
    reserveFullIsl: true,
    schedulingPolicy: 'priority',
    asyncScheduling: false,
    ...over,
  };
}

let salt = 0;
function req(id: string, promptLen: number, priority: number, arrivalMs: number): SimRequest {
  const prompt = Array.from({ length: promptLen }, (_, i) => 1000 * (salt + 1) + i);
  return newSimRequest(
    { id, promptTokenIds: prompt, maxTokens: 1000, minTokens: 0, naturalLength: 1000, ignoreEos: true, priority },
    arrivalMs,
    ++salt,
    () => {},
  );
}

/** schedule + update at `t`; returns the scheduled ids and the plan's counts. */
function step(s: Scheduler, t = Number.POSITIVE_INFINITY) {
  const p = s.schedule(t);
  const out = {
    ids: p.scheduled.map((r) => r.id),
    tokens: p.scheduledTokens,
    decodes: p.batch.decodes,
    prefill: p.batch.prefillTokens,
    preemptions: p.preemptions,
  };
  s.update(0, [] as SimRequest[], [] as EngineOutput[]);
  return out;
}

/**
 * The review's case: `old` (priority 10) is admitted first and runs; `young` (priority 0) arrives later.
 * 6 KV blocks (5 usable + the null block): old's 40-token prompt takes 3, young's 32-token prompt 2.
 * In step 3 old's decode still fits its third block and is scheduled first; young's decode needs a new
 * block and none is free.
 */
function kvPressure(policy: 'fcfs' | 'priority') {
  const s = new Scheduler(cfg({ numGpuBlocks: 6, schedulingPolicy: policy }));
  const old = req('old', 40, 10, 0);
  const young = req('young', 32, 0, 1);
  s.add(old);
  expect(step(s).ids).toEqual(['old']);
  s.add(young);
  expect(step(s).ids).toEqual(['old', 'young']);
  expect(s.kv.numFree).toBe(0);
  return { s, old, young, third: step(s) };
}

describe('priority preemption (vllm/v1/core/sched/scheduler.py)', () => {
  it('preempts the priority-10 request although it is older and already scheduled this step', () => {
    const { s, old, young, third } = kvPressure('priority');
    expect(third.preemptions).toBe(1);
    expect(third.ids).toEqual(['young']);
    // The victim's token went back to the budget and out of the batch: one decode, one token.
    expect(third).toMatchObject({ tokens: 1, decodes: 1, prefill: 0 });
    expect(old).toMatchObject({ status: 'waiting', computed: 0, numPreemptions: 1, blocks: [] });
    expect(young).toMatchObject({ status: 'running', numPreemptions: 0 });
    expect(s.running).toEqual([young]);
    expect(s.waiting.peekFront()).toBe(old);
    expect(s.numPreemptions).toBe(1);
  });

  it('fcfs preempts the newest admitted instead (running.pop()), here the priority-0 request', () => {
    const { s, old, young, third } = kvPressure('fcfs');
    expect(third.preemptions).toBe(1);
    expect(third.ids).toEqual(['old']);
    expect(young).toMatchObject({ status: 'waiting', computed: 0, numPreemptions: 1 });
    expect(old.status).toBe('running');
    expect(s.running).toEqual([old]);
  });

  it('victim = max(running, key=(priority, arrival_time)): worst priority, then newest; the first on a tie', () => {
    const a = req('a', 1, 5, 10);
    const b = req('b', 1, 7, 3);
    const c = req('c', 1, 7, 8);
    const d = req('d', 1, 7, 8);
    expect(victimIndex([a, b, c, d], 'priority')).toBe(2);
    expect(victimIndex([a, b, c, d], 'fcfs')).toBe(3);
    expect(victimIndex([a], 'priority')).toBe(0);
  });
});

describe('priority WAITING queue (vllm/v1/core/sched/request_queue.py)', () => {
  it('admits by (priority, arrival), lower priority value first, whatever the order of arrival', () => {
    const s = new Scheduler(cfg({ maxNumSeqs: 1 }));
    const rs = [req('p5-early', 8, 5, 0), req('p0', 8, 0, 1), req('p5-late', 8, 5, 2), req('neg', 8, -1, 3)];
    for (const r of rs) s.add(r);
    expect([0, 1, 2, 3].map((i) => s.waiting.at(i)?.id)).toEqual(['neg', 'p0', 'p5-early', 'p5-late']);
    const admitted: string[] = [];
    while (admitted.length < rs.length) {
      const head = s.running[0];
      if (head) s.abort(head); // free the one slot (max_num_seqs 1)
      admitted.push(step(s).ids[0]);
    }
    expect(admitted).toEqual(['neg', 'p0', 'p5-early', 'p5-late']);
  });

  it('a preempted request goes back by its priority, not to the front (prepend_request = add_request)', () => {
    const { s, old } = kvPressure('priority');
    const mid = req('mid', 8, 5, 2);
    s.add(mid);
    expect(s.waiting.peekFront()).toBe(mid); // priority 5 before the preempted priority-10 request
    expect(s.waiting.at(1)).toBe(old);
  });

  it('a better request that arrived mid-step waits for the next schedule(); an earlier one is admitted', () => {
    const s = new Scheduler(cfg({ maxNumSeqs: 1 }));
    s.add(req('low', 8, 9, 0));
    s.add(req('late-high', 8, 0, 50));
    expect(step(s, 10).ids).toEqual(['low']);
  });

  it('heap removal (abort) keeps the order of the rest', () => {
    const q = new PriorityQueue();
    const rs = Array.from({ length: 40 }, (_, i) => req(`r${i}`, 1, (i * 7) % 5, i));
    for (const r of rs) q.pushBack(r);
    for (const r of rs.filter((_, i) => i % 3 === 0)) expect(q.remove(r)).toBe(true);
    expect(q.remove(rs[0])).toBe(false);
    const order: string[] = [];
    while (q.size > 0) {
      const r = q.peekFront()!;
      order.push(`${r.priority}:${String(r.arrivalMs).padStart(2, '0')}`);
      q.remove(r);
    }
    expect(order).toEqual([...order].sort());
    expect(order).toHaveLength(40 - 14);
  });
});

describe('priority over HTTP (the simulator as a separate process)', () => {
  let fcfs: SimHandle;
  let prio: SimHandle;

  beforeAll(async () => {
    [fcfs, prio] = await Promise.all([
      startSim({ extraArgs: ['--stats-interval-s', '0'] }),
      startSim({ extraArgs: ['--stats-interval-s', '0', '--scheduling-policy', 'priority', '--max-num-seqs', '1'] }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([fcfs?.stop(), prio?.stop()]);
  });

  function post(sim: SimHandle, body: Record<string, unknown>): Promise<Response> {
    return fetch(`${sim.baseUrl}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: sim.model, prompt: 'Hello there', ...body }),
    });
  }

  it('fcfs accepts a non-zero priority and ignores it, as vLLM V1 (no check since V0 was removed)', async () => {
    const res = await post(fcfs, { max_tokens: 3, priority: 10 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBeGreaterThan(0);
    expect((await post(fcfs, { max_tokens: 2, priority: '-3' })).status).toBe(200); // lax int
  });

  it('a priority that is not an integer is a 400 with pydantic’s message', async () => {
    for (const priority of [null, 'high', 1.5]) {
      const res = await post(fcfs, { max_tokens: 2, priority });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message).toMatch(/'loc': \('body', 'priority'\).*Input should be a valid integer/);
    }
  });

  it('with --scheduling-policy priority and one seat, the priority-0 request sent last is served before the priority-10 one', async () => {
    // The long request holds the only seat (max_num_seqs 1) for ~500 steps (seconds) while the two others queue.
    const long = post(prio, { max_tokens: 500, ignore_eos: true, priority: 5 });
    await new Promise((r) => setTimeout(r, 100));
    const firstToken: string[] = [];
    const streamed = (name: string, priority: number) =>
      post(prio, { max_tokens: 2, ignore_eos: true, priority, stream: true }).then(async (res) => {
        const reader = res.body!.getReader();
        await reader.read();
        firstToken.push(name);
        while (!(await reader.read()).done);
      });
    const low = streamed('priority 10', 10);
    await new Promise((r) => setTimeout(r, 50));
    const high = streamed('priority 0', 0);
    await Promise.all([long.then((r) => r.json()), low, high]);
    expect(firstToken).toEqual(['priority 0', 'priority 10']);
  }, 60_000);
});
