/**
 * The simulator under hostile input, measured (issue #17 items 2 and 3): a stream's worst
 * token gap and /health's worst latency, first with nothing else going on (the machine's own
 * noise), then while a 1 MB prompt without spaces and a 60 MB prompt arrive; the simulator's
 * resident memory before, at its peak and after; then 300 distinct 1 MB /tokenize calls.
 * Targets: worst gap and /health < 100 ms during the big prompts, memory back within 50 MiB.
 * On a shared machine read the figures next to the load average printed with them.
 *
 * `npx tsx bench/sim-abuse.ts`, or the tail of `npm run soak`. Env: `LOADLAB_ABUSE_TOKENIZE_N`
 * (default 300). Writes `bench/results/sim-abuse.json`.
 */
import { startSim } from '../src/sim/start';
import { disconnectMidStream, metricValue, postRaw, rssMiB, watchHealth, watchStream } from '../test/helpers/sim-abuse';
import { loadLine, machine, pause, round, writeResult, type BenchResult } from './common';

interface Window {
  worstGapMs: number;
  healthMaxMs: number;
  healthN: number;
  healthFailures: number;
  chunks: number;
}

/** Runs `during` while a stream and a /health poller are watched. */
async function watched(baseUrl: string, during: () => Promise<void>): Promise<Window> {
  const stream = watchStream(baseUrl);
  await stream.started;
  const health = watchHealth(baseUrl);
  const c0 = stream.chunks;
  await during();
  await health.stop();
  stream.stop();
  return {
    worstGapMs: round(stream.worstGapMs, 1),
    healthMaxMs: round(Math.max(...health.latencies), 1),
    healthN: health.latencies.length,
    healthFailures: health.failures,
    chunks: stream.chunks - c0,
  };
}

async function settle(pid: number, baseline: number, timeoutMs = 30_000): Promise<number> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end && rssMiB(pid) > baseline + 50) await pause(500);
  return round(rssMiB(pid), 1);
}

/** Runs the abuse measurements; `say` prints a line. */
export async function runAbuse(say: (line: string) => void): Promise<Pick<BenchResult, 'targets' | 'data'>> {
  const nTok = Number(process.env.LOADLAB_ABUSE_TOKENIZE_N ?? 300);
  const sim = await startSim({ extraArgs: ['--stats-interval-s', '0'] });
  try {
    const u = sim.baseUrl;
    await postRaw(u, '/tokenize', JSON.stringify({ prompt: 'warm up '.repeat(200) }));
    await postRaw(u, '/v1/chat/completions', JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }));
    await pause(1000);
    const baseline = round(rssMiB(sim.pid), 1);
    say(
      `sim rss baseline ${baseline} MiB (/metrics process_resident_memory_bytes ${round((await metricValue(u, 'process_resident_memory_bytes')) / 2 ** 20, 1)} MiB); ${loadLine()}`,
    );

    const control = await watched(u, () => pause(10_000));
    say(
      `control, 10 s of nothing else: stream worst gap ${control.worstGapMs} ms over ${control.chunks} chunks, /health max ${control.healthMaxMs} ms (n ${control.healthN}); ${loadLine()}`,
    );

    const oneMb = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'a'.repeat(1_000_000) }], max_tokens: 5 }));
    const sixtyMb = Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: 'b'.repeat(60_000_000) }], max_tokens: 5 }));
    let peak = baseline;
    const windows: Record<string, Window> = {};
    for (const [name, body] of [
      ['1 MB without spaces', oneMb],
      ['60 MB', sixtyMb],
    ] as const) {
      let reply = '';
      windows[name] = await watched(u, async () => {
        const poll = setInterval(() => {
          peak = Math.max(peak, rssMiB(sim.pid));
        }, 100);
        const r = await postRaw(u, '/v1/chat/completions', body);
        clearInterval(poll);
        reply = `HTTP ${r.status} in ${round(r.ms / 1000, 2)} s: ${r.text.slice(12, 150)}…`;
      });
      const w = windows[name];
      say(`${name}: ${reply}`);
      say(
        `  meanwhile: stream worst gap ${w.worstGapMs} ms over ${w.chunks} chunks, /health max ${w.healthMaxMs} ms (n ${w.healthN}, failures ${w.healthFailures}); ${loadLine()}`,
      );
    }
    const all = Object.values(windows);
    const big = {
      worstGapMs: Math.max(...all.map((w) => w.worstGapMs)),
      healthMaxMs: Math.max(...all.map((w) => w.healthMaxMs)),
      healthFailures: all.reduce((a, w) => a + w.healthFailures, 0),
    };
    const afterBig = await settle(sim.pid, baseline);
    say(`sim rss: baseline ${baseline} → peak ${round(peak, 1)} → after ${afterBig} MiB`);

    let next = 0;
    let tokPeak = baseline;
    const t0 = performance.now();
    const workerLoop = async () => {
      for (let i = next++; i < nTok; i = next++) {
        const r = await postRaw(u, '/tokenize', JSON.stringify({ prompt: `${i} ${'tokenize me '.repeat(83_334)}` }));
        if (r.status !== 200) throw new Error(`/tokenize ${i}: HTTP ${r.status} ${r.text.slice(0, 200)}`);
        tokPeak = Math.max(tokPeak, rssMiB(sim.pid));
      }
    };
    await Promise.all([workerLoop(), workerLoop(), workerLoop(), workerLoop()]);
    const afterTok = await settle(sim.pid, baseline);
    say(
      `${nTok} distinct 1 MB /tokenize calls in ${round((performance.now() - t0) / 1000, 1)} s: sim rss peak ${round(tokPeak, 1)} → after ${afterTok} MiB; ${loadLine()}`,
    );

    await disconnectMidStream(u, 100);
    await pause(2000);
    const running = await metricValue(u, 'vllm:num_requests_running');
    const kv = await metricValue(u, 'vllm:kv_cache_usage_perc');
    say(`100 clients disconnected mid-stream: running ${running}, KV usage ${kv}`);

    const targets = [
      {
        target: 'stream worst gap < 100 ms during the big prompts',
        measured: `${big.worstGapMs} ms (control ${control.worstGapMs} ms)`,
        met: big.worstGapMs < 100,
      },
      {
        target: '/health < 100 ms throughout',
        measured: `${big.healthMaxMs} ms (control ${control.healthMaxMs} ms)`,
        met: big.healthMaxMs < 100 && big.healthFailures === 0,
      },
      {
        target: 'memory back within 50 MiB of baseline after the big prompts',
        measured: `${baseline} → ${afterBig} MiB`,
        met: afterBig - baseline <= 50,
      },
      {
        target: `memory bounded over ${nTok} distinct 1 MB /tokenize`,
        measured: `peak ${round(tokPeak, 1)}, after ${afterTok} MiB`,
        met: afterTok - baseline <= 50,
      },
      {
        target: 'nothing leaked by 100 mid-stream disconnects',
        measured: `running ${running}, KV ${kv}`,
        met: running === 0 && kv === 0,
      },
    ];
    for (const t of targets) say(`${t.met ? 'MET ' : 'MISS'} ${t.target}: ${t.measured}`);
    return {
      targets,
      data: {
        baseline,
        control,
        windows,
        peak: round(peak, 1),
        afterBig,
        nTok,
        tokPeak: round(tokPeak, 1),
        afterTok,
        running,
        kv,
      },
    };
  } finally {
    await sim.stop();
  }
}

if (/sim-abuse\.ts$/.test(process.argv[1] ?? '')) {
  const lines: string[] = [];
  const machineBefore = machine();
  runAbuse((l) => {
    lines.push(l);
    console.log(l);
  }).then(
    (r) => {
      const file = writeResult({ name: 'sim-abuse', lines, ...r, machineBefore, machineAfter: machine() });
      console.log(`wrote ${file}`);
      if (r.targets.some((t) => !t.met)) process.exitCode = 1;
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
