/**
 * `calibrateClient`: a short calibration against the null server (a real child process) returns
 * sane numbers, takes about its budget, and leaves no child process behind. Stamp errors depend on
 * how busy the machine is, so only invariants are asserted; the null server's own stream shape is
 * checked exactly.
 */
import { describe, expect, it } from 'vitest';
import { createStreamTimer } from '../src/client/timing';
import { calibrateClient, calibrationVerdict, modelledStepMs } from '../src/calibrate/calibrate';
import { startNullServer } from '../src/calibrate/null-server';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('calibrateClient', () => {
  it('short mode: sane numbers in about 2 s, child process gone afterwards', async () => {
    const t0 = performance.now();
    const cal = await calibrateClient({ seconds: 2, concurrencies: [1, 8], flatOutStreams: 4 });
    const wallS = (performance.now() - t0) / 1000;
    expect(wallS).toBeLessThan(8); // ≈2 s idle; start-up of a tsx child is slower on a loaded box
    expect(cal.wallSeconds).toBeGreaterThan(0);
    expect(cal.passes.map((p) => [p.mode, p.concurrency])).toEqual([
      ['paced', 1],
      ['paced', 8],
      ['flat-out', 4],
    ]);
    for (const p of cal.passes) {
      expect(p.failed).toBe(0);
      expect(p.events).toBeGreaterThan(0);
      expect(p.eventsPerSec).toBeGreaterThan(0);
      expect(p.stampErrorP50Ms).toBeGreaterThan(-0.5); // arrival never precedes the send (beyond clock-offset noise)
      expect(p.stampErrorP99Ms).toBeGreaterThanOrEqual(p.stampErrorP50Ms);
      expect(p.stampErrorMaxMs).toBeGreaterThanOrEqual(p.stampErrorP99Ms);
      expect(p.clientCpuPercent).toBeGreaterThanOrEqual(0);
      expect(p.eventLoopDelayP99Ms).toBeGreaterThanOrEqual(0);
    }
    const [p1, p8, flat] = cal.passes;
    expect(p1.gapMs).toBe(modelledStepMs(1));
    expect(p1.offeredEventsPerSec).toBeCloseTo(1000 / p1.gapMs, -1);
    // A paced pass cannot receive more than the server offered (start-up and rounding aside).
    expect(p8.eventsPerSec).toBeLessThanOrEqual(p8.offeredEventsPerSec * 1.1);
    expect(flat.eventsPerSec).toBeGreaterThan(p8.eventsPerSec);
    expect(cal.ceilingEventsPerSec).toBe(Math.max(...cal.passes.map((p) => p.eventsPerSec)));
    expect(Math.abs(cal.clockOffsetMs)).toBeLessThan(50);
    expect(cal.verdict).toMatch(/events\/s/);
    expect(cal.ok).toBe(!cal.fellBehindAt);
    expect(alive(cal.serverPid)).toBe(false);
  }, 30_000);

  it('rejects bad options with a message naming the fix', async () => {
    await expect(calibrateClient({ seconds: 0 })).rejects.toThrow(/seconds must be a number from 1 to 120/);
    await expect(calibrateClient({ concurrencies: [0] })).rejects.toThrow(/concurrencies must be integers/);
    await expect(calibrateClient({ flatOutStreams: -1 })).rejects.toThrow(/flatOutStreams must be an integer/);
  });

  it('the verdict names where the client fell behind, and why', () => {
    const pass = {
      mode: 'paced' as const,
      concurrency: 64,
      gapMs: 10.4,
      offeredEventsPerSec: 6154,
      eventsPerSec: 6000,
      events: 6000,
      failed: 0,
      stampErrorP50Ms: 2,
      stampErrorP99Ms: 9,
      stampErrorMaxMs: 12,
      eventLoopDelayP99Ms: 8,
      clientCpuPercent: 20,
      serverCpuPercent: 20,
      seconds: 1,
      keptUp: false,
    };
    const text = calibrationVerdict({
      passes: [pass],
      ceilingEventsPerSec: 6000,
      ok: false,
      stampLimitMs: 2,
      clockOffsetMs: 0,
      startupSeconds: 0.5,
      wallSeconds: 2,
      cores: 2,
      loadAverage1m: 4,
      serverPid: 1,
      fellBehindAt: { concurrency: 64, eventsPerSec: 6000, stampErrorP99Ms: 9 },
    });
    expect(text).toContain('fell behind at 64 streams');
    expect(text).toContain('other programs taking the CPU');
    expect(text).toContain('load average 4.00 on 2 cores');
  });
});

describe('null server', () => {
  it("streams vLLM's chat shape: role chunk, token chunks with send times, usage chunk, [DONE]", async () => {
    const ns = await startNullServer(0);
    try {
      const res = await fetch(`http://127.0.0.1:${ns.port}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'shape-1' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 3, null_gap_ms: 2 }),
      });
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const text = await res.text();
      const events = text
        .split('\n\n')
        .filter(Boolean)
        .map((e) => e.replace(/^data: /, ''));
      expect(events).toHaveLength(6);
      expect(JSON.parse(events[0]).choices[0].delta).toEqual({ role: 'assistant', content: '' });
      const tokens = events.slice(1, 4).map((e) => JSON.parse(e));
      expect(tokens.map((t) => t.usage.completion_tokens)).toEqual([1, 2, 3]);
      expect(tokens.map((t) => t.choices[0].finish_reason)).toEqual([null, null, 'length']);
      expect(tokens.every((t) => typeof t.t === 'number')).toBe(true);
      expect(JSON.parse(events[4])).toMatchObject({ choices: [], usage: { completion_tokens: 3 } });
      expect(events[5]).toBe('[DONE]');
      // Our own client's parser reads it as 3 token chunks.
      const timer = createStreamTimer('chat');
      timer.sent(0);
      timer.feed(text, 1);
      const rec = timer.toRecord({ index: 0, requestId: 'shape-1', intendedStartMs: 0 });
      expect(rec.ok).toBe(true);
      expect(rec.chunkMs).toHaveLength(3);
      expect(rec.outputTokens).toBe(3);
      const sent = (await (await fetch(`http://127.0.0.1:${ns.port}/sent`)).json()) as Record<string, number[]>;
      // A send time is taken once its write is in the kernel: after the chunk was made (its `t`), before the next one.
      const made = tokens.map((t) => t.t as number);
      expect(sent['shape-1']).toHaveLength(3);
      sent['shape-1'].forEach((s, i) => {
        expect(s).toBeGreaterThanOrEqual(made[i]);
        if (i + 1 < made.length) expect(s).toBeLessThanOrEqual(made[i + 1]);
      });
    } finally {
      await ns.close();
    }
  });
});
