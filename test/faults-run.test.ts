/**
 * Every fault through the REAL simulator process and the real runner: the client's error codes
 * equal the simulator's injected counters (and the seeded prediction), the other requests finish
 * normally, every request is on disk with its code, nothing rejects unhandled, and the API key
 * never reaches a file or a message.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../src/runner/runner';
import { burst, closedLoop } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import { faultArgs, type FaultSettings } from '../src/sim/http/faults';
import { startSim, type SimHandle } from '../src/sim/start';
import {
  delta,
  FAKE_KEY,
  filesContaining,
  injectedOnMetrics,
  predictedCounts,
  readRecords,
  tally,
  watchRejections,
} from './faults-harness';

const SEED = 11;
const MIX: FaultSettings = { http500: 0.08, http503: 0.07, reset: 0.08, streamError: 0.08, malformed: 0.08 };
const spec = makeRequest('Hello', { maxTokens: 6, fixedOutput: true });

let sim: SimHandle;
let tmp: string;
const rejections = watchRejections();
const savedKey = process.env.LOADLAB_API_KEY;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-faults-'));
  sim = await startSim({ flags: { seed: SEED }, extraArgs: ['--stats-interval-s', '0', ...faultArgs(MIX)] });
});

afterAll(async () => {
  await sim?.stop();
  rmSync(tmp, { recursive: true, force: true });
  if (savedKey === undefined) delete process.env.LOADLAB_API_KEY;
  else process.env.LOADLAB_API_KEY = savedKey;
  rejections.stop();
  expect(rejections.seen).toEqual([]);
});

async function postFaults(body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${sim.baseUrl}/loadlab/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

describe('faults from flags: 500, 503, reset, stream error, malformed', () => {
  it('client codes == injected counters == the seeded prediction; the rest complete; all on disk', async () => {
    const n = 150;
    process.env.LOADLAB_API_KEY = FAKE_KEY;
    const before = await injectedOnMetrics(sim.baseUrl);
    const dir = join(tmp, 'mix');
    const r = await runLoad({ baseUrl: sim.baseUrl, workload: [spec], requests: n, shape: closedLoop(8), out: dir });
    const injected = delta(await injectedOnMetrics(sim.baseUrl), before);

    // Seeded: the first n completion requests after start always get these faults.
    expect(injected).toEqual(await predictedCounts(MIX, SEED, n));
    expect(injected.http_500 * injected.http_503 * injected.reset * injected.stream_error * injected.malformed).toBeGreaterThan(
      0,
    );
    const faulted = injected.http_500 + injected.http_503 + injected.reset + injected.stream_error + injected.malformed;
    expect(tally(r.records)).toEqual({
      ok: n - faulted,
      http_500: injected.http_500,
      http_503: injected.http_503,
      connection_reset: injected.reset,
      stream_error: injected.stream_error,
      parse: injected.malformed,
    });
    const got = (await (await fetch(`${sim.baseUrl}/loadlab/faults`)).json()) as { injected: Record<string, number> };
    expect(got.injected).toEqual(await injectedOnMetrics(sim.baseUrl));

    // The requests that were not hit finished normally.
    for (const rec of r.records.filter((x) => x.ok)) {
      expect(rec).toMatchObject({ status: 200, outputTokens: 6, finishReason: 'length' });
      expect(rec.chunkMs).toHaveLength(6);
    }
    // Each failure carries what the client saw.
    for (const rec of r.records.filter((x) => !x.ok)) {
      const { code, message } = rec.error!;
      if (code === 'http_5xx')
        expect(message).toMatch(
          rec.status === 500
            ? /^HTTP 500 InternalServerError: Internal server error/
            : /^HTTP 503 Service Unavailable: Service Unavailable/,
        );
      if (code === 'stream_error') {
        expect(message).toBe('server error event mid-stream: 500 InternalServerError: Internal server error');
        expect(rec.chunkMs.length).toBeGreaterThanOrEqual(1); // it struck mid-stream, after tokens
      }
      if (code === 'parse') expect(message).toMatch(/^malformed JSON in SSE event: '\{"id":"chatcmpl-/);
      if (code === 'connection_reset') expect(message).toMatch(/closed while streaming the response/);
    }

    // On disk: every request, once, with its code; the run completed with a summary.
    const disk = readRecords(dir);
    expect(disk.map((x) => x.index).sort((a, b) => a - b)).toEqual([...Array(n).keys()]);
    const byId = new Map(r.records.map((x) => [x.requestId, x]));
    for (const d of disk)
      expect(d.ok ? 'ok' : d.error?.code).toBe(byId.get(d.requestId)!.ok ? 'ok' : byId.get(d.requestId)!.error!.code);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({ requests: n, completed: n - faulted, failed: faulted });
    expect(summary.errors).toEqual({
      http_5xx: injected.http_500 + injected.http_503,
      connection_reset: injected.reset,
      stream_error: injected.stream_error,
      parse: injected.malformed,
    });
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).status).toBe('complete');

    // API key hygiene: the key was sent (LOADLAB_API_KEY) but is nowhere in the run or the records.
    expect(filesContaining(dir, FAKE_KEY)).toEqual([]);
    expect(JSON.stringify(r)).not.toContain(FAKE_KEY);
    expect(sim.logTail(2000)).not.toContain(FAKE_KEY);
    expect(existsSync(join(dir, '.lock'))).toBe(false);
  });
});

describe('faults switched at run time (POST /loadlab/faults): stall and slow headers', () => {
  it('stall longer than the idle timeout → idle_timeout; slow headers → ok, late headers; counts exact', async () => {
    const n = 60;
    const settings: FaultSettings = { stall: 0.15, stallS: 2.5, slowHeaders: 0.15, slowHeadersS: 0.6 };
    const echoed = await postFaults({ ...settings, seed: 5 });
    expect(echoed).toMatchObject({ ...settings, http500: 0, reset: 0, malformed: 0 }); // a POST replaces every setting
    const before = await injectedOnMetrics(sim.baseUrl);
    const dir = join(tmp, 'stall');
    const r = await runLoad({
      baseUrl: sim.baseUrl,
      workload: [spec],
      requests: n,
      shape: closedLoop(8),
      idleTimeoutMs: 1500,
      out: dir,
      apiKey: FAKE_KEY,
    });
    const injected = delta(await injectedOnMetrics(sim.baseUrl), before);
    expect(injected).toEqual(await predictedCounts(settings, 5, n));
    expect(injected.stall).toBeGreaterThan(0);
    expect(injected.slow_headers).toBeGreaterThan(0);
    expect(tally(r.records)).toEqual({ ok: n - injected.stall, idle_timeout: injected.stall });

    // Slow headers: the 200 came ≥ 0.6 s after the send, for exactly the injected number of requests.
    const late = r.records.filter((x) => x.ok && x.headersMs! - x.startMs >= 590);
    expect(late).toHaveLength(injected.slow_headers);
    for (const rec of r.records.filter((x) => !x.ok)) {
      expect(rec.error!.message).toMatch(/^no bytes for idleTimeoutMs=1500 ms/);
      expect(rec.endMs - rec.startMs).toBeLessThan(2400); // gave up before the stall ended
    }
    expect(readRecords(dir)).toHaveLength(n);
    expect(filesContaining(dir, FAKE_KEY)).toEqual([]);
  });

  it('a stall shorter than the idle timeout is only a long inter-token gap', async () => {
    await postFaults({ stall: 1, stallS: 0.4, afterChunks: 2 });
    const r = await runLoad({ baseUrl: sim.baseUrl, workload: [spec], requests: 4, shape: burst(), out: false });
    for (const rec of r.records) {
      expect(rec.ok).toBe(true);
      // Chat: role chunk + first token = 2 events, then the stall, then token 2. The client's gap is the
      // stall plus the difference of its two stamps' lags: on a loaded CI machine the token before the
      // stall was once stamped 11 ms late (388.6 ms). A gap over 300 ms is the stall; no other gap is.
      expect(rec.itlMs[0]).toBeGreaterThanOrEqual(300);
      expect(Math.max(...rec.itlMs.slice(1))).toBeLessThan(300);
    }
    await postFaults({}); // all off again
  });
});
