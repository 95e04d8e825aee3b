/**
 * Fault injection for the simulated vLLM: a seeded fraction of completion requests is answered
 * with a 500/503, dropped mid-stream, given vLLM's mid-stream error event, stalled, delayed
 * before its headers, or sent one malformed JSON event; and the whole server can die at a set
 * time as an out-of-memory vLLM does. Switched by the `--fault-*` flags (src/vllm/flags.ts) or
 * at run time by `POST /loadlab/faults` (loopback clients only); `GET /loadlab/faults` shows the
 * settings and the injected counts, and `/metrics` counts them in
 * `loadlab:sim_faults_injected_total{kind}`, so a test can compare "injected" with "seen".
 *
 * Each completion request draws ONE uniform number at arrival (from a stream seeded by
 * `--seed`) and gets at most one fault: the fractions are stacked in `FAULT_KINDS` order and
 * must add up to ≤ 1. So the first N requests always get the same number of each fault.
 * A fault is counted when it strikes, not when it is drawn: a mid-stream fault strikes on the
 * first write after `afterChunks` SSE events (or at the stream's end, if that comes first);
 * it never strikes on a non-streamed request.
 */
import { seededRng, type Rng } from '../../rng';
import {
  FAULT_KINDS,
  FAULTS_PATH,
  FRACTION_FIELD,
  isLoopback,
  MID_STREAM,
  resolveFaultSettings,
  showValue,
  type FaultKind,
  type FaultSettings,
} from '../../vllm/fault-settings';
import { INTERNAL, midStream } from './fault-stream';
import { setLongTimeout, type LongTimer } from './long-timer';
import { MethodNotAllowed } from './method-not-allowed';
import { ApiError, type Reply, type ReplyHooks, type RequestInfo } from './reply';

export * from '../../vllm/fault-settings';

/** Options of `createFaults`. */
export interface FaultsOptions {
  settings?: FaultSettings;
  /** The server's `--seed` (default 0); the fault stream is derived from it. */
  seed?: number;
  /** Called once per injected fault (feeds /metrics). */
  onInjected?: (kind: FaultKind) => void;
  /** Receives the dying server's last lines; default `console.error`. */
  log?: (line: string) => void;
  /** How the server dies; default `process.exit`. */
  exit?: (code: number) => void;
}

/** A server's fault injector. */
export interface Faults {
  /** Plug into `createSimServer({ hooks })`. Also serves `GET`/`POST /loadlab/faults`. */
  readonly hooks: ReplyHooks;
  /** Current settings, defaults filled in. */
  settings(): Required<FaultSettings>;
  /** Faults injected so far, by kind (cumulative). */
  injected(): Record<FaultKind, number>;
  /** Replace every setting (unset = default) and reseed; throws on bad settings. Arms the exit timer if started. */
  configure(settings: FaultSettings, seed?: number): void;
  /** Arm `exitAfterS` (call once the server listens). */
  start(): void;
  /** Disarm timers (server shutdown). */
  close(): void;
}

const sleep = (ms: number, reply: Reply) =>
  new Promise<void>((resolve) => {
    const t = setLongTimeout(resolve, ms);
    reply.onAbort(() => {
      t.clear();
      resolve();
    });
  });

/** vLLM-like last words of an engine that ran out of GPU memory (matches launch-diagnosis' `oom`). */
export function oomLines(afterS: number): string[] {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  const pre = `ERROR ${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  return [
    `${pre} [core.py:710] EngineCore encountered a fatal error.`,
    `${pre} [core.py:710] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB. GPU 0 has a total capacity of 23.64 GiB of which 312.00 MiB is free. Including non-PyTorch memory, this process has 23.12 GiB memory in use.`,
    `${pre} [async_llm.py:480] AsyncLLM output_handler failed. vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.`,
    `ERROR [loadlab-sim] simulated fault: the server dies ${afterS} s after start (--fault-exit-after-s); exit code 1, open connections drop.`,
  ];
}

/** The injector's state, changed in place by `configure`/`start`/`close`. */
interface FaultState {
  readonly opts: FaultsOptions;
  readonly counts: Record<FaultKind, number>;
  /** The fault drawn for a reply (the wrapped one, for mid-stream kinds). */
  readonly decided: WeakMap<Reply, FaultKind>;
  cfg: Required<FaultSettings>;
  rng: Rng;
  started: boolean;
  exitTimer: LongTimer | undefined;
}

// A stream of its own: fault draws never consume the seeds of the simulator's output lengths and text.
const faultRng = (seed: number): Rng => seededRng((seed ^ 0x5eedfa17) >>> 0);

function hit(st: FaultState, kind: FaultKind): void {
  st.counts[kind]++;
  st.opts.onInjected?.(kind);
}

/** (Re)arm the `exitAfterS` timer: the server dies with vLLM's OOM lines. */
function armExit(st: FaultState): void {
  st.exitTimer?.clear();
  st.exitTimer = undefined;
  const afterS = st.cfg.exitAfterS;
  if (!(afterS > 0)) return;
  st.exitTimer = setLongTimeout(() => {
    for (const l of oomLines(afterS)) (st.opts.log ?? console.error)(l);
    (st.opts.exit ?? ((c: number) => process.exit(c)))(1);
  }, afterS * 1000);
}

/** One uniform draw; the fractions stacked in `FAULT_KINDS` order pick at most one fault. */
function decide(st: FaultState): FaultKind | undefined {
  const u = st.rng();
  let acc = 0;
  for (const k of FAULT_KINDS) if (u < (acc += st.cfg[FRACTION_FIELD[k]])) return k;
  return undefined;
}

const forbidden = () =>
  new ApiError(
    403,
    `${FAULTS_PATH} only answers loopback clients (127.0.0.1, ::1): send it from the simulator's own machine`,
    'Forbidden',
  );
const view = (st: FaultState) => ({ ...st.cfg, injected: { ...st.counts }, loadlab_sim: true });

/** `GET`/`HEAD`/`POST /loadlab/faults` (loopback only): show, or replace and reseed, the settings. */
async function faultsRoute(st: FaultState, configure: Faults['configure'], reply: Reply, info: RequestInfo): Promise<void> {
  if (!isLoopback(info.remoteAddress)) reply.error(forbidden());
  else if (info.method === 'GET' || info.method === 'HEAD') reply.json(200, view(st));
  else if (info.method !== 'POST') throw new MethodNotAllowed(['GET', 'HEAD', 'POST']);
  else {
    const body = (await info.readJson?.()) ?? {};
    const { seed, injected: _i, loadlab_sim: _s, ...settings } = body; // a GET answer can be posted back
    if (seed !== undefined && !Number.isInteger(seed)) throw new ApiError(400, `seed must be an integer, got ${showValue(seed)}`);
    try {
      configure(settings as FaultSettings, seed as number | undefined);
    } catch (err) {
      throw new ApiError(400, (err as Error).message);
    }
    reply.json(200, view(st));
  }
}

/** Strike a fault that acts before the headers (500, 503, slow headers); true when the reply is done. */
async function beforeHeaders(st: FaultState, reply: Reply): Promise<boolean> {
  const kind = st.decided.get(reply);
  if (kind === 'http_500' || kind === 'http_503') {
    hit(st, kind);
    reply.error(kind === 'http_500' ? INTERNAL() : new ApiError(503, 'Service Unavailable', 'Service Unavailable'));
    return true;
  }
  if (kind === 'slow_headers') {
    hit(st, kind);
    await sleep(st.cfg.slowHeadersS * 1000, reply);
    return reply.closed;
  }
  return false;
}

/** Creates the fault injector (validates `settings`; throws naming the fix). */
export function createFaults(opts: FaultsOptions = {}): Faults {
  const st: FaultState = {
    opts,
    counts: Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>,
    decided: new WeakMap<Reply, FaultKind>(),
    cfg: resolveFaultSettings(opts.settings ?? {}),
    rng: faultRng(opts.seed ?? 0),
    started: false,
    exitTimer: undefined,
  };
  const faults: Faults = {
    hooks: {
      wrap(reply, info) {
        if (info.method !== 'POST' || (info.path !== '/v1/chat/completions' && info.path !== '/v1/completions')) return reply;
        const kind = decide(st);
        if (kind === undefined) return reply;
        const r = MID_STREAM.has(kind) ? midStream(reply, kind, st.cfg, (k) => hit(st, k)) : reply;
        st.decided.set(r, kind);
        return r;
      },
      async intercept(reply, info: RequestInfo) {
        if (info.path !== FAULTS_PATH) return beforeHeaders(st, reply);
        await faultsRoute(st, (settings, seed) => faults.configure(settings, seed), reply, info);
        return true;
      },
    },
    settings: () => ({ ...st.cfg }),
    injected: () => ({ ...st.counts }),
    configure(settings, seed) {
      st.cfg = resolveFaultSettings(settings);
      st.rng = faultRng(seed ?? opts.seed ?? 0);
      if (st.started) armExit(st);
    },
    start() {
      if (st.started) return;
      st.started = true;
      armExit(st);
    },
    close() {
      st.exitTimer?.clear();
      st.exitTimer = undefined;
      st.started = false;
    },
  };
  return faults;
}
