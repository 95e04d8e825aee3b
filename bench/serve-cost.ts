/**
 * The simulator's own JavaScript per generated token, without sockets or real time: the engine on a virtual clock,
 * `runGeneration` (src/sim/http/generate.ts) for C streamed chat requests shaped as LoadLab's client sends them
 * (ignore_eos, min_tokens, include_usage with continuous usage, an `x-request-id` so the send log is kept), and a
 * reply that frames each event as the simulator does (`chunkFrame`) and drops it. What `yard-sim` measures beyond
 * this is the sockets, the spinning clock, timers and the HTTP parsing of arrivals.
 *
 * With `between`, each pass runs three ways in turn: the JavaScript alone; the same with each frame written by a
 * system call (`pwrite` to one offset of a file in /dev/shm: a short kernel path that wakes nobody) right after it is
 * made, as the simulator writes each chunk to its socket; and those writes alone (as many frames of the same mean
 * size). What the second costs beyond the other two is what running between system calls costs the JavaScript
 * (bench/README.md §31).
 *
 * With `idle=MS`, each pass runs twice: back to back, and with the thread asleep for MS after every engine step, as the
 * simulator's real-time steps leave its thread idle between them (about 13 ms of a 17 ms step at 128 streams). What
 * the second costs beyond the first is what this machine charges the same work for starting cold after each idle
 * gap (bench/README.md §34). Each figure gives the main thread's own CPU beside the process's. With
 * `LOADLAB_SERVE_COST_JSON=1` each pass prints one JSON line instead, its {@link PassCost}s (bench/cold-step.ts reads it).
 * Run: `npx tsx bench/serve-cost.ts [C=128] [tokens=300] [passes=6] [between|idle=MS]`; prints CPU µs per token for
 * each pass.
 */
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { loadavg } from 'node:os';
import { seededRng } from '../src/rng';
import { virtualClock } from '../src/sim/engine/clock';
import { resolveEngineConfig } from '../src/sim/engine/config';
import { createEngine } from '../src/sim/engine/engine';
import { QueueTimes } from '../src/sim/engine/queue-time';
import { runGeneration, type GenServer } from '../src/sim/http/generate';
import { SimMetrics } from '../src/sim/http/metrics';
import { chunkFrame } from '../src/sim/http/chunk-socket';
import type { Reply } from '../src/sim/http/reply';
import { parseGenRequest } from '../src/sim/http/requests';
import { SendLog } from '../src/sim/http/send-log';
import { threadSched } from '../src/proc/cpu-times';
import { loadTokenizer } from '../src/sim/http/tokens';
import { sseData, SSE_DONE } from '../src/wire/chunks';

/**
 * A reply that frames every event as the simulator's socket writes do, and counts the bytes; with `fd`, writes each
 * frame there. A class, as the simulator's `NodeReply` is: an object literal per reply gave each its own `closed`
 * getter, and the per-token `reply.closed` check went through V8's generic property load (bench/README.md §34).
 */
class NullReply implements Reply {
  closed = false;
  constructor(
    private readonly counter: { bytes: number },
    private readonly fd?: number,
  ) {}
  private send(frame: string): void {
    this.counter.bytes += Buffer.byteLength(frame);
    if (this.fd !== undefined) writeSync(this.fd, frame, 0);
  }
  onAbort(): void {}
  json(): void {
    this.closed = true;
  }
  text(): void {
    this.closed = true;
  }
  error(): void {
    this.closed = true;
  }
  startStream(): void {}
  event(json: string): void {
    this.send(chunkFrame(sseData(json)));
  }
  streamError(): void {}
  done(): void {
    this.send(chunkFrame(SSE_DONE));
    this.closed = true;
  }
  destroy(): void {}
  flush(): void {}
  blocked(): boolean {
    return false;
  }
  onDrain(): void {}
}

/** CPU per token of one pass: the process's (all threads), its user part, the main thread's own; frame bytes per token. */
interface PassCost {
  us: number;
  userUs: number;
  mainUs?: number;
  bytes?: number;
}

/**
 * An engine on a virtual clock and `runGeneration` for C streams of `tokens`, and a function that runs one pass of
 * them: its frames written to `fd` when given, asleep `idleMs` after each engine step.
 */
async function passRunner(c: number, tokens: number) {
  const tok = await loadTokenizer();
  const config = resolveEngineConfig({});
  const clock = virtualClock();
  const engine = createEngine({ config, clock, seed: 0 });
  const metrics = new SimMetrics({
    modelName: 'm',
    config,
    profile: 'p',
    vllmVersion: '0.19.0',
    generation: 'v0.19',
    gpuMemoryUtilization: 0.9,
  });
  const queue = new QueueTimes(
    () => engine.scheduler.running,
    (q) => metrics.observeQueueTime(q),
  );
  const napCell = new Int32Array(new SharedArrayBuffer(4));
  let idleMs = 0; // of the pass running now
  engine.onStep((info) => {
    if (idleMs > 0) Atomics.wait(napCell, 0, 0, idleMs); // asleep, as between real-time steps
    metrics.observeStep(info);
    queue.onStep(info.startMs);
  });
  const s: GenServer = {
    engine,
    tok,
    metrics,
    queue,
    model: 'm',
    now: () => clock.now(),
    rng: seededRng(0),
    apiOverheadMs: 0,
    promptTokensDetails: false,
    streamInterval: 1,
    sendLog: new SendLog(),
  };
  const rules = { servedModelName: 'm', maxModelLen: config.maxModelLen };
  const body = () => ({
    messages: [{ role: 'user', content: 'Say anything.' }],
    max_tokens: tokens,
    min_tokens: tokens,
    ignore_eos: true,
    stream: true,
    stream_options: { include_usage: true, continuous_usage_stats: true },
  });
  let seq = 0;
  const n = c * tokens;
  const pass = (fd?: number, idle = 0): Required<PassCost> => {
    const counter = { bytes: 0 };
    idleMs = idle;
    const main0 = threadSched()?.cpuMs ?? Number.NaN;
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < c; i++) {
      const id = `chatcmpl-b${++seq}`;
      const g = parseGenRequest('chat', body(), tok, rules);
      runGeneration(s, g, new NullReply(counter, fd), {
        id,
        engineId: `${id}#${seq}`,
        arrivalMs: clock.now(),
        requestId: `b${seq}`,
      });
    }
    clock.runUntilIdle();
    const cpu = process.cpuUsage(cpu0);
    const mainUs = (((threadSched()?.cpuMs ?? Number.NaN) - main0) * 1000) / n;
    idleMs = 0;
    s.sendLog?.take([...Array(c)].map((_, i) => `b${seq - c + 1 + i}`));
    return { us: (cpu.user + cpu.system) / n, userUs: cpu.user / n, mainUs, bytes: counter.bytes / n };
  };
  return { pass, close: () => engine.close() };
}

const fmt = (x: PassCost) =>
  `${x.us.toFixed(2)} µs per token (user ${x.userUs.toFixed(2)}${x.mainUs === undefined ? '' : `; main thread ${x.mainUs.toFixed(2)}`})`;
const load = () => `[load ${loadavg()[0].toFixed(2)}]`;

/** `between`: the pass again with each frame `pwrite`n, then as many writes alone; what the mix costs beyond its parts. */
function betweenLine(run: (fd?: number) => PassCost, alone: Required<PassCost>, fd: number, n: number): string {
  const mixed = run(fd);
  const frame = chunkFrame(sseData('x'.repeat(Math.max(1, Math.round(alone.bytes) - 12))));
  const cpu0 = process.cpuUsage();
  for (let k = 0; k < n; k++) writeSync(fd, frame, 0);
  const cpu = process.cpuUsage(cpu0);
  const writes = { us: (cpu.user + cpu.system) / n, userUs: cpu.user / n };
  const extra = mixed.us - alone.us - writes.us;
  return (
    `each frame written after it is made ${fmt(mixed)}; the writes alone ${fmt(writes)}; ` +
    `the mix costs ${extra.toFixed(2)} µs per token more than its parts`
  );
}

async function main(): Promise<void> {
  const [c = 128, tokens = 300, passes = 6] = process.argv.slice(2).map(Number);
  const mode = process.argv[5] ?? '';
  const between = mode === 'between';
  const idle = mode.startsWith('idle=') ? Number(mode.slice(5)) : 0;
  if (mode !== '' && !between && !(idle > 0))
    throw new Error(
      `serve-cost: unknown mode ${JSON.stringify(mode)}; give \`between\`, or \`idle=MS\` with MS > 0 (e.g. idle=15)`,
    );
  const json = process.env.LOADLAB_SERVE_COST_JSON === '1';
  if (json && between)
    throw new Error('serve-cost: LOADLAB_SERVE_COST_JSON=1 reports passes alone or with idle=MS, not `between`');
  const { pass, close } = await passRunner(c, tokens);
  const file = `/dev/shm/loadlab-serve-cost-${process.pid}`;
  const fd = between ? openSync(file, 'w') : undefined;
  try {
    for (let p = 0; p < passes; p++) {
      const alone = pass();
      const line = `pass ${p + 1}: ${fmt(alone)}, ${alone.bytes.toFixed(0)} B per token`;
      if (json) console.log(JSON.stringify({ pass: p + 1, alone, cold: idle > 0 ? pass(undefined, idle) : undefined }));
      else if (fd !== undefined) console.log(`${line}; ${betweenLine(pass, alone, fd, c * tokens)} ${load()}`);
      else if (idle > 0) {
        const cold = pass(undefined, idle);
        const more = (cold.mainUs - alone.mainUs).toFixed(2);
        console.log(
          `${line}; asleep ${idle} ms after each step ${fmt(cold)}: ${more} µs per token more on the main thread ${load()}`,
        );
      } else console.log(`${line} ${load()}`);
    }
  } finally {
    if (fd !== undefined) {
      closeSync(fd);
      unlinkSync(file);
    }
  }
  close();
}

await main();
