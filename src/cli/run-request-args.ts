/**
 * The request flags of `loadlab run` that shape every request's headers and body, named and meant
 * as `vllm bench serve`'s (vllm/benchmarks/serve.py `add_cli_args` and `main_async`):
 * - `--header KEY=VALUE …` (vLLM's `nargs="*"`; repeating the flag works too). vLLM passes them
 *   with each request, over its own defaults and under the request id
 *   (vllm/benchmarks/lib/endpoint_request_func.py `_update_headers_common`); LoadLab's `x-request-id`
 *   is likewise set last, so that header is refused. `Name: value` (curl's form) is accepted too.
 * - `--extra-body JSON`: a JSON object merged into every request body (`payload.update`, top level,
 *   `_update_payload_common` in the same file).
 * - the sampling group `--top-p --top-k --min-p --temperature --frequency-penalty --presence-penalty
 *   --repetition-penalty`: only the given ones are sent, as top-level body fields (vLLM collects them
 *   into `sampling_params` and merges `{**sampling_params, **extra_body}`).
 * Deviations, each refused with the fix named: a sampling field given both as a flag and in
 * `--extra-body` (vLLM lets the JSON win silently); body fields LoadLab owns (OWNED_BODY_KEYS);
 * sampling values outside the ranges vLLM's `SamplingParams._verify_args` accepts in every recent
 * version (vllm/sampling_params.py), so a run is not hundreds of identical 400s.
 */

import { UsageError } from './usage-error';

/** parseArgs specs of these flags. */
export const REQUEST_OPTIONS = {
  header: { type: 'string', multiple: true },
  'extra-body': { type: 'string' },
  'top-p': { type: 'string' },
  'top-k': { type: 'string' },
  'min-p': { type: 'string' },
  temperature: { type: 'string' },
  'frequency-penalty': { type: 'string' },
  'presence-penalty': { type: 'string' },
  'repetition-penalty': { type: 'string' },
} as const;

type Flags = Partial<Record<keyof typeof REQUEST_OPTIONS, string | string[]>>;

/**
 * Body fields `--extra-body` may not set, with the flag to use instead. LoadLab's timing needs
 * its own `stream`/`stream_options` (usage on every chunk), and the workload owns the rest.
 */
export const OWNED_BODY_KEYS: Record<string, string> = {
  model: '--model',
  messages: '--prompt or --dataset-name',
  prompt: '--prompt or --dataset-name',
  stream: 'nothing: LoadLab always streams',
  stream_options: 'nothing: LoadLab always asks for usage on every chunk, which its token timing needs',
  max_tokens: '--max-tokens or the dataset output length flags',
  max_completion_tokens: '--max-tokens or the dataset output length flags',
  min_tokens: '--ignore-eos (exact output lengths)',
  ignore_eos: '--ignore-eos',
  n: 'nothing: LoadLab measures one choice per request',
};

/** A sampling flag: its body field, whether it is an integer, and the range vLLM accepts. */
interface SamplingFlag {
  field: string;
  int?: boolean;
  ok: (x: number) => boolean;
  range: string;
}

/** vllm/sampling_params.py `_verify_args`; temperature's upper bound (2 in newer vLLM) is left to the server. */
const SAMPLING: Record<string, SamplingFlag> = {
  'top-p': { field: 'top_p', ok: (x) => x > 0 && x <= 1, range: 'in (0, 1]' },
  'top-k': { field: 'top_k', int: true, ok: (x) => x >= -1, range: 'an integer ≥ -1 (0 or -1 disables it)' },
  'min-p': { field: 'min_p', ok: (x) => x >= 0 && x <= 1, range: 'in [0, 1]' },
  temperature: { field: 'temperature', ok: (x) => x >= 0, range: '≥ 0 (0 = greedy)' },
  'frequency-penalty': { field: 'frequency_penalty', ok: (x) => x >= -2 && x <= 2, range: 'in [-2, 2]' },
  'presence-penalty': { field: 'presence_penalty', ok: (x) => x >= -2 && x <= 2, range: 'in [-2, 2]' },
  'repetition-penalty': { field: 'repetition_penalty', ok: (x) => x > 0, range: '> 0 (1 = off)' },
};

/**
 * Argument words as Node's parseArgs can read them. vLLM's `--header` takes several values
 * (`nargs="*"`): `--header a=1 b=2`; parseArgs takes one per flag, so the words after `--header`
 * (up to the next `-…` word) become `--header=a=1 --header=b=2`. A negative sampling value
 * (`--presence-penalty -0.5`, as argparse reads it) becomes `--presence-penalty=-0.5`.
 */
export function spreadRequestArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i].slice(2);
    if (argv[i].startsWith('--') && flag in SAMPLING && /^-[\d.]/.test(argv[i + 1] ?? '')) {
      out.push(`${argv[i]}=${argv[++i]}`);
      continue;
    }
    if (argv[i] !== '--header') {
      out.push(argv[i]);
      continue;
    }
    let k = i + 1;
    for (; k < argv.length && !argv[k].startsWith('-'); k++) out.push(`--header=${argv[k]}`);
    if (k === i + 1) throw new UsageError('--header needs KEY=VALUE, e.g. --header x-tenant=course');
    i = k - 1;
  }
  return out;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Headers the HTTP client or LoadLab itself sets. */
const OWNED_HEADERS: Record<string, string> = {
  'x-request-id': 'LoadLab sets it per request (the id that joins records with the server log)',
  'content-type': 'LoadLab sends JSON',
  'content-length': 'the HTTP client sets it',
  'transfer-encoding': 'the HTTP client sets it',
  host: 'the HTTP client sets it from --base-url',
  connection: 'the HTTP client manages connections',
};

/** `--header` values as a headers object (names lower-cased); throws UsageError naming the fix. */
export function headersFlag(v: Flags): Record<string, string> | undefined {
  const items = v.header as string[] | undefined;
  if (items === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const item of items) {
    const eq = item.indexOf('=');
    const colon = item.indexOf(':');
    const at = eq < 0 ? colon : colon < 0 ? eq : Math.min(eq, colon);
    const name = (at < 0 ? item : item.slice(0, at)).trim().toLowerCase();
    if (at < 0 || !TOKEN.test(name)) {
      throw new UsageError(
        `--header '${item}' is not KEY=VALUE; write it as vllm bench serve does, e.g. --header x-tenant=course`,
      );
    }
    const value = item.slice(at + 1).trim();
    if (/[\0\r\n]/.test(value)) throw new UsageError(`--header ${name}: the value has a line break or NUL; remove it`);
    if (OWNED_HEADERS[name]) throw new UsageError(`--header ${name} cannot be set: ${OWNED_HEADERS[name]}; drop it`);
    if (name in out) throw new UsageError(`--header ${name} is given twice; give each header once`);
    out[name] = value;
  }
  return out;
}

function samplingFlags(v: Flags): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [flag, s] of Object.entries(SAMPLING)) {
    const raw = v[flag as keyof Flags] as string | undefined;
    if (raw === undefined) continue;
    const x = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(x) || (s.int && !Number.isInteger(x)) || !s.ok(x)) {
      throw new UsageError(`--${flag} must be ${s.range} (vLLM's range for ${s.field}), got '${raw}'`);
    }
    out[s.field] = x;
  }
  return out;
}

function extraBodyFlag(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new UsageError(
      `--extra-body is not JSON (${(err as Error).message}); give an object in single quotes, e.g. --extra-body '{"top_k": 20}'`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new UsageError(`--extra-body must be a JSON object of body fields, e.g. '{"top_k": 20}', got ${raw}`);
  }
  const body = parsed as Record<string, unknown>;
  const owned = Object.keys(body).find((k) => k in OWNED_BODY_KEYS);
  if (owned) throw new UsageError(`--extra-body cannot set "${owned}"; use ${OWNED_BODY_KEYS[owned]}`);
  return body;
}

/** What the request flags add to every request, and what the manifest says about them. */
export interface RequestExtras {
  /** Extra headers (names lower-cased); values never written to disk. */
  headers?: Record<string, string>;
  /** Sampling fields plus `--extra-body`, merged into every request body. */
  extraBody?: Record<string, unknown>;
  /** For the manifest's workload: header NAMES only, the body fields sent. */
  info: { headerNames?: string[]; extraBody?: Record<string, unknown> };
}

/** The checked request flags. `apiKeyFlag`: whether `--api-key` was given (then no `authorization` header). */
export function requestFlags(v: Flags, apiKeyFlag: boolean): RequestExtras {
  const headers = headersFlag(v);
  if (headers?.authorization !== undefined && apiKeyFlag) {
    throw new UsageError('--header authorization and --api-key both set the key; give it once');
  }
  const sampling = samplingFlags(v);
  const extra = extraBodyFlag(v['extra-body'] as string | undefined);
  const twice = Object.keys(sampling).find((k) => extra && k in extra);
  if (twice) {
    const flag = Object.keys(SAMPLING).find((f) => SAMPLING[f].field === twice);
    throw new UsageError(`${twice} is set by --${flag} and in --extra-body; give it once`);
  }
  const body = { ...sampling, ...extra };
  const out: RequestExtras = { info: {} };
  if (headers) {
    out.headers = headers;
    out.info.headerNames = Object.keys(headers).sort();
  }
  if (Object.keys(body).length > 0) {
    out.extraBody = body;
    out.info.extraBody = body;
  }
  return out;
}
