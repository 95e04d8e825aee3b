/**
 * `vllm serve` flags, described once: the simulator parses them, the real-vLLM launcher
 * writes them back out (`toServeArgs`). Parsing follows argparse: `--flag value` or
 * `--flag=value`, booleans as `--x` / `--no-x` (BooleanOptionalAction), one positional model.
 */
import type { FaultSettings, ServerFlags } from './flag-types';
import { SERVE_FLAGS, type FlagSpec } from './flag-table';

export { DEFAULT_MODEL, SERVE_FLAGS, type FlagSpec } from './flag-table';
export { serveArgWarnings } from './serve-warnings';

/** Everything `parseServeArgs` returns. */
export interface ServeArgs {
  /** Engine-facing flags; undefined = vLLM's default. */
  flags: ServerFlags;
  /** Bind address; default `127.0.0.1` (loopback only unless asked). */
  host: string;
  /** TCP port; default 8000; 0 = an ephemeral port. */
  port: number;
  /** The positional model (or `--model`); undefined when not given. */
  model?: string;
  /** Seconds between `Engine 000: …` stats lines; default 10; 0 = off. Simulator only. */
  statsIntervalS: number;
  /** Report `usage.prompt_tokens_details.cached_tokens` (vLLM `--enable-prompt-tokens-details`). */
  enablePromptTokensDetails: boolean;
  /** Usage on every stream, continuous (vLLM `--enable-force-include-usage`). */
  enableForceIncludeUsage: boolean;
  /** `--vllm-version`: the release to emulate (src/sim/http/generation.ts); undefined = the default. Simulator only. */
  vllmVersion?: string;
  /** Fault injection (`--fault-*`, see src/sim/http/faults.ts); empty = none. Simulator only. */
  faults: FaultSettings;
  /** `--help` / `-h` was given. */
  help: boolean;
}

const BY_CLI = new Map<string, FlagSpec>(SERVE_FLAGS.map((f) => [f.cli, f]));

function knownFlagsList(): string {
  return SERVE_FLAGS.map((f) => (f.type === 'bool' ? `${f.cli}/--no-${f.cli.slice(2)}` : f.cli)).join(', ');
}

/** Flags whose values vLLM parses with `human_readable_int` (`vllm/engine/arg_utils.py` `_compute_kwargs`). */
const SUFFIXED = new Set<string>(['maxModelLen', 'maxNumBatchedTokens', 'kvCacheMemoryBytes']);

/**
 * vLLM's `human_readable_int` (`vllm/utils/argparse_utils.py`): `1k` = 1000, `1K` = 1024, `25.6k` = 25600,
 * k/m/g/t decimal and K/M/G/T binary; a decimal with a binary suffix (`1.5K`) is refused; the product is
 * truncated as Python's `int()` does. A plain number is returned as written (NaN if not one).
 */
function parseSuffixed(raw: string): number {
  const s = raw.trim();
  const m = /^(\d+(?:\.\d+)?)([kKmMgGtT])$/.exec(s);
  if (!m) return s === '' ? Number.NaN : Number(s);
  const dec: Record<string, number> = { k: 1e3, m: 1e6, g: 1e9, t: 1e12 };
  if (m[2] in dec) return Math.trunc(Number(m[1]) * dec[m[2]]);
  if (m[1].includes('.')) return Number.NaN;
  const bin: Record<string, number> = { K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 };
  return Number(m[1]) * bin[m[2]];
}

function parseValue(spec: FlagSpec, raw: string): string | number {
  if (spec.type === 'string') return raw;
  if (spec.type === 'enum') {
    if (!spec.values!.includes(raw)) throw new Error(`${spec.cli} must be one of ${spec.values!.join(', ')}, got '${raw}'`);
    return raw;
  }
  // `human_readable_int_or_auto` (vllm/utils/argparse_utils.py): -1 or `auto` asks for the largest length that fits.
  if (spec.key === 'maxModelLen' && /^\s*(-1|auto)\s*$/i.test(raw)) return -1;
  const v = SUFFIXED.has(spec.key) ? parseSuffixed(raw) : raw.trim() === '' ? Number.NaN : Number(raw);
  const what = spec.type === 'int' ? 'an integer' : 'a number';
  const range =
    spec.min !== undefined && spec.max !== undefined
      ? ` in [${spec.min}, ${spec.max}]`
      : spec.min !== undefined
        ? ` ≥ ${spec.min}`
        : '';
  const bad =
    !Number.isFinite(v) ||
    (spec.type === 'int' && !Number.isInteger(v)) ||
    (spec.min !== undefined && v < spec.min) ||
    (spec.max !== undefined && v > spec.max);
  if (bad) {
    const hint = SUFFIXED.has(spec.key) ? ' (suffixes: 4k = 4000, 4K = 4096; no decimals with K/M/G/T)' : '';
    throw new Error(`${spec.cli} must be ${what}${range}, got '${raw}'${hint}`);
  }
  return v;
}

/**
 * Parses `vllm serve` arguments (without the leading `serve`). Throws on an unknown flag
 * (the message lists the known ones) or a bad value (the message names the fix).
 */
export function parseServeArgs(argv: string[]): ServeArgs {
  const out: ServeArgs = {
    flags: {},
    host: '127.0.0.1',
    port: 8000,
    statsIntervalS: 10,
    enablePromptTokensDetails: false,
    enableForceIncludeUsage: false,
    faults: {},
    help: false,
  };
  const set = (spec: FlagSpec, v: unknown) => {
    const target = (spec.into === 'flags' ? out.flags : spec.into === 'faults' ? out.faults : out) as Record<string, unknown>;
    target[spec.key] = v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      out.help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      if (out.model !== undefined)
        throw new Error(`unexpected argument '${arg}': only one model may be given (model is already '${out.model}')`);
      out.model = arg;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(0, eq) : arg;
    const inline = eq >= 0 ? arg.slice(eq + 1) : undefined;
    let spec = BY_CLI.get(name);
    let boolValue = true;
    if (!spec && name.startsWith('--no-')) {
      spec = BY_CLI.get(`--${name.slice(5)}`);
      if (spec && spec.type !== 'bool') spec = undefined;
      boolValue = false;
    }
    if (!spec) throw new Error(`unknown flag ${name}. Known flags: ${knownFlagsList()}`);
    if (spec.type === 'bool') {
      if (inline !== undefined)
        throw new Error(`${name} takes no value; write ${spec.cli} to turn it on or --no-${spec.cli.slice(2)} to turn it off`);
      set(spec, boolValue);
      continue;
    }
    const raw = inline ?? argv[++i];
    if (raw === undefined || (inline === undefined && raw.startsWith('--')))
      throw new Error(`${name} needs a value, e.g. ${name} ${example(spec)}`);
    set(spec, parseValue(spec, raw));
  }
  return out;
}

function example(spec: FlagSpec): string {
  if (spec.into === 'faults') return spec.max === 1 ? '0.1' : '2';
  return spec.type === 'enum'
    ? spec.values![0]
    : spec.type === 'string'
      ? 'NAME'
      : spec.key === 'gpuMemoryUtilization'
        ? '0.9'
        : '2048';
}

/**
 * The inverse of `parseServeArgs` for `ServerFlags`: `--x value` pairs in table order,
 * booleans as `--x`/`--no-x`, undefined fields left out. With `target: 'vllm'` the
 * simulator-only flags (`--preemption-mode`, `--swap-space`, `--seed`) are dropped, so the
 * result can be passed to a real `vllm serve`; `vllm-v0` keeps the ones vLLM V0 honours
 * (`--swap-space`, `--preemption-mode`). Default target `sim` (round-trips exactly).
 */
export function toServeArgs(flags: ServerFlags, opts: { target?: 'sim' | 'vllm' | 'vllm-v0' } = {}): string[] {
  const args: string[] = [];
  for (const spec of SERVE_FLAGS) {
    if (spec.into !== 'flags') continue;
    const v = (flags as Record<string, unknown>)[spec.key];
    const dropped = opts.target === 'vllm' ? !spec.vllm : opts.target === 'vllm-v0' ? !spec.vllm && !spec.v0 : false;
    if (v === undefined || dropped) continue;
    if (spec.type === 'bool') args.push(v ? spec.cli : `--no-${spec.cli.slice(2)}`);
    else args.push(spec.cli, String(v));
  }
  return args;
}

/** The flags table as help text (for `loadlab sim --help`). */
export function formatFlagsHelp(): string {
  const rows = SERVE_FLAGS.map((f) => {
    const name =
      f.type === 'bool'
        ? `${f.cli}, --no-${f.cli.slice(2)}`
        : `${f.cli} ${f.type === 'enum' ? f.values!.join('|') : f.type === 'string' ? 'NAME' : 'N'}`;
    return `  ${name.padEnd(46)} ${f.help}${f.vllm ? '' : ' [simulator only]'}`;
  });
  return ['Usage: loadlab sim [model] [flags]', '', 'Flags (same names as `vllm serve`):', ...rows].join('\n');
}
