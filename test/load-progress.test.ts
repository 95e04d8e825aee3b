import { describe, expect, it } from 'vitest';
import { createProgress, formatProgress, type Progress } from '../src/runner/progress';

const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return {
    writes,
    stream: { isTTY, write: (s: string) => (writes.push(s), true) } as unknown as NodeJS.WritableStream & { isTTY: boolean },
  };
}

describe('progress', () => {
  it('formats done, failed, in flight and p95 TTFT', () => {
    const p: Progress = { done: 12, failed: 1, inFlight: 8, total: 50, p95TtftMs: 215.4, elapsedS: 3.21, phase: 'load' };
    expect(formatProgress(p)).toBe('done 12/50  failed 1  in flight 8  p95 TTFT 215 ms  3.2 s');
    expect(formatProgress({ ...p, p95TtftMs: NaN, phase: 'warmup' })).toBe(
      'warm-up  done 12/50  failed 1  in flight 8  p95 TTFT –  3.2 s',
    );
  });

  it('callback: at most one call per interval, a final one, warm-up left out of the counts', async () => {
    const calls: Progress[] = [];
    const t = createProgress(3, () => 1000, { sink: (p) => calls.push(p), intervalMs: 40 });
    t.record(true, 999, true); // warm-up
    for (let i = 0; i < 50; i++) t.setInFlight(i % 3);
    t.record(true, 100, false);
    t.record(false, undefined, false);
    await wait(100);
    t.record(true, 200, false);
    t.finish();
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.length).toBeLessThanOrEqual(4);
    const last = calls.at(-1)!;
    expect(last).toMatchObject({ done: 3, failed: 1, total: 3, phase: 'done', elapsedS: 1 });
    expect(last.p95TtftMs).toBeCloseTo(195, 6); // numpy linear: 100 + 0.95·100
  });

  it('TTY rewrites one line with \\r; other streams get whole lines', async () => {
    const tty = fakeStream(true);
    const t1 = createProgress(2, () => 0, { sink: true, stream: tty.stream, intervalMs: 10 });
    t1.record(true, 5, false);
    await wait(30);
    t1.finish();
    expect(tty.writes.every((w) => w.startsWith('\r') || w === '\n')).toBe(true);
    expect(tty.writes.at(-1)).toBe('\n');
    const log = fakeStream(false);
    const t2 = createProgress(2, () => 0, { sink: true, stream: log.stream });
    t2.record(true, 5, false);
    t2.finish();
    expect(log.writes).toEqual(['done 1/2  failed 0  in flight 0  p95 TTFT 5 ms  0.0 s\n']);
  });

  it('sink false prints nothing and keeps state', () => {
    const t = createProgress(1, () => 0, { sink: false });
    t.record(true, 3, false);
    expect(t.state.done).toBe(1);
    t.finish();
  });
});
