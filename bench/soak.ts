/**
 * `npm run soak`: a long run against the simulator with 20 % faults mixed in, watching for leaks.
 * 10,000 short requests (4 output tokens) in a closed loop of 64, every fault kind but the server
 * exit. Memory (rss, heapUsed after a full GC) and active handles (`getActiveResourcesInfo`) are
 * read at the start, every 10 % and at the end; flat is the target. Also checks that the client's
 * error codes equal the simulator's injected counts and that every request reached the disk.
 * Prints the figures and writes `bench/results/soak.json`.
 *
 * Then the simulator under hostile input (bench/sim-abuse.ts: big prompts, 1 MB /tokenize
 * calls, mid-stream disconnects), unless `LOADLAB_SOAK_ABUSE=0`.
 *
 * Env: `LOADLAB_SOAK_N` (default 10000), `LOADLAB_SOAK_CONCURRENCY` (default 64).
 * Not part of `npm test` or `npm run bench`.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import { faultArgs, FAULT_KINDS, type FaultKind, type FaultSettings } from '../src/sim/http/faults';
import { startSim } from '../src/sim/start';
import type { ErrorCode, RequestRecord } from '../src/types';
import { fullGc, loadLine, machine, pause, round, writeResult, type BenchResult } from './common';
import { runAbuse } from './sim-abuse';

/** 20 % of requests get a fault; stalls outlast the idle timeout, so they end as idle_timeout. */
const FAULTS: FaultSettings = {
  http500: 0.03,
  http503: 0.03,
  reset: 0.03,
  streamError: 0.03,
  malformed: 0.03,
  stall: 0.03,
  stallS: 2,
  slowHeaders: 0.02,
  slowHeadersS: 0.2,
};
const IDLE_TIMEOUT_MS = 1000;
/** The client code each fault must produce (slow headers only delay a request that succeeds). */
const EXPECTED_CODE: Record<FaultKind, ErrorCode | 'ok'> = {
  http_500: 'http_5xx',
  http_503: 'http_5xx',
  reset: 'connection_reset',
  stream_error: 'stream_error',
  stall: 'idle_timeout',
  slow_headers: 'ok',
  malformed: 'parse',
};

interface Sample {
  /** Requests recorded so far. */
  done: number;
  tS: number;
  rssMiB: number;
  heapUsedMiB: number;
  /** `process.getActiveResourcesInfo()` counted by type. */
  handles: Record<string, number>;
  handlesTotal: number;
  /** The simulator process's resident memory (Linux /proc), MiB. */
  simRssMiB?: number;
}

const MiB = 2 ** 20;

function simRss(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? round(Number(m[1]) / 1024, 1) : undefined;
  } catch {
    return undefined;
  }
}

function sample(done: number, t0: number, simPid: number): Sample {
  fullGc();
  const m = process.memoryUsage();
  const handles: Record<string, number> = {};
  for (const h of process.getActiveResourcesInfo()) handles[h] = (handles[h] ?? 0) + 1;
  return {
    done,
    tS: round((performance.now() - t0) / 1000, 1),
    rssMiB: round(m.rss / MiB, 1),
    heapUsedMiB: round(m.heapUsed / MiB, 1),
    handles,
    handlesTotal: Object.values(handles).reduce((a, b) => a + b, 0),
    simRssMiB: simRss(simPid),
  };
}

/** The simulator's injected counts, over a connection that is closed afterwards (no handle left behind). */
function injected(baseUrl: string): Promise<Record<FaultKind, number>> {
  return new Promise((resolve, reject) => {
    get(`${baseUrl}/loadlab/faults`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve((JSON.parse(text) as { injected: Record<FaultKind, number> }).injected));
    }).on('error', reject);
  });
}

function fmt(s: Sample): string {
  const h = Object.entries(s.handles)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return (
    `${String(s.done).padStart(6)} done  t ${String(s.tS).padStart(6)} s  rss ${s.rssMiB} MiB  heapUsed ${s.heapUsedMiB} MiB  ` +
    `handles ${s.handlesTotal} (${h})${s.simRssMiB !== undefined ? `  sim rss ${s.simRssMiB} MiB` : ''}`
  );
}

/** The client's error codes counted, against what the injected faults should have produced. */
function compareCodes(records: RequestRecord[], n: number, inj: Record<FaultKind, number>) {
  const codes: Record<string, number> = {};
  for (const rec of records) {
    const c = rec.ok ? 'ok' : rec.error!.code;
    codes[c] = (codes[c] ?? 0) + 1;
  }
  const expected: Record<string, number> = { ok: n };
  for (const k of FAULT_KINDS) {
    const code = EXPECTED_CODE[k];
    if (code === 'ok') continue;
    expected[code] = (expected[code] ?? 0) + inj[k];
    expected.ok -= inj[k];
  }
  const codesMatch = JSON.stringify(Object.entries(codes).sort()) === JSON.stringify(Object.entries(expected).sort());
  return { codes, expected, codesMatch };
}

/** Runs the soak; returns its result (also written to bench/results/soak.json). */
export async function run(): Promise<BenchResult> {
  const n = Number(process.env.LOADLAB_SOAK_N ?? 10_000);
  const concurrency = Number(process.env.LOADLAB_SOAK_CONCURRENCY ?? 64);
  if (!Number.isInteger(n) || n < 10)
    throw new TypeError(`LOADLAB_SOAK_N must be an integer ≥ 10, got ${process.env.LOADLAB_SOAK_N}`);
  const machineBefore = machine();
  const sim = await startSim({ flags: { seed: 1 }, extraArgs: ['--stats-interval-s', '0', ...faultArgs(FAULTS)] });
  const tmp = mkdtempSync(join(tmpdir(), 'loadlab-soak-'));
  const lines: string[] = [];
  const say = (l: string) => {
    lines.push(l);
    console.log(l);
  };
  try {
    say(
      `soak: ${n} requests, closed loop of ${concurrency}, 4 output tokens, faults ${JSON.stringify(FAULTS)}, idle timeout ${IDLE_TIMEOUT_MS} ms (${loadLine(machineBefore)})`,
    );
    const before = await injected(sim.baseUrl);
    await pause(200);
    const t0 = performance.now();
    const samples: Sample[] = [sample(0, t0, sim.pid)];
    say(fmt(samples[0]));
    let done = 0;
    let next = Math.ceil(n / 10);
    let r: { records: RequestRecord[]; dir?: string } | undefined = await runLoad({
      baseUrl: sim.baseUrl,
      workload: [makeRequest('Hi', { maxTokens: 4, fixedOutput: true })],
      requests: n,
      shape: closedLoop(concurrency),
      idleTimeoutMs: IDLE_TIMEOUT_MS,
      out: join(tmp, 'run'),
      onRecord: () => {
        if (++done < next) return;
        next += Math.ceil(n / 10);
        samples.push(sample(done, t0, sim.pid));
        say(fmt(samples[samples.length - 1]));
      },
    });
    const elapsedS = (performance.now() - t0) / 1000;
    const after = await injected(sim.baseUrl);
    const inj = Object.fromEntries(FAULT_KINDS.map((k) => [k, after[k] - before[k]])) as Record<FaultKind, number>;

    const { codes, expected, codesMatch } = compareCodes(r.records, n, inj);
    const onDisk = readFileSync(join(r.dir!, 'requests.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    say(`${n} requests in ${elapsedS.toFixed(1)} s (${(n / elapsedS).toFixed(0)} req/s); injected ${JSON.stringify(inj)}`);
    say(
      `client codes ${JSON.stringify(codes)} ${codesMatch ? '==' : '!='} expected from injected ${JSON.stringify(expected)}; on disk ${onDisk}/${n}`,
    );

    await pause(200); // let closed sockets and last immediates go before counting handles
    const withRecords = sample(n, t0, sim.pid);
    r = undefined; // the runner hands back every record; drop them to see what else is left
    const end = sample(n, t0, sim.pid);
    say(`end, records still held: ${fmt(withRecords)}`);
    say(`end, records released:   ${fmt(end)}`);
    const start = samples[0];
    const mid = samples[Math.floor(samples.length / 2)];
    const perRecordKiB = ((withRecords.heapUsedMiB - end.heapUsedMiB) * 1024) / n;
    say(
      `heapUsed start ${start.heapUsedMiB} → mid ${mid.heapUsedMiB} → end ${withRecords.heapUsedMiB} MiB (records held, ≈ ${perRecordKiB.toFixed(2)} KiB each) → ${end.heapUsedMiB} MiB released; rss start ${start.rssMiB} → end ${end.rssMiB} MiB; handles ${start.handlesTotal} → ${end.handlesTotal}`,
    );

    const heapLeftMiB = end.heapUsedMiB - start.heapUsedMiB;
    const targets = [
      {
        target: 'client codes == injected faults',
        measured: codesMatch ? 'equal' : `${JSON.stringify(codes)} vs ${JSON.stringify(expected)}`,
        met: codesMatch,
      },
      { target: 'every request on disk', measured: `${onDisk}/${n}`, met: onDisk === n },
      {
        target: 'heap flat: end (records released) − start ≤ 5 MiB',
        measured: `${heapLeftMiB.toFixed(1)} MiB`,
        met: heapLeftMiB <= 5,
      },
      {
        target: 'active handles back to the start count',
        measured: `${start.handlesTotal} → ${end.handlesTotal}`,
        met: end.handlesTotal <= start.handlesTotal,
      },
    ];
    for (const t of targets) say(`${t.met ? 'MET ' : 'MISS'} ${t.target}: ${t.measured}`);
    return {
      name: 'soak',
      lines,
      targets,
      machineBefore,
      machineAfter: machine(),
      data: {
        n,
        concurrency,
        faults: FAULTS,
        idleTimeoutMs: IDLE_TIMEOUT_MS,
        elapsedS: round(elapsedS, 1),
        injected: inj,
        codes,
        expected,
        onDisk,
        samples,
        endWithRecords: withRecords,
        end,
        perRecordKiB: round(perRecordKiB, 3),
      },
    };
  } finally {
    await sim.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

run().then(
  async (r) => {
    if (process.env.LOADLAB_SOAK_ABUSE !== '0') {
      const a = await runAbuse((l) => {
        r.lines.push(l);
        console.log(l);
      });
      r.targets.push(...a.targets);
      r.data = { ...(r.data as object), abuse: a.data };
      r.machineAfter = machine();
    }
    console.log(`wrote ${writeResult(r)}`);
    if (r.targets.some((t) => !t.met)) process.exitCode = 1;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
