/**
 * The entry of one worker thread of a run with `workers > 1` (started by `./worker-pool`). It owns a
 * client and a share of the streams, stamps its own sends and chunks on its own event loop, and posts
 * every record to the main thread, which alone writes the run folder (messages: `./worker-protocol`).
 *
 * Clock: `performance.now()` counts from each thread's start, so the run clock here is this thread's
 * CLOCK_MONOTONIC reading minus the run's origin on that clock (./thread-clock): the stamps of every
 * worker and of the main thread are on one clock.
 * Stop: on `{t:'stop'}` nothing new is sent, in-flight requests end as `aborted` records (posted), then
 * `done` goes out with this worker's health.
 */

import { setMaxListeners } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { type ClientOptions, createClient } from '../client/client';
import { warmClient } from '../client/warm-up';
import { sleepUntil } from '../schedule/pacer';
import { turnBudget, type TurnBudget } from '../schedule/turn-budget';
import { createPool, settleTasks, type Pool } from '../schedule/pool';
import type { RequestRecord, RequestSpec } from '../types';
import { startClientHealth } from './health';
import { threadCpuMs } from '../proc/cpu-times';
import { formatCpuList, pinThisThread, thisThreadCpus } from '../proc/cpu-split';
import { threadRunClock } from './thread-clock';
import type { FromWorker, ToWorker, WorkerInit, WorkerPlan } from './worker-protocol';

const port = parentPort;
// Only in a thread started by ./worker-pool (another thread pool importing this module starts nothing).
if (port && (workerData as Partial<WorkerInit> | undefined)?.counter instanceof SharedArrayBuffer)
  start(workerData as WorkerInit);

function start(init: WorkerInit): void {
  // `sent` and `record` wait for the turn budget (src/schedule/turn-budget.ts), in order; any other message
  // first posts everything waiting, so `done` and `error` come after every record.
  const work = turnBudget();
  const post = (m: FromWorker) => {
    if (m.t === 'sent' || m.t === 'record') return work.run(() => port?.postMessage(m));
    work.drain();
    port?.postMessage(m);
  };
  // A crash of this thread still hands over what it measured (the main thread writes the rest as lost).
  process.on('uncaughtException', (err) => {
    post({ t: 'error', message: err.stack ?? String(err) });
    process.exit(CRASH_EXIT_CODE);
  });
  if (init.loadCpus) pinThisThread(init.loadCpus); // the thread ends with the run: never released

  const now = threadRunClock(init.originMonoMs);
  const stop = new AbortController();
  const clientOptions = clientOptionsOf(init, now);
  const client = createClient(clientOptions);
  const crashAfter = testCrashAfter(init.worker);
  let sent = 0;
  // As ./runner-sender, but a record is posted to the main thread, not kept here (it keeps them all).
  const fire: Fire = async (index, spec, due, warm) => {
    if (stop.signal.aborted) return undefined;
    const requestId = `${init.idPrefix}-${index}`;
    const tag = spec.tag !== undefined ? { tag: spec.tag } : {};
    post({ t: 'sent', index, requestId, warmup: warm, api: spec.api ?? 'chat', ...tag, intendedStartMs: due, sentMs: now() });
    if (++sent === crashAfter) {
      work.drain(); // as the crash handler above does
      process.exit(CRASH_EXIT_CODE);
    }
    const meta = { index, warmup: warm, intendedStartMs: due, requestId, signal: stop.signal };
    const record = await client.send(spec, meta);
    post({ t: 'record', record });
    return record;
  };
  const fail = (err: unknown) => post({ t: 'error', message: (err as Error)?.stack ?? String(err) });
  port?.on('message', (m: ToWorker) => {
    if (m.t === 'stop') stop.abort();
    else if (m.t === 'warmup') {
      fire(m.index, m.spec, now(), true)
        .then((r) => r ?? post({ t: 'warmup-skipped' }))
        .catch(fail);
    } else if (m.t === 'go') {
      // one abort listener per request in flight, as the main thread's stop signal (runner-stop.ts)
      setMaxListeners((m.plan.kind === 'closed' ? m.plan.n : m.plan.items.length) + 16, stop.signal);
      const health = startClientHealth({ cpuPercent: Number.POSITIVE_INFINITY });
      const cpu0 = threadCpuMs();
      const t0 = performance.now();
      drive(m.plan, fire, now, stop.signal, work)
        .then(async (latenessMs) => {
          const cpu1 = threadCpuMs();
          const wallMs = performance.now() - t0;
          const threadCpuPercent =
            cpu0 !== undefined && cpu1 !== undefined && wallMs > 0 ? ((cpu1 - cpu0) / wallMs) * 100 : undefined;
          const cpus = thisThreadCpus()?.cpus;
          post({
            t: 'done',
            health: health.stop(),
            latenessMs,
            ...(threadCpuPercent !== undefined ? { threadCpuPercent } : {}),
            ...(cpus ? { cpus: formatCpuList(cpus) } : {}),
          });
          await client.close();
        })
        .catch(fail);
    }
  });
  // This thread has compiled none of the client's code yet: run it on a stand-in before the load (never rejects).
  void warmClient(clientOptions, init.warmSpec).then(() => post({ t: 'ready' }));
}

/** The options of this worker's client, on the run clock `now`. */
function clientOptionsOf(init: WorkerInit, now: () => number): ClientOptions {
  return {
    baseUrl: init.rootUrl,
    model: init.model,
    now,
    ...(init.stamp !== undefined ? { stamp: init.stamp } : {}),
    connections: init.connections,
    ...(init.apiKey !== undefined ? { apiKey: init.apiKey } : {}),
    ...(init.timeoutMs !== undefined ? { timeoutMs: init.timeoutMs } : {}),
    ...(init.idleTimeoutMs !== undefined ? { idleTimeoutMs: init.idleTimeoutMs } : {}),
    ...(init.headers !== undefined ? { headers: init.headers } : {}),
  };
}

/** The exit code of a crash provoked by `LOADLAB_TEST_WORKER_CRASH`. */
const CRASH_EXIT_CODE = 70;

/**
 * A test hook: `LOADLAB_TEST_WORKER_CRASH=<worker>:<k>` ends worker `<worker>`'s thread at once
 * (`process.exit` in a worker ends the thread only) when it sends its k-th request, as a crash
 * would, with requests in flight. Never set outside tests (test/load-workers.test.ts).
 */
function testCrashAfter(worker: number): number | undefined {
  const m = /^(\d+):(\d+)$/.exec(process.env.LOADLAB_TEST_WORKER_CRASH ?? '');
  return m && Number(m[1]) === worker ? Number(m[2]) : undefined;
}

type Fire = (index: number, spec: RequestSpec, due: number, warm: boolean) => Promise<RequestRecord | undefined>;

/** This worker's measured load; resolves with how late each scheduled send left (ms) once all are done. */
async function drive(plan: WorkerPlan, fire: Fire, now: () => number, signal: AbortSignal, work: TurnBudget): Promise<number[]> {
  if (plan.kind === 'closed') {
    const counter = new Int32Array((workerData as WorkerInit).counter);
    const slot = async () => {
      while (!signal.aborted) {
        const i = Atomics.add(counter, 0, 1);
        if (i >= plan.n) return;
        const due = now(); // intended when the slot freed; sent when the turn budget lets it
        await work.later(() => fire(plan.warmup + i, plan.specs[i], due, false));
      }
    };
    await Promise.all(Array.from({ length: plan.slots }, slot));
    return [];
  }
  const gate: Pool | undefined = plan.slots !== undefined ? createPool(plan.slots) : undefined;
  const tasks: Array<Promise<unknown>> = [];
  const latenessMs: number[] = [];
  for (const { i, offsetMs, spec } of plan.items) {
    const due = plan.startMs + offsetMs;
    latenessMs.push(due > now() ? await sleepUntil(due, { now, signal }) : now() - due);
    if (signal.aborted) break;
    const run = () => fire(plan.warmup + i, spec, due, false);
    tasks.push(gate ? gate.run(run) : run());
  }
  await settleTasks(tasks, signal, gate);
  return latenessMs;
}
