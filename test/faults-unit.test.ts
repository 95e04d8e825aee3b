/**
 * Fault injection without sockets: settings and flags, seeded decisions, and exactly what each
 * fault does to a reply (driven through the hooks with a recording `Reply`).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { diagnoseLaunchFailure } from '../src/vllm/launch-diagnosis';
import { formatFlagsHelp, parseServeArgs, toServeArgs } from '../src/vllm/flags';
import {
  createFaults,
  describeFaults,
  faultArgs,
  isLoopback,
  oomLines,
  resolveFaultSettings,
  type FaultSettings,
} from '../src/sim/http/faults';
import type { RequestInfo } from '../src/sim/http/reply';
import { predictedCounts, recordingReply } from './faults-harness';

const chat: RequestInfo = { method: 'POST', path: '/v1/chat/completions', headers: {} };
const ERROR_EVENT = '{"error": {"message": "Internal server error", "type": "InternalServerError", "param": null, "code": 500}}';

/** Runs one request through an injector whose only fault has fraction 1. */
async function oneRequest(settings: FaultSettings, events = 5) {
  const f = createFaults({ settings });
  const sink = recordingReply();
  const aborted: string[] = [];
  const r = f.hooks.wrap!(sink, chat);
  r.onAbort(() => aborted.push('engine aborted'));
  const answered = await f.hooks.intercept!(r, chat);
  if (!answered) {
    r.startStream();
    for (let i = 1; i <= events; i++) r.event(`{"n":${i},"choices":[{"text":"t${i}"}]}`);
    r.done();
  }
  return { f, sink, calls: sink.calls, aborted, r };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('fault settings and flags', () => {
  it('parses the --fault-* flags into args.faults and round-trips through faultArgs', () => {
    const s: FaultSettings = {
      http500: 0.1,
      http503: 0.05,
      reset: 0.1,
      streamError: 0.1,
      stall: 0.1,
      stallS: 5,
      slowHeaders: 0.1,
      slowHeadersS: 2,
      malformed: 0.1,
      afterChunks: 3,
      exitAfterS: 7,
    };
    const a = parseServeArgs(faultArgs(s));
    expect(a.faults).toEqual(s);
    expect(a.flags).toEqual({});
    expect(parseServeArgs([]).faults).toEqual({});
    // Simulator only: never written out for a real vLLM, and marked in the help.
    expect(toServeArgs(a.flags, { target: 'vllm' })).toEqual([]);
    expect(formatFlagsHelp()).toMatch(
      /--fault-http-500 N\s+Fraction of completion requests answered HTTP 500.*\[simulator only\]/,
    );
    expect(() => parseServeArgs(['--fault-reset', '1.5'])).toThrow("--fault-reset must be a number in [0, 1], got '1.5'");
    expect(() => parseServeArgs(['--fault-stall'])).toThrow('--fault-stall needs a value, e.g. --fault-stall 0.1');
  });

  it('fills defaults and rejects what cannot work, naming the fix', () => {
    expect(resolveFaultSettings({})).toMatchObject({ http500: 0, stallS: 5, slowHeadersS: 2, afterChunks: 2, exitAfterS: 0 });
    expect(() => resolveFaultSettings({ http500: 0.6, reset: 0.5 })).toThrow(
      'fault fractions add up to 1.1, more than 1: each request gets at most one fault, so lower them',
    );
    expect(() => resolveFaultSettings({ resett: 0.1 } as FaultSettings)).toThrow(
      /unknown fault setting 'resett'; known: http500, http503, reset/,
    );
    expect(() => resolveFaultSettings({ stall: -0.1 })).toThrow('fault setting stall must be a fraction in [0, 1], got -0.1');
    expect(() => resolveFaultSettings({ afterChunks: 1.5 })).toThrow(
      'fault setting afterChunks must be an integer in [0, 10000000], got 1.5',
    );
    expect(() => createFaults({ settings: { http503: 2 } })).toThrow(/http503 must be a fraction/);
    expect(describeFaults(resolveFaultSettings({ http500: 0.1, stall: 0.05, exitAfterS: 5 }))).toBe(
      'http_500 10%, stall 5% (5 s), mid-stream after 2 events, server exit after 5 s',
    );
    expect(describeFaults(resolveFaultSettings({}))).toBe('');
  });

  it('recognises loopback peers only', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopback(a)).toBe(true);
    for (const a of ['192.0.2.2', '10.0.0.1', '::ffff:10.0.0.1', '0.0.0.0', '::', '', undefined])
      expect(isLoopback(a)).toBe(false);
  });
});

describe('seeded decisions', () => {
  it('the same seed gives the same counts; every kind shows up at about its fraction', async () => {
    const s = { http500: 0.1, http503: 0.1, reset: 0.1, streamError: 0.1, stall: 0.1, slowHeaders: 0.1, malformed: 0.1 };
    const a = await predictedCounts(s, 7, 2000);
    expect(await predictedCounts(s, 7, 2000)).toEqual(a);
    expect(await predictedCounts(s, 8, 2000)).not.toEqual(a);
    for (const n of Object.values(a)) expect(n).toBeGreaterThan(140), expect(n).toBeLessThan(260);
  });

  it('only completion requests draw; other routes pass untouched', async () => {
    const f = createFaults({ settings: { http500: 1 } });
    const sink = recordingReply();
    for (const info of [
      { method: 'GET', path: '/v1/models' },
      { method: 'GET', path: '/metrics' },
      { method: 'POST', path: '/tokenize' },
    ]) {
      const r = f.hooks.wrap!(sink, { ...info, headers: {} });
      expect(r).toBe(sink);
      expect(await f.hooks.intercept!(r, { ...info, headers: {} })).toBe(false);
    }
    expect(f.injected().http_500).toBe(0);
  });
});

describe('what each fault does to a stream', () => {
  it('http_500 / http_503: answered at once with vLLM error bodies, nothing else runs', async () => {
    expect((await oneRequest({ http500: 1 })).calls).toEqual(['error 500']);
    const { calls, f } = await oneRequest({ http503: 1 });
    expect(calls).toEqual(['error 503']);
    expect(f.injected()).toMatchObject({ http_503: 1, http_500: 0 });
  });

  it('reset: the socket is destroyed on the first write after afterChunks events; later output is dropped', async () => {
    const { calls, r, f } = await oneRequest({ reset: 1, afterChunks: 2 });
    expect(calls).toEqual([
      'start',
      'event {"n":1,"choices":[{"text":"t1"}]}',
      'event {"n":2,"choices":[{"text":"t2"}]}',
      'destroy',
    ]);
    expect(r.closed).toBe(true);
    expect(f.injected().reset).toBe(1);
  });

  it("stream_error: vLLM's json.dumps error event, then [DONE], and the engine request is aborted", async () => {
    const { calls, aborted, f } = await oneRequest({ streamError: 1, afterChunks: 1 });
    expect(calls).toEqual(['start', 'event {"n":1,"choices":[{"text":"t1"}]}', 'streamError 500', 'done']);
    expect(aborted).toEqual(['engine aborted']);
    expect(f.injected().stream_error).toBe(1);
    // The bytes reply.ts writes for it (pyJsonDumps of the error body), as vLLM sends them:
    const { ApiError, pyJsonDumps } = await import('../src/sim/http/reply');
    expect(pyJsonDumps(new ApiError(500, 'Internal server error', 'InternalServerError').body())).toBe(ERROR_EVENT);
  });

  it('malformed: one event is cut in half, the stream then carries on to [DONE]', async () => {
    const { calls } = await oneRequest({ malformed: 1, afterChunks: 2 });
    const third = '{"n":3,"choices":[{"text":"t3"}]}';
    expect(calls).toEqual([
      'start',
      'event {"n":1,"choices":[{"text":"t1"}]}',
      'event {"n":2,"choices":[{"text":"t2"}]}',
      `event ${third.slice(0, Math.floor(third.length / 2))}`,
      'event {"n":4,"choices":[{"text":"t4"}]}',
      'event {"n":5,"choices":[{"text":"t5"}]}',
      'done',
    ]);
    expect(() => JSON.parse(third.slice(0, Math.floor(third.length / 2)))).toThrow();
  });

  it('a stream shorter than afterChunks is hit at its end', async () => {
    expect((await oneRequest({ reset: 1, afterChunks: 9 }, 2)).calls.at(-1)).toBe('destroy');
    const m = (await oneRequest({ malformed: 1, afterChunks: 9 }, 2)).calls;
    expect(m.slice(-2)).toEqual(['event {"n":2,"choices"', 'done']); // a damaged copy of the last event
  });

  it('stall: output after afterChunks events is held for stallS, then flushed in order', async () => {
    vi.useFakeTimers();
    const { calls } = await oneRequest({ stall: 1, stallS: 5, afterChunks: 2 }, 4);
    expect(calls).toEqual(['start', 'event {"n":1,"choices":[{"text":"t1"}]}', 'event {"n":2,"choices":[{"text":"t2"}]}']);
    vi.advanceTimersByTime(4999);
    expect(calls).toHaveLength(3);
    vi.advanceTimersByTime(1);
    expect(calls.slice(3)).toEqual([
      'event {"n":3,"choices":[{"text":"t3"}]}',
      'event {"n":4,"choices":[{"text":"t4"}]}',
      'done',
    ]);
  });

  it('stall: a client that gives up cancels the held output and the timer', async () => {
    vi.useFakeTimers();
    const { calls, sink } = await oneRequest({ stall: 1, stallS: 5, afterChunks: 1 }, 3);
    sink.abortAll();
    expect(vi.getTimerCount()).toBe(0);
    expect(calls).toHaveLength(2);
  });

  it('slow_headers: nothing is sent until slowHeadersS has passed, then the request runs normally', async () => {
    vi.useFakeTimers();
    const f = createFaults({ settings: { slowHeaders: 1, slowHeadersS: 2 } });
    const sink = recordingReply();
    const r = f.hooks.wrap!(sink, chat);
    let answered: boolean | undefined;
    void (f.hooks.intercept!(r, chat) as Promise<boolean>).then((a) => {
      answered = a;
    });
    await vi.advanceTimersByTimeAsync(1999);
    expect(answered).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(answered).toBe(false); // not answered by the fault: the normal handler runs now
    expect(f.injected().slow_headers).toBe(1);
  });
});

describe('server exit', () => {
  it('prints a CUDA out-of-memory error and exits 1, exitAfterS after start()', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const codes: number[] = [];
    const f = createFaults({ settings: { exitAfterS: 3 }, log: (l) => lines.push(l), exit: (c) => codes.push(c) });
    vi.advanceTimersByTime(10_000);
    expect(codes).toEqual([]); // not armed before the server listens
    f.start();
    vi.advanceTimersByTime(2999);
    expect(codes).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(codes).toEqual([1]);
    expect(lines.join('\n')).toMatch(/torch\.OutOfMemoryError: CUDA out of memory/);
    expect(diagnoseLaunchFailure(lines, { model: 'm', port: 8000, exitCode: 1 }).kind).toBe('oom');
    expect(oomLines(3).at(-1)).toContain('--fault-exit-after-s');
  });

  it('close() disarms it; configure() re-arms from now', () => {
    vi.useFakeTimers();
    const codes: number[] = [];
    const f = createFaults({ settings: { exitAfterS: 1 }, log: () => {}, exit: (c) => codes.push(c) });
    f.start();
    vi.advanceTimersByTime(500);
    f.configure({ exitAfterS: 2 });
    vi.advanceTimersByTime(1500);
    expect(codes).toEqual([]);
    vi.advanceTimersByTime(500);
    expect(codes).toEqual([1]);
    f.configure({ exitAfterS: 1 });
    f.close();
    vi.advanceTimersByTime(5000);
    expect(codes).toEqual([1]);
  });
});
