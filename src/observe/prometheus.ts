/**
 * A parser for the Prometheus text exposition format 0.0.4 (what vLLM's `/metrics` serves),
 * written against the format spec and what Python's `prometheus_client` actually emits:
 * - `# HELP name text` (text escapes `\\` and `\n`) and `# TYPE name type`; other `#` lines are comments;
 * - metric names may contain colons (`vllm:num_requests_running`);
 * - label values escape `\\`, `\"` and `\n`; labels come in any order, a trailing comma is allowed;
 * - values are Go floats: `1`, `0.0`, `1.768731088e+09`, `NaN`, `+Inf`, `-Inf`;
 * - an optional integer timestamp (ms) may follow the value.
 *
 * Samples are grouped into families: a histogram's `_bucket`/`_count`/`_sum`, a counter's
 * `_total`, and the `_created` series go with the family their `# TYPE` line declared, in
 * both spellings `prometheus_client` uses (`# TYPE x_total counter` and `# TYPE x counter`).
 */

/** A family's declared type (`untyped` when no `# TYPE` line names it). */
export type MetricType =
  | 'counter'
  | 'gauge'
  | 'histogram'
  | 'summary'
  | 'untyped'
  | 'unknown'
  | 'info'
  | 'stateset'
  | 'gaugehistogram';

/** One line of a scrape. */
export interface PromSample {
  /** The full series name, suffix included (`vllm:e2e_request_latency_seconds_bucket`). */
  name: string;
  labels: Record<string, string>;
  value: number;
  /** Milliseconds since the epoch, when the line carried one. */
  timestampMs?: number;
}

/** A metric family: its `# HELP`/`# TYPE` and every sample that belongs to it, in text order. */
export interface MetricFamily {
  name: string;
  type: MetricType;
  /** Unescaped help text; `''` when there was none. */
  help: string;
  samples: PromSample[];
}

const TYPES = new Set<string>([
  'counter',
  'gauge',
  'histogram',
  'summary',
  'untyped',
  'unknown',
  'info',
  'stateset',
  'gaugehistogram',
]);
const SUFFIXES = ['_bucket', '_count', '_sum', '_created', '_total', '_gcount', '_gsum', '_info'];
const NAME_START = /[a-zA-Z_:]/;
const NAME_CHAR = /[a-zA-Z0-9_:]/;

/** Thrown for a line that is not valid exposition text; names the line number and shows the line. */
export class PrometheusParseError extends Error {
  constructor(
    readonly lineNo: number,
    readonly line: string,
    reason: string,
  ) {
    super(`Prometheus text, line ${lineNo}: ${reason}: ${JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}…` : line)}`);
    this.name = 'PrometheusParseError';
  }
}

/** Parses a Go float as Prometheus writes it (`NaN`, `+Inf`, `-Inf`, `Inf`, exponents). */
export function parsePromFloat(s: string): number {
  switch (s) {
    case '+Inf':
    case 'Inf':
    case '+inf':
    case 'inf':
      return Infinity;
    case '-Inf':
    case '-inf':
      return -Infinity;
    case 'NaN':
    case 'nan':
      return NaN;
  }
  // Number('') is 0 and Number('0x10') is 16: neither is a Prometheus value.
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return Number.NaN;
  return Number(s);
}

function unescapeHelp(s: string): string {
  return s.replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
}

/**
 * Parses a whole scrape into families, in order of first appearance. Throws a
 * `PrometheusParseError` on a malformed line (an OpenMetrics `# EOF` and exemplars are accepted).
 */
export function parsePrometheus(text: string): MetricFamily[] {
  const families = new Map<string, MetricFamily>();
  const family = (name: string): MetricFamily => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, type: 'untyped', help: '', samples: [] }));
    return f;
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
    const t = line.trimStart();
    if (t === '') continue;
    if (t[0] === '#') {
      const m = /^#\s*(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s(.*))?$/.exec(t);
      if (!m) continue; // a plain comment
      const f = family(m[2]);
      if (m[1] === 'HELP') f.help = unescapeHelp(m[3] ?? '');
      else {
        const type = (m[3] ?? '').trim();
        if (!TYPES.has(type)) throw new PrometheusParseError(i + 1, line, `unknown metric type '${type}'`);
        f.type = type as MetricType;
      }
      continue;
    }
    const s = parseSampleLine(t, i + 1, line);
    familyOf(s.name, families, family).samples.push(s);
  }
  return [...families.values()];
}

/** The family a series belongs to: its own name if declared, else the declared name its suffix extends. */
function familyOf(name: string, families: Map<string, MetricFamily>, create: (n: string) => MetricFamily): MetricFamily {
  const own = families.get(name);
  if (own) return own;
  for (const suffix of SUFFIXES) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const f = families.get(base) ?? families.get(`${base}_total`);
    if (f && f.type !== 'untyped' && f.type !== 'gauge') return f;
  }
  return create(name);
}

function parseSampleLine(t: string, lineNo: number, line: string): PromSample {
  const fail = (reason: string): never => {
    throw new PrometheusParseError(lineNo, line, reason);
  };
  let p = 0;
  if (!NAME_START.test(t[0])) fail('a sample line must start with a metric name');
  while (p < t.length && NAME_CHAR.test(t[p])) p++;
  const name = t.slice(0, p);
  const labels: Record<string, string> = {};
  while (t[p] === ' ' || t[p] === '\t') p++;
  if (t[p] === '{') {
    p++;
    for (;;) {
      while (t[p] === ' ' || t[p] === '\t' || t[p] === ',') p++;
      if (t[p] === '}') {
        p++;
        break;
      }
      const start = p;
      while (p < t.length && NAME_CHAR.test(t[p])) p++;
      const key = t.slice(start, p);
      if (key === '') fail('expected a label name or }');
      while (t[p] === ' ' || t[p] === '\t') p++;
      if (t[p] !== '=') fail(`expected = after label ${key}`);
      p++;
      while (t[p] === ' ' || t[p] === '\t') p++;
      if (t[p] !== '"') fail(`the value of label ${key} must be in double quotes`);
      p++;
      let value = '';
      for (;;) {
        if (p >= t.length) fail(`unterminated value of label ${key}`);
        const c = t[p++];
        if (c === '"') break;
        if (c === '\\') {
          const e = t[p++];
          value += e === 'n' ? '\n' : e === '"' ? '"' : e === '\\' ? '\\' : `\\${e ?? ''}`;
        } else value += c;
      }
      labels[key] = value;
      while (t[p] === ' ' || t[p] === '\t') p++;
      if (t[p] !== ',' && t[p] !== '}') fail(`expected , or } after label ${key}`);
    }
  }
  // An exemplar (` # {trace_id="…"} 1.0`) may follow; it is not part of the sample.
  const hash = t.indexOf(' #', p);
  const rest = (hash >= 0 ? t.slice(p, hash) : t.slice(p)).trim().split(/[ \t]+/);
  if (rest[0] === '' || rest.length > 2) fail('expected a value and an optional timestamp after the name and labels');
  const value = parsePromFloat(rest[0]);
  if (Number.isNaN(value) && rest[0] !== 'NaN' && rest[0] !== 'nan') fail(`'${rest[0]}' is not a number`);
  const sample: PromSample = { name, labels, value };
  if (rest.length === 2) {
    const ts = Number(rest[1]);
    if (!Number.isFinite(ts)) fail(`'${rest[1]}' is not a timestamp`);
    sample.timestampMs = ts;
  }
  return sample;
}

/** Samples by series name, for fast lookups. Built once per parsed scrape (see `sampleIndex`). */
export type SampleIndex = ReadonlyMap<string, readonly PromSample[]>;

const indexCache = new WeakMap<readonly MetricFamily[], SampleIndex>();

/** Indexes a scrape's samples by series name (cached per families array). */
export function sampleIndex(families: readonly MetricFamily[]): SampleIndex {
  let idx = indexCache.get(families);
  if (idx) return idx;
  const m = new Map<string, PromSample[]>();
  for (const f of families) {
    for (const s of f.samples) {
      const list = m.get(s.name);
      if (list) list.push(s);
      else m.set(s.name, [s]);
    }
  }
  indexCache.set(families, (idx = m));
  return idx;
}

function matches(s: PromSample, want?: Record<string, string>): boolean {
  if (!want) return true;
  for (const k in want) if (s.labels[k] !== want[k]) return false;
  return true;
}

/** Every sample of series `name` whose labels include all of `labels` (any order, extra labels allowed). */
export function pickSamples(families: readonly MetricFamily[], name: string, labels?: Record<string, string>): PromSample[] {
  return (sampleIndex(families).get(name) ?? []).filter((s) => matches(s, labels));
}

/** The value of the first sample of `name` whose labels include `labels`; undefined when there is none. */
export function pickValue(families: readonly MetricFamily[], name: string, labels?: Record<string, string>): number | undefined {
  for (const s of sampleIndex(families).get(name) ?? []) if (matches(s, labels)) return s.value;
  return undefined;
}

/** The sum over every matching sample of `name` (e.g. over `engine` labels); undefined when there is none. */
export function sumValues(families: readonly MetricFamily[], name: string, labels?: Record<string, string>): number | undefined {
  let sum: number | undefined;
  for (const s of sampleIndex(families).get(name) ?? []) if (matches(s, labels)) sum = (sum ?? 0) + s.value;
  return sum;
}

/** The family called `name` (e.g. `vllm:time_to_first_token_seconds`), if the scrape has it. */
export function findFamily(families: readonly MetricFamily[], name: string): MetricFamily | undefined {
  return families.find((f) => f.name === name);
}
