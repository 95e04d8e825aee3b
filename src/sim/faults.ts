/**
 * Fault injection for the simulated vLLM: a seeded fraction of completion requests is answered
 * with a 500/503, dropped mid-stream, given vLLM's mid-stream error event, stalled, delayed
 * before its headers, or sent one malformed JSON event; and the whole server can die at a set
 * time as an out-of-memory vLLM does. Switched by the `--fault-*` flags (src/server/flags.ts) or
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
import { seededRng, type Rng } from '../rng';
import { SERVE_FLAGS } from '../server/flags';
import { ApiError, type Reply, type ReplyHooks, type RequestInfo } from './reply';
import type { FaultSettings } from '../server/flag-types';

/** The kinds of injected fault, in the order their fractions are stacked. */
export const FAULT_KINDS = ['http_500', 'http_503', 'reset', 'stream_error', 'stall', 'slow_headers', 'malformed'] as const;
/** One kind of injected fault (the `kind` label on /metrics). */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Fault settings: declared with the other `vllm serve` flags (src/server/flag-types.ts), re-exported here. */
export type { FaultSettings } from '../server/flag-types';

/** Which setting holds each kind's fraction. */
export const FRACTION_FIELD: Readonly<Record<FaultKind, keyof FaultSettings>> = {
  http_500: 'http500', http_503: 'http503', reset: 'reset', stream_error: 'streamError',
  stall: 'stall', slow_headers: 'slowHeaders', malformed: 'malformed',
};
const DEFAULTS: Required<FaultSettings> = {
  http500: 0, http503: 0, reset: 0, streamError: 0, stall: 0, stallS: 5, slowHeaders: 0, slowHeadersS: 2, malformed: 0, afterChunks: 2, exitAfterS: 0,
};
/** The run-time control endpoint (simulator only). */
export const FAULTS_PATH = '/loadlab/faults';
const MID_STREAM = new Set<FaultKind>(['reset', 'stream_error', 'stall', 'malformed']);

/**
 * Checks settings and fills in the defaults. Throws, naming the fix, on an unknown field, a
 * value out of range, or fractions adding up to more than 1.
 */
export function resolveFaultSettings(s: FaultSettings): Required<FaultSettings> {
  const out = { ...DEFAULTS };
  for (const [k, v] of Object.entries(s ?? {})) {
    if (v === undefined) continue;
    if (!(k in DEFAULTS)) throw new TypeError(`unknown fault setting '${k}'; known: ${Object.keys(DEFAULTS).join(', ')}`);
    const key = k as keyof FaultSettings;
    const fraction = (Object.values(FRACTION_FIELD) as string[]).includes(k);
    const ok = typeof v === 'number' && Number.isFinite(v) && v >= 0 && (!fraction || v <= 1) && (key !== 'afterChunks' || Number.isInteger(v));
    if (!ok) throw new TypeError(`fault setting ${k} must be ${fraction ? 'a fraction in [0, 1]' : key === 'afterChunks' ? 'an integer ≥ 0' : 'seconds ≥ 0'}, got ${JSON.stringify(v)}`);
    out[key] = v as number;
  }
  const sum = FAULT_KINDS.reduce((a, k) => a + out[FRACTION_FIELD[k]], 0);
  if (sum > 1 + 1e-9) throw new TypeError(`fault fractions add up to ${+sum.toFixed(6)}, more than 1: each request gets at most one fault, so lower them`);
  return out;
}

/** The `--fault-*` arguments for `settings`, e.g. for `startSim({ extraArgs: faultArgs({ http500: 0.1 }) })`. */
export function faultArgs(settings: FaultSettings): string[] {
  const args: string[] = [];
  for (const f of SERVE_FLAGS) {
    const v = f.into === 'faults' ? settings[f.key as keyof FaultSettings] : undefined;
    if (v !== undefined) args.push(f.cli, String(v));
  }
  return args;
}

/** True for a loopback peer address (`127.0.0.0/8`, `::1`, or the IPv4-mapped form). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase().replace(/^::ffff:/, '');
  return a === '::1' || /^127\.\d+\.\d+\.\d+$/.test(a);
}

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

const INTERNAL = () => new ApiError(500, 'Internal server error', 'InternalServerError');
const sleep = (ms: number, reply: Reply) => new Promise<void>((resolve) => {
  const t = setTimeout(resolve, ms);
  reply.onAbort(() => { clearTimeout(t); resolve(); });
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

/** Creates the fault injector (validates `settings`; throws naming the fix). */
export function createFaults(opts: FaultsOptions = {}): Faults {
  const counts = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  const decided = new WeakMap<Reply, FaultKind>();
  let cfg = resolveFaultSettings(opts.settings ?? {});
  // A stream of its own: fault draws never consume the seeds of the simulator's output lengths and text.
  const faultRng = (seed: number): Rng => seededRng((seed ^ 0x5eedfa17) >>> 0);
  let rng = faultRng(opts.seed ?? 0);
  let started = false;
  let exitTimer: NodeJS.Timeout | undefined;

  const hit = (kind: FaultKind) => {
    counts[kind]++;
    opts.onInjected?.(kind);
  };
  const armExit = () => {
    if (exitTimer) clearTimeout(exitTimer);
    exitTimer = undefined;
    const afterS = cfg.exitAfterS;
    if (!(afterS > 0)) return;
    exitTimer = setTimeout(() => {
      for (const l of oomLines(afterS)) (opts.log ?? console.error)(l);
      (opts.exit ?? ((c: number) => process.exit(c)))(1);
    }, afterS * 1000);
  };
  const decide = (): FaultKind | undefined => {
    const u = rng();
    let acc = 0;
    for (const k of FAULT_KINDS) if (u < (acc += cfg[FRACTION_FIELD[k]])) return k;
    return undefined;
  };

  /** Wraps a streamed reply so `kind` strikes on the first write after `afterChunks` events. */
  const midStream = (inner: Reply, kind: FaultKind, s: Required<FaultSettings>): Reply => {
    let streaming = false;
    let sent = 0;
    let struck = false;
    let dead = false;
    let held: Array<() => void> | undefined;
    let last: string | undefined;
    const aborts: Array<() => void> = [];
    const through = (call: () => void, json?: string) => {
      if (dead) return;
      if (held) return void held.push(call);
      const atEnd = json === undefined; // done() or an error event: strike now if not yet struck
      if (!streaming || struck || inner.closed || (!atEnd && sent < s.afterChunks)) {
        if (!atEnd) { sent++; last = json; }
        return call();
      }
      struck = true;
      hit(kind);
      if (kind === 'reset') {
        dead = true;
        inner.destroy();
      } else if (kind === 'stream_error') {
        dead = true;
        inner.streamError(INTERNAL());
        inner.done();
        for (const fn of aborts.splice(0)) fn(); // the generator raised: vLLM aborts the request
      } else if (kind === 'malformed') {
        const j = json ?? last ?? '{"choices":[]}'; // at the end: a damaged copy of the last event
        inner.event(j.slice(0, Math.floor(j.length / 2))); // half an object is never valid JSON
        if (json === undefined) call();
      } else {
        held = [call];
        const t = setTimeout(() => {
          const calls = held ?? [];
          held = undefined;
          for (const c of calls) c();
        }, s.stallS * 1000);
        inner.onAbort(() => { clearTimeout(t); held = undefined; });
      }
    };
    return {
      get closed() { return dead || inner.closed; },
      onAbort(fn) { aborts.push(fn); inner.onAbort(fn); },
      json: (status, body) => inner.json(status, body),
      text: (status, body, type) => inner.text(status, body, type),
      error: (err) => inner.error(err),
      startStream() { streaming = true; inner.startStream(); },
      event: (json) => through(() => inner.event(json), json),
      streamError: (err) => through(() => inner.streamError(err)),
      done: () => through(() => inner.done()),
      destroy() { dead = true; inner.destroy(); },
    };
  };

  const forbidden = () => new ApiError(403, `${FAULTS_PATH} only answers loopback clients (127.0.0.1, ::1): send it from the simulator's own machine`, 'Forbidden');
  const view = () => ({ ...cfg, injected: { ...counts }, loadlab_sim: true });

  const faults: Faults = {
    hooks: {
      wrap(reply, info) {
        if (info.method !== 'POST' || (info.path !== '/v1/chat/completions' && info.path !== '/v1/completions')) return reply;
        const kind = decide();
        if (kind === undefined) return reply;
        const r = MID_STREAM.has(kind) ? midStream(reply, kind, cfg) : reply;
        decided.set(r, kind);
        return r;
      },
      async intercept(reply, info: RequestInfo) {
        if (info.path === FAULTS_PATH) {
          if (!isLoopback(info.remoteAddress)) reply.error(forbidden());
          else if (info.method === 'GET' || info.method === 'HEAD') reply.json(200, view());
          else if (info.method !== 'POST') reply.error(new ApiError(405, 'Method Not Allowed', 'Method Not Allowed'));
          else {
            const body = (await info.readJson?.()) ?? {};
            const { seed, injected: _i, loadlab_sim: _s, ...settings } = body; // a GET answer can be posted back
            if (seed !== undefined && !Number.isInteger(seed)) throw new ApiError(400, `seed must be an integer, got ${JSON.stringify(seed)}`);
            try {
              faults.configure(settings as FaultSettings, seed as number | undefined);
            } catch (err) {
              throw new ApiError(400, (err as Error).message);
            }
            reply.json(200, view());
          }
          return true;
        }
        const kind = decided.get(reply);
        if (kind === 'http_500' || kind === 'http_503') {
          hit(kind);
          reply.error(kind === 'http_500' ? INTERNAL() : new ApiError(503, 'Service Unavailable', 'Service Unavailable'));
          return true;
        }
        if (kind === 'slow_headers') {
          hit(kind);
          await sleep(cfg.slowHeadersS * 1000, reply);
          return reply.closed;
        }
        return false;
      },
    },
    settings: () => ({ ...cfg }),
    injected: () => ({ ...counts }),
    configure(settings, seed) {
      cfg = resolveFaultSettings(settings);
      rng = faultRng(seed ?? opts.seed ?? 0);
      if (started) armExit();
    },
    start() {
      if (started) return;
      started = true;
      armExit();
    },
    close() {
      if (exitTimer) clearTimeout(exitTimer);
      exitTimer = undefined;
      started = false;
    },
  };
  return faults;
}

/** One line describing the active faults, e.g. `http_500 10%, stall 5% (5 s)`; '' when none. */
export function describeFaults(s: Required<FaultSettings>): string {
  const parts = FAULT_KINDS.filter((k) => s[FRACTION_FIELD[k]] > 0).map((k) => {
    const pct = `${k} ${+(s[FRACTION_FIELD[k]] * 100).toFixed(3)}%`;
    return k === 'stall' ? `${pct} (${s.stallS} s)` : k === 'slow_headers' ? `${pct} (${s.slowHeadersS} s)` : pct;
  });
  if (parts.length > 0 && [...MID_STREAM].some((k) => s[FRACTION_FIELD[k]] > 0)) parts.push(`mid-stream after ${s.afterChunks} events`);
  if (s.exitAfterS > 0) parts.push(`server exit after ${s.exitAfterS} s`);
  return parts.join(', ');
}
