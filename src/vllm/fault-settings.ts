/**
 * Fault settings: the kinds of injected fault, their `--fault-*` flags and `POST
 * /loadlab/faults` body, validation with the allowed ranges, and a one-line description.
 * The injector itself is src/sim/http/faults.ts.
 */
import type { FaultSettings } from './flag-types';
import { SERVE_FLAGS } from './flags';

/** The kinds of injected fault, in the order their fractions are stacked. */
export const FAULT_KINDS = ['http_500', 'http_503', 'reset', 'stream_error', 'stall', 'slow_headers', 'malformed'] as const;
/** One kind of injected fault (the `kind` label on /metrics). */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Fault settings: declared with the other `vllm serve` flags (src/vllm/flag-types.ts), re-exported here. */
export type { FaultSettings } from './flag-types';

/** Which setting holds each kind's fraction. */
export const FRACTION_FIELD: Readonly<Record<FaultKind, keyof FaultSettings>> = {
  http_500: 'http500',
  http_503: 'http503',
  reset: 'reset',
  stream_error: 'streamError',
  stall: 'stall',
  slow_headers: 'slowHeaders',
  malformed: 'malformed',
};
const DEFAULTS: Required<FaultSettings> = {
  http500: 0,
  http503: 0,
  reset: 0,
  streamError: 0,
  stall: 0,
  stallS: 5,
  slowHeaders: 0,
  slowHeadersS: 2,
  malformed: 0,
  afterChunks: 2,
  exitAfterS: 0,
};
/** The run-time control endpoint (simulator only). */
export const FAULTS_PATH = '/loadlab/faults';
/** The kinds that strike mid-stream (the others strike before the headers). */
export const MID_STREAM: ReadonlySet<FaultKind> = new Set<FaultKind>(['reset', 'stream_error', 'stall', 'malformed']);
/** Longest stall, slow-headers delay or exit delay, s: 365 days (timers are chained, see long-timer.ts). */
export const MAX_FAULT_SECONDS = 365 * 24 * 3600;
/** Most events before a mid-stream fault (more than any max_model_len of tokens). */
export const MAX_AFTER_CHUNKS = 10_000_000;

/** A short, bounded rendering of a bad value for an error message (no deep JSON). */
export function showValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return Array.isArray(v) ? 'a list' : typeof v === 'object' ? 'an object' : typeof v;
}

/** The allowed range of one setting, as the error message states it. */
function rangeOf(key: keyof FaultSettings): { ok: (v: number) => boolean; text: string } {
  if ((Object.values(FRACTION_FIELD) as string[]).includes(key))
    return { ok: (v) => v >= 0 && v <= 1, text: 'a fraction in [0, 1]' };
  if (key === 'afterChunks')
    return { ok: (v) => Number.isInteger(v) && v >= 0 && v <= MAX_AFTER_CHUNKS, text: `an integer in [0, ${MAX_AFTER_CHUNKS}]` };
  return { ok: (v) => v >= 0 && v <= MAX_FAULT_SECONDS, text: `seconds in [0, ${MAX_FAULT_SECONDS}] (0 to 365 days)` };
}

/**
 * Checks settings and fills in the defaults. Throws, naming the fix, on an unknown field
 * (own fields only: `constructor` or `toString` are unknown too), a value out of its range
 * (fractions in [0, 1]; seconds in [0, `MAX_FAULT_SECONDS`]; `afterChunks` an integer in
 * [0, `MAX_AFTER_CHUNKS`]), or fractions adding up to more than 1.
 */
export function resolveFaultSettings(s: FaultSettings): Required<FaultSettings> {
  const out = { ...DEFAULTS };
  for (const [k, v] of Object.entries(s ?? {})) {
    if (v === undefined) continue;
    if (!Object.hasOwn(DEFAULTS, k))
      throw new TypeError(`unknown fault setting '${k}'; known: ${Object.keys(DEFAULTS).join(', ')}`);
    const key = k as keyof FaultSettings;
    const range = rangeOf(key);
    if (typeof v !== 'number' || !Number.isFinite(v) || !range.ok(v))
      throw new TypeError(`fault setting ${k} must be ${range.text}, got ${showValue(v)}`);
    out[key] = v;
  }
  const sum = FAULT_KINDS.reduce((a, k) => a + out[FRACTION_FIELD[k]], 0);
  if (sum > 1 + 1e-9)
    throw new TypeError(
      `fault fractions add up to ${+sum.toFixed(6)}, more than 1: each request gets at most one fault, so lower them`,
    );
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

/** One line describing the active faults, e.g. `http_500 10%, stall 5% (5 s)`; '' when none. */
export function describeFaults(s: Required<FaultSettings>): string {
  const parts = FAULT_KINDS.filter((k) => s[FRACTION_FIELD[k]] > 0).map((k) => {
    const pct = `${k} ${+(s[FRACTION_FIELD[k]] * 100).toFixed(3)}%`;
    return k === 'stall' ? `${pct} (${s.stallS} s)` : k === 'slow_headers' ? `${pct} (${s.slowHeadersS} s)` : pct;
  });
  if (parts.length > 0 && [...MID_STREAM].some((k) => s[FRACTION_FIELD[k]] > 0))
    parts.push(`mid-stream after ${s.afterChunks} events`);
  if (s.exitAfterS > 0) parts.push(`server exit after ${s.exitAfterS} s`);
  return parts.join(', ');
}
