/**
 * The whole simulator dying mid-run, as an out-of-memory vLLM does (`--fault-exit-after-s`):
 * requests in flight end as `connection_reset`, later ones as `connection_refused`, every
 * request of the run is on disk with its code, the run completes with a summary, nothing
 * rejects unhandled, and the API key is nowhere in the run folder or the messages.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import { packageRoot } from '../src/paths';
import { startSim, type SimHandle } from '../src/sim/start';
import { FAKE_KEY, filesContaining, readRecords, tally, watchRejections } from './faults-harness';

let sim: SimHandle;
let tmp: string;
const rejections = watchRejections();

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-faults-exit-'));
  sim = await startSim({ extraArgs: ['--stats-interval-s', '0', '--fault-exit-after-s', '1.5'] });
});
afterAll(async () => {
  await sim?.stop();
  rmSync(tmp, { recursive: true, force: true });
  rejections.stop();
  expect(rejections.seen).toEqual([]);
});

describe('server exit mid-run', () => {
  it('in flight → connection_reset, later → connection_refused; every request on disk; the run completes', async () => {
    const n = 200;
    const concurrency = 8;
    const dir = join(tmp, 'exit');
    const r = await runLoad({
      baseUrl: sim.baseUrl,
      apiKey: FAKE_KEY,
      out: dir,
      requests: n,
      shape: closedLoop(concurrency),
      workload: [makeRequest('Tell me a story', { maxTokens: 40, fixedOutput: true })],
    });
    const counts = tally(r.records);
    expect(Object.keys(counts).sort()).toEqual(['connection_refused', 'connection_reset', 'ok']);
    expect(counts.ok).toBeGreaterThan(0);
    const failed = r.records.filter((x) => !x.ok);
    const diedMs = Math.min(...failed.map((x) => x.endMs)); // the first failure: the client saw the death
    const inFlight = r.records.filter((x) => x.startMs < diedMs && x.endMs >= diedMs);
    // Every request in flight when it died was cut (mid-stream, or before its headers if the
    // dying server had not read it yet): at most one per connection, and at least one.
    expect(inFlight.length).toBeGreaterThanOrEqual(1);
    expect(inFlight.length).toBeLessThanOrEqual(concurrency);
    for (const x of inFlight) {
      expect(x.error?.code).toBe('connection_reset');
      expect(x.error!.message).toMatch(
        /^connection to http:\/\/127\.0\.0\.1:\d+ closed (while streaming the response|before the response headers)/,
      );
    }
    for (const x of r.records) {
      if (x.ok) expect(x.endMs).toBeLessThanOrEqual(diedMs + 5);
      if (x.error?.code === 'connection_refused')
        expect(x.error.message).toMatch(/could not connect to http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED.*is the server running/);
      // Sent after the death: nothing listens any more. In the first moments a request can still
      // go out on a kept-alive connection whose close the client has not read yet; the dead
      // peer resets it (connection_reset, before any headers). After that: refused.
      if (x.startMs >= diedMs + 100) expect(x.error?.code).toBe('connection_refused');
      else if (x.startMs >= diedMs && x.error?.code === 'connection_reset') expect(x.status).toBeUndefined();
    }
    expect(counts.connection_refused).toBeGreaterThan(n / 2);

    // On disk: all n, each with ok or a code, and a complete run with its summary.
    const disk = readRecords(dir);
    expect(disk).toHaveLength(n);
    expect(disk.map((x) => x.index).sort((a, b) => a - b)).toEqual([...Array(n).keys()]);
    for (const d of disk) expect(d.ok || typeof d.error?.code === 'string').toBe(true);
    expect(tally(disk)).toEqual(counts);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
    expect(summary).toMatchObject({
      requests: n,
      completed: counts.ok,
      errors: { connection_reset: counts.connection_reset, connection_refused: counts.connection_refused },
    });
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).status).toBe('complete');

    // The key was sent on every request but is in no file and no message.
    expect(filesContaining(dir, FAKE_KEY)).toEqual([]);
    expect(JSON.stringify(r)).not.toContain(FAKE_KEY);

    // The simulator printed an OOM error and is gone.
    expect(sim.logTail(10)).toMatch(/torch\.OutOfMemoryError: CUDA out of memory/);
    expect(() => process.kill(sim.pid, 0)).toThrow(/ESRCH/);
  });

  it('the process exits with code 1 and the OOM lines on stderr', async () => {
    const root = packageRoot();
    const tsx = pathToFileURL(createRequire(join(root, 'package.json')).resolve('tsx')).href;
    const child = spawn(
      process.execPath,
      [
        '--import',
        tsx,
        join(root, 'src', 'sim', 'main.ts'),
        '--port',
        '0',
        '--stats-interval-s',
        '0',
        '--fault-exit-after-s',
        '0.2',
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b;
    });
    child.stderr.on('data', (b: Buffer) => {
      err += b;
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(1);
    expect(out).toMatch(/SIMULATED FAULTS on \(seed 0\): server exit after 0\.2 s/);
    expect(out).toMatch(/LOADLAB_SIM_LISTENING http:\/\/127\.0\.0\.1:\d+/);
    expect(err).toMatch(/^ERROR \d\d-\d\d \d\d:\d\d:\d\d \[core\.py:\d+\] EngineCore encountered a fatal error\./m);
    expect(err).toMatch(/torch\.OutOfMemoryError: CUDA out of memory\. Tried to allocate/);
  });
});
