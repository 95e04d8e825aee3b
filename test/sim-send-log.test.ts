/**
 * The simulator's send log (src/sim/http/send-log.ts, `POST /loadlab/send-log`) and the stamp lag a run
 * measures against it (src/runner/stamp-lag.ts). Real simulator processes on port 0, real HTTP; the
 * clock check is causal only: every chunk is sent before it arrives, never a wall-clock figure.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedLoop, type RunLoadOptions, runLoad } from '../src/index';
import { monoNowMs } from '../src/proc/mono-clock';
import type { ClientHealth } from '../src/runner/health';
import { FEW_CHUNKS, judgeStampLag, STAMP_LAG_MIN_CHUNKS, stampLagOf, type StampLag } from '../src/runner/stamp-lag';
import { SEND_LOG_MAX_STAMPS, SendLog } from '../src/sim/http/send-log';
import { startSim, type SimHandle } from '../src/sim/start';
import { healthBannerLines } from '../src/view/banner';
import type { RunSummary } from '../src/types';
import { SIM_SEND_LOG_CLOCK, SIM_SEND_LOG_PATH } from '../src/wire/sim-series';

let sim: SimHandle;

beforeAll(async () => {
  sim = await startSim({ extraArgs: ['--stats-interval-s', '0'] });
}, 60_000);

afterAll(async () => {
  await sim?.stop();
});

async function chat(id: string | undefined, maxTokens: number): Promise<{ tokenChunks: number; text: string }> {
  const res = await fetch(`${sim.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(id ? { 'x-request-id': id } : {}) },
    body: JSON.stringify({
      model: sim.model,
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: maxTokens,
      ignore_eos: true,
      stream: true,
    }),
  });
  const text = await res.text();
  const tokenChunks = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice(6)))
    .filter((c) => c.choices?.[0]?.delta?.content).length;
  return { tokenChunks, text };
}

async function sendLog(body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${sim.baseUrl}${SIM_SEND_LOG_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

describe('the send log (simulator)', () => {
  it('has one send time per token chunk of a stream sent with an x-request-id, increasing, then forgets it', async () => {
    const before = monoNowMs();
    const { tokenChunks } = await chat('send-log-a', 12);
    await chat(undefined, 4); // no id: not logged, nothing to ask for
    const after = monoNowMs(); // after a later request: the first one's stamps were surely taken
    const { status, json } = await sendLog({ request_ids: ['send-log-a', 'never-sent'] });
    expect(status).toBe(200);
    expect(json.clock).toBe(SIM_SEND_LOG_CLOCK);
    expect(Object.keys(json.sends)).toEqual(['send-log-a']);
    const t: number[] = json.sends['send-log-a'];
    expect(t).toHaveLength(tokenChunks);
    expect(tokenChunks).toBe(12);
    for (let i = 1; i < t.length; i++) expect(t[i]).toBeGreaterThanOrEqual(t[i - 1]);
    // Same clock as this process's CLOCK_MONOTONIC: every send falls inside the request.
    expect(t[0]).toBeGreaterThanOrEqual(before);
    expect(t[t.length - 1]).toBeLessThanOrEqual(after);
    expect((await sendLog({ request_ids: ['send-log-a'] })).json.sends).toEqual({});
  });

  it('a body without a list of ids is a 400 naming request_ids; GET is a 405', async () => {
    const bad = await sendLog({ request_ids: 'send-log-a' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain('request_ids');
    const get = await fetch(`${sim.baseUrl}${SIM_SEND_LOG_PATH}`);
    expect(get.status).toBe(405);
    await get.arrayBuffer();
  });

  it('stays within its bound: past it, the oldest finished streams are forgotten, a running one is kept', () => {
    expect(SEND_LOG_MAX_STAMPS).toBeGreaterThan(0);
    const log = new SendLog(10);
    const running = log.open('running');
    for (const t of [1, 2, 3]) running.t.push(t);
    for (const id of ['a', 'b', 'c']) {
      const s = log.open(id);
      for (const t of [1, 2, 3, 4]) s.t.push(t);
      log.closed(s);
    }
    // a (4) + b (4) + c (4) = 12 > 10: a goes; the running stream is not counted and stays.
    expect(log.size).toEqual({ streams: 3, stamps: 8 });
    expect(Object.keys(log.take(['a', 'b', 'running']).sends)).toEqual(['b', 'running']);
    log.closed(running); // taken while running: never counted
    expect(log.size).toEqual({ streams: 1, stamps: 4 });
    const again = log.open('c'); // a reused id starts afresh
    expect(log.size).toEqual({ streams: 1, stamps: 0 });
    log.closed(again);
  });
});

/** A closed-loop run of `requests` × `maxTokens` tokens against the simulator, not saved. */
const simRun = (requests: number, concurrency: number, maxTokens: number, more: Partial<RunLoadOptions> = {}) =>
  runLoad({
    baseUrl: sim.baseUrl,
    workload: () => ({ prompt: 'hello', maxTokens, ignoreEos: true }),
    requests,
    shape: closedLoop(concurrency),
    out: false,
    ...more,
  });

describe('stamp lag (client against the simulator)', () => {
  it('a run against the simulator records the stamp lag of every token chunk (the median arrives after it was sent)', async () => {
    const run = await simRun(300, 50, 6); // 300 requests: more than one slice of the log's ids (256)
    const lag = run.summary.health?.clientStampLag;
    const chunks = run.records.reduce((a, r) => a + r.chunkMs.length, 0);
    expect(lag).toMatchObject({ chunks, requests: 300, unmatched: 0 });
    expect(lag!.p50Ms).toBeGreaterThanOrEqual(0);
    expect(lag!.maxMs).toBeGreaterThanOrEqual(lag!.p99Ms);
    // Causal: a send time is taken before the write, a stamp after the read, even one turn's shared stamp.
    expect(lag!.minMs).toBeGreaterThanOrEqual(0);
    expect(run.manifest.clock.chunkStamp).toBe('turn');
    expect((run.manifest.client as { stampLag?: unknown }).stampLag).toEqual(lag);
  });

  it.each([
    ['one worker thread (the lessons)', { thread: true }],
    ['two worker threads', { workers: 2 }],
  ])('stamps from %s are on the run clock the log is compared on: the median chunk is late by 0–100 ms', async (_, how) => {
    const run = await simRun(8, 4, 30, how);
    const lag = run.summary.health?.clientStampLag;
    expect(lag).toMatchObject({ chunks: run.records.reduce((a, r) => a + r.chunkMs.length, 0), requests: 8, unmatched: 0 });
    // A thread clock off by the origin would read seconds, or negative.
    expect(lag!.p50Ms).toBeGreaterThanOrEqual(0);
    expect(lag!.p50Ms).toBeLessThan(100);
    expect(lag!.minMs).toBeGreaterThanOrEqual(0);
    // With threads, each worker is judged on its own chunks (4 requests × 30 ≥ 100 chunks each with two).
    expect(run.summary.health?.workers).toHaveLength((how as { workers?: number }).workers ?? 1);
    for (const w of run.summary.health?.workers ?? []) {
      expect(w.stampLagP99Ms, `worker ${w.worker}`).toEqual(expect.any(Number));
      if ((how as { workers?: number }).workers === 2) expect(w.clientBound).toBe(w.stampLagP99Ms! > 5);
    }
  });

  it("an interrupted run saves without asking for the log (its verdict stays the loop's)", async () => {
    const ac = new AbortController();
    const run = await simRun(40, 4, 60, { signal: ac.signal, onRecord: () => ac.abort() });
    expect(run.manifest.status).toBe('interrupted');
    expect(run.records.some((r) => r.ok && r.chunkMs.length > 0)).toBe(true);
    expect(run.summary.health?.clientStampLag).toBeUndefined();
  });

  it('stampLagOf pairs chunks by position and leaves out what does not match', () => {
    const rec = (requestId: string, chunkMs: number[], extra = {}) => ({ requestId, chunkMs, ok: true, warmup: false, ...extra });
    const records = [
      rec('a', [10, 20, 30]),
      rec('b', [10, 20]), // the log has three sends: left out
      rec('w', [10], { warmup: true }), // warm-up: not measured
      rec('d', [5]),
      rec('d', [6]), // the same id twice: both left out
    ];
    const sends = { a: [1009, 1018, 1029.5], b: [1, 2, 3], d: [1004] };
    const lag = stampLagOf(records, sends, 1000)!;
    expect(lag).toMatchObject({ chunks: 3, requests: 1, unmatched: 3, maxMs: 2 });
    expect(lag.itlP99Ms.measured).toBeCloseTo(10, 6);
    expect(lag.itlP99Ms.sent).toBeCloseTo(9 + 0.99 * 2.5, 2); // numpy's linear p99 of the sent gaps 9 and 11.5
    expect(stampLagOf([rec('x', [1])], {}, 0)).toBeUndefined();
  });
});

describe('judgeStampLag: the client-bound verdict judged on the stamps', () => {
  const loopReason = 'The load generator was the bottleneck: event-loop delay p99 6.1 ms > 5 ms (max 9.0 ms). …';
  const cpuReason = 'The load generator was the bottleneck: it used 95 % of one core (> 90 %). …';
  const health = (reasons: string[]): ClientHealth => ({
    eventLoopDelayP50Ms: 0.5,
    eventLoopDelayP99Ms: 6.1,
    eventLoopDelayMaxMs: 9,
    cpuUserMs: 500,
    cpuSystemMs: 100,
    wallMs: 2000,
    cpuPercentOfOneCore: 30,
    loadAverage1m: 1,
    cores: 2,
    clientBound: reasons.length > 0,
    reasons,
  });
  const lag = (p99Ms: number, chunks = 5000): StampLag => ({
    chunks,
    requests: 50,
    unmatched: 0,
    p50Ms: 1.2,
    p99Ms,
    maxMs: 12,
    minMs: 0.1,
    itlP99Ms: { measured: 16.5, sent: 13.3 },
  });

  it('stamps late beyond the threshold: client-bound, in words with the figures, whatever the loop said', () => {
    const v = judgeStampLag(health([]), lag(6.7));
    expect(v.clientBound).toBe(true);
    expect(v.reasons).toEqual([
      "The load generator was the bottleneck: checked against the simulator's own send times, token chunks were stamped " +
        'late by 6.7 ms > 5 ms at p99 (p50 1.2, max 12.0 ms, 5000 chunks). TTFT and E2E include that much of the ' +
        "client's own delay. ITL p99 was 16.5 ms as measured and 13.3 ms as the simulator sent the same chunks.",
    ]);
    expect(v.stampLag?.p99Ms).toBe(6.7);
  });

  it('with few chunks, says how many of the latest its p99 rests on (numpy: between index 206 and 207 of 210)', () => {
    expect(judgeStampLag(health([]), lag(5.5, 210)).reasons[0]).toContain(
      'late by 5.5 ms > 5 ms at p99 (p50 1.2, max 12.0 ms, only 210 chunks, so the p99 rests on the latest 4). ',
    );
    expect(judgeStampLag(health([]), lag(5.5, FEW_CHUNKS)).reasons[0]).toContain(`max 12.0 ms, ${FEW_CHUNKS} chunks). `);
  });

  it('stamps on time: a late loop is not a verdict; a CPU reason stays', () => {
    expect(judgeStampLag(health([loopReason]), lag(3.2))).toMatchObject({ clientBound: false, reasons: [] });
    expect(judgeStampLag(health([loopReason, cpuReason]), lag(3.2))).toMatchObject({ clientBound: true, reasons: [cpuReason] });
  });

  it(`below ${STAMP_LAG_MIN_CHUNKS} chunks the loop's verdict stands (the lag is kept); no log changes nothing`, () => {
    const few = judgeStampLag(health([loopReason]), lag(0.4, STAMP_LAG_MIN_CHUNKS - 1));
    expect(few).toMatchObject({ clientBound: true, reasons: [loopReason] });
    expect(few.stampLag?.chunks).toBe(STAMP_LAG_MIN_CHUNKS - 1);
    const h = health([loopReason]);
    expect(judgeStampLag(h, undefined)).toBe(h);
  });

  it('the notebook banner of a client-bound run says how late the chunks were stamped, in Chinese', () => {
    const health = { clientBound: true, simBehind: false, warnings: ['…'], clientStampLag: lag(6.7) };
    const lines = healthBannerLines({ health } as unknown as RunSummary);
    expect(lines[1]).toBe(
      '对照模拟器自己的发送时刻，客户端给 token 块打时间戳晚了 p99 6.7 ms（p50 1.2 ms；打点误差 stamp error，共 5000 块）。' +
        'TTFT 和 E2E 里含有这么多客户端自己的延迟。',
    );
    expect(healthBannerLines({ health: { ...health, clientBound: false } } as unknown as RunSummary)).toEqual([]);
  });
});
