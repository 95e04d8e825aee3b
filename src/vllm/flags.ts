/**
 * `vllm serve` flags, described once: the simulator parses them, the real-vLLM launcher
 * writes them back out (`toServeArgs`). Parsing follows argparse: `--flag value` or
 * `--flag=value`, booleans as `--x` / `--no-x` (BooleanOptionalAction), one positional model.
 */
import type { FaultSettings, ServerFlags } from './flag-types';

/** The model the lessons serve (positional `vllm serve <model>`, and the default served name). */
export const DEFAULT_MODEL = 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4';

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
  /** Fault injection (`--fault-*`, see src/sim/http/faults.ts); empty = none. Simulator only. */
  faults: FaultSettings;
  /** `--help` / `-h` was given. */
  help: boolean;
}

/** Keys a flag can set: a `ServerFlags` field or a field of `ServeArgs` itself. */
type FlagKey = keyof ServerFlags | 'host' | 'port' | 'model' | 'statsIntervalS'
  | 'enablePromptTokensDetails' | 'enableForceIncludeUsage' | keyof FaultSettings;

/** One row of the flags table. */
export interface FlagSpec {
  key: FlagKey;
  /** CLI name, e.g. `--max-num-batched-tokens`. */
  cli: string;
  /** `int` and `number` take a value; `bool` has `--x`/`--no-x`; `enum` takes one of `values`. */
  type: 'int' | 'number' | 'bool' | 'enum' | 'string';
  values?: readonly string[];
  /** Smallest allowed value (numbers). */
  min?: number;
  max?: number;
  help: string;
  /** Real vLLM (V1, ~0.19) accepts it; false = simulator only (dropped by `toServeArgs(…, {target:'vllm'})`). */
  vllm: boolean;
  /** Where the value lands: `flags` (ServerFlags), the top level of `ServeArgs`, or `ServeArgs.faults`. */
  into: 'flags' | 'args' | 'faults';
}

/** The flags table: the single description of every flag the simulator understands. */
// biome-ignore format: one flag per row reads as a table
export const SERVE_FLAGS: readonly FlagSpec[] = [
  { key: 'host', cli: '--host', type: 'string', vllm: true, into: 'args', help: 'Bind address (default 127.0.0.1: loopback only).' },
  { key: 'port', cli: '--port', type: 'int', min: 0, max: 65535, vllm: true, into: 'args', help: 'TCP port (default 8000; 0 = pick a free port).' },
  { key: 'model', cli: '--model', type: 'string', vllm: true, into: 'args', help: `Model path (same as the positional argument; default ${DEFAULT_MODEL}).` },
  { key: 'servedModelName', cli: '--served-model-name', type: 'string', vllm: true, into: 'flags', help: 'Name clients send as "model" (default: the model path).' },
  { key: 'maxModelLen', cli: '--max-model-len', type: 'int', min: 1, vllm: true, into: 'flags', help: 'Context length, prompt + output tokens; accepts 1k (=1000), 1K (=1024), 25.6k.' },
  { key: 'maxNumSeqs', cli: '--max-num-seqs', type: 'int', min: 1, vllm: true, into: 'flags', help: 'Most requests in the running batch (default 256 on a 4090).' },
  { key: 'maxNumBatchedTokens', cli: '--max-num-batched-tokens', type: 'int', min: 1, vllm: true, into: 'flags', help: 'Token budget per engine step (default 2048 on a 4090).' },
  { key: 'enableChunkedPrefill', cli: '--enable-chunked-prefill', type: 'bool', vllm: true, into: 'flags', help: 'Split long prompts across steps (V1 default on).' },
  { key: 'longPrefillTokenThreshold', cli: '--long-prefill-token-threshold', type: 'int', min: 0, vllm: true, into: 'flags', help: 'Cap on one request\'s prefill chunk per step (default 0 = no cap).' },
  { key: 'gpuMemoryUtilization', cli: '--gpu-memory-utilization', type: 'number', min: 0.01, max: 1, vllm: true, into: 'flags', help: 'Fraction of GPU memory vLLM may use; sets the KV cache size (default 0.92).' },
  { key: 'enablePrefixCaching', cli: '--enable-prefix-caching', type: 'bool', vllm: true, into: 'flags', help: 'Reuse KV blocks of identical prompt prefixes (V1 default on).' },
  { key: 'numGpuBlocksOverride', cli: '--num-gpu-blocks-override', type: 'int', min: 2, vllm: true, into: 'flags', help: 'Force the number of KV blocks (to provoke preemption).' },
  { key: 'blockSize', cli: '--block-size', type: 'int', min: 1, vllm: true, into: 'flags', help: 'Tokens per KV block (default 16).' },
  { key: 'enablePromptTokensDetails', cli: '--enable-prompt-tokens-details', type: 'bool', vllm: true, into: 'args', help: 'Report usage.prompt_tokens_details.cached_tokens (default off).' },
  { key: 'enableForceIncludeUsage', cli: '--enable-force-include-usage', type: 'bool', vllm: true, into: 'args', help: 'Send usage on every stream, continuously (default off).' },
  { key: 'swapSpace', cli: '--swap-space', type: 'number', min: 0, vllm: false, into: 'flags', help: 'GiB of CPU swap for --preemption-mode swap (V0 only; removed from vLLM in 2026-03).' },
  { key: 'preemptionMode', cli: '--preemption-mode', type: 'enum', values: ['recompute', 'swap'], vllm: false, into: 'flags', help: 'recompute = vLLM V1 (default); swap = the V0 behaviour, for comparison.' },
  { key: 'seed', cli: '--seed', type: 'int', vllm: false, into: 'flags', help: 'Seed of the simulator\'s output lengths and text (default 0).' },
  { key: 'statsIntervalS', cli: '--stats-interval-s', type: 'number', min: 0, vllm: false, into: 'args', help: 'Seconds between "Engine 000:" stats lines (default 10; 0 = off).' },
  // Fault injection (src/sim/http/faults.ts). Fractions are of completion requests, seeded by --seed, together ≤ 1.
  { key: 'http500', cli: '--fault-http-500', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction of completion requests answered HTTP 500 with vLLM\'s error body (default 0).' },
  { key: 'http503', cli: '--fault-http-503', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction answered HTTP 503 with vLLM\'s error body (default 0).' },
  { key: 'reset', cli: '--fault-reset', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction whose connection is destroyed mid-stream, after --fault-after-chunks events (default 0).' },
  { key: 'streamError', cli: '--fault-stream-error', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction that get vLLM\'s mid-stream error event, then [DONE] (default 0).' },
  { key: 'stall', cli: '--fault-stall', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction whose stream stalls for --fault-stall-s mid-stream (default 0).' },
  { key: 'stallS', cli: '--fault-stall-s', type: 'number', min: 0, vllm: false, into: 'faults', help: 'Length of a stall, seconds (default 5).' },
  { key: 'slowHeaders', cli: '--fault-slow-headers', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction whose response headers are delayed by --fault-slow-headers-s (default 0).' },
  { key: 'slowHeadersS', cli: '--fault-slow-headers-s', type: 'number', min: 0, vllm: false, into: 'faults', help: 'Delay before the response headers, seconds (default 2).' },
  { key: 'malformed', cli: '--fault-malformed', type: 'number', min: 0, max: 1, vllm: false, into: 'faults', help: 'Fraction with one malformed JSON event mid-stream (default 0).' },
  { key: 'afterChunks', cli: '--fault-after-chunks', type: 'int', min: 0, vllm: false, into: 'faults', help: 'SSE events sent before a mid-stream fault strikes (default 2).' },
  { key: 'exitAfterS', cli: '--fault-exit-after-s', type: 'number', min: 0, vllm: false, into: 'faults', help: 'Exit with code 1 and a CUDA out-of-memory error this many seconds after listening, as a crashing vLLM (default 0 = never).' },
];

const BY_CLI = new Map<string, FlagSpec>(SERVE_FLAGS.map((f) => [f.cli, f]));

function knownFlagsList(): string {
  return SERVE_FLAGS.map((f) => (f.type === 'bool' ? `${f.cli}/--no-${f.cli.slice(2)}` : f.cli)).join(', ');
}

/** Parses `1k` (1000), `1K` (1024), `25.6k`, `2m`/`2M` as vLLM's `--max-model-len` does. */
function parseSuffixed(raw: string): number {
  const m = /^(\d+(?:\.\d+)?)([kKmMgG]?)$/.exec(raw.trim());
  if (!m) return Number.NaN;
  const mult: Record<string, number> = { '': 1, k: 1e3, K: 1024, m: 1e6, M: 1024 ** 2, g: 1e9, G: 1024 ** 3 };
  return Math.round(Number(m[1]) * mult[m[2]]);
}

function parseValue(spec: FlagSpec, raw: string): string | number {
  if (spec.type === 'string') return raw;
  if (spec.type === 'enum') {
    if (!spec.values!.includes(raw)) throw new Error(`${spec.cli} must be one of ${spec.values!.join(', ')}, got '${raw}'`);
    return raw;
  }
  const v = spec.key === 'maxModelLen' ? parseSuffixed(raw) : raw.trim() === '' ? Number.NaN : Number(raw);
  const what = spec.type === 'int' ? 'an integer' : 'a number';
  const range = spec.min !== undefined && spec.max !== undefined ? ` in [${spec.min}, ${spec.max}]`
    : spec.min !== undefined ? ` ≥ ${spec.min}` : '';
  const bad = !Number.isFinite(v) || (spec.type === 'int' && !Number.isInteger(v))
    || (spec.min !== undefined && v < spec.min) || (spec.max !== undefined && v > spec.max);
  if (bad) {
    const hint = spec.key === 'maxModelLen' && /^(-1|auto)$/i.test(raw.trim())
      ? ' (the simulator does not support auto; give a length such as 32768)' : '';
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
    flags: {}, host: '127.0.0.1', port: 8000, statsIntervalS: 10,
    enablePromptTokensDetails: false, enableForceIncludeUsage: false, faults: {}, help: false,
  };
  const set = (spec: FlagSpec, v: unknown) => {
    const target = (spec.into === 'flags' ? out.flags : spec.into === 'faults' ? out.faults : out) as Record<string, unknown>;
    target[spec.key] = v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') { out.help = true; continue; }
    if (!arg.startsWith('--')) {
      if (out.model !== undefined) throw new Error(`unexpected argument '${arg}': only one model may be given (model is already '${out.model}')`);
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
      if (inline !== undefined) throw new Error(`${name} takes no value; write ${spec.cli} to turn it on or --no-${spec.cli.slice(2)} to turn it off`);
      set(spec, boolValue);
      continue;
    }
    const raw = inline ?? argv[++i];
    if (raw === undefined || (inline === undefined && raw.startsWith('--'))) throw new Error(`${name} needs a value, e.g. ${name} ${example(spec)}`);
    set(spec, parseValue(spec, raw));
  }
  return out;
}

function example(spec: FlagSpec): string {
  if (spec.into === 'faults') return spec.max === 1 ? '0.1' : '2';
  return spec.type === 'enum' ? spec.values![0] : spec.type === 'string' ? 'NAME' : spec.key === 'gpuMemoryUtilization' ? '0.9' : '2048';
}

/**
 * The inverse of `parseServeArgs` for `ServerFlags`: `--x value` pairs in table order,
 * booleans as `--x`/`--no-x`, undefined fields left out. With `target: 'vllm'` the
 * simulator-only flags (`--preemption-mode`, `--swap-space`, `--seed`) are dropped, so the
 * result can be passed to a real `vllm serve`. Default target `sim` (round-trips exactly).
 */
export function toServeArgs(flags: ServerFlags, opts: { target?: 'sim' | 'vllm' } = {}): string[] {
  const args: string[] = [];
  for (const spec of SERVE_FLAGS) {
    if (spec.into !== 'flags') continue;
    const v = (flags as Record<string, unknown>)[spec.key];
    if (v === undefined || (opts.target === 'vllm' && !spec.vllm)) continue;
    if (spec.type === 'bool') args.push(v ? spec.cli : `--no-${spec.cli.slice(2)}`);
    else args.push(spec.cli, String(v));
  }
  return args;
}

/** The flags table as help text (for `loadlab sim --help`). */
export function formatFlagsHelp(): string {
  const rows = SERVE_FLAGS.map((f) => {
    const name = f.type === 'bool' ? `${f.cli}, --no-${f.cli.slice(2)}`
      : `${f.cli} ${f.type === 'enum' ? f.values!.join('|') : f.type === 'string' ? 'NAME' : 'N'}`;
    return `  ${name.padEnd(46)} ${f.help}${f.vllm ? '' : ' [simulator only]'}`;
  });
  return ['Usage: loadlab sim [model] [flags]', '', 'Flags (same names as `vllm serve`):', ...rows].join('\n');
}

/**
 * Warnings about `vllm serve` arguments that start but slow the lessons down (pure; `[]` when
 * none). Today one: `--quantization gptq` (or `-q gptq`, `--quantization=gptq`). For a GPTQ
 * checkpoint vLLM picks the Marlin kernel itself; an explicit `gptq` makes
 * `GPTQMarlinConfig.override_quantization_method` (vllm/model_executor/layers/quantization/gptq_marlin.py)
 * log "…you specified quantization=gptq explicitly, so forcing gptq" and keep the slower
 * non-Marlin kernel, so TPOT no longer matches the lessons' roofline. (vLLM PR #38288, 2026-03,
 * later maps `gptq` to the Marlin config; leaving the flag out is right on every version.)
 */
export function serveArgWarnings(argv: readonly string[]): string[] {
  const warnings: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = a === '--quantization' || a === '-q' ? argv[i + 1] : a.startsWith('--quantization=') ? a.slice(15) : undefined;
    if (value === 'gptq') {
      warnings.push('`--quantization gptq` forces vLLM\'s slower non-Marlin GPTQ kernel (vllm/model_executor/layers/quantization/gptq_marlin.py, ' +
        'override_quantization_method); drop the flag: vLLM picks gptq_marlin for this model by itself.');
    }
  }
  return warnings;
}
