/**
 * Goodput as `vllm bench serve --goodput` defines it (vllm/benchmarks/serve.py):
 * - `parseGoodput(['ttft:200', 'tpot:50', 'e2el:1000'])`: `parse_goodput` + `check_goodput_args`.
 *   Keys are `ttft`, `tpot`, `e2el`; values are milliseconds ≥ 0; a repeated key keeps the last value
 *   (a Python dict). Errors use vLLM's wording, plus the fix.
 * - A request is good when it succeeded and every given SLO holds with `slo ≥ value` (inclusive);
 *   TPOT counts as 0 for a request with ≤ 1 output token (`calculate_metrics`). Counted by
 *   `meetsSlo` in summary.ts; `goodput.requestsPerSec` = good / duration (vLLM `request_goodput`).
 * Deviation: vLLM's `float()` also takes `inf` and `nan`; LoadLab refuses both (an infinite SLO is
 * no SLO: leave the key out; a NaN one would make every request bad).
 */

import type { RequestRecord, Slo } from '../types';
import { meetsSlo } from './summary';

/** vLLM's SLO names (`VALID_NAMES` in check_goodput_args) and the `Slo` fields they set. */
export const GOODPUT_KEYS = { ttft: 'ttftMs', tpot: 'tpotMs', e2el: 'e2eMs' } as const;

const FORMAT_HELP =
  'Invalid format found for service level objectives. Specify service level objectives for goodput as "KEY:VALUE" pairs, ' +
  'where the key is a metric name, and the value is a number in milliseconds. e.g. --goodput ttft:200 tpot:50 e2el:1000';

/** Python's `float(s)` for decimal text (underscores between digits, surrounding spaces, inf/nan); NaN-safe undefined when not a number. */
function pyFloat(s: string): number | undefined {
  const t = s.trim().replace(/(\d)_(?=\d)/g, '$1');
  if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return NaN;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(t)) return undefined;
  return Number(t);
}

/** A float as Python prints it in vLLM's messages: `200.0`, `-5.0`, `0.5`, `inf`, `nan`. */
function pyRepr(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  return Number.isInteger(v) ? `${v}.0` : String(v);
}

/**
 * `--goodput` pairs (`['ttft:200', 'tpot:50']`) as an `Slo` in ms. Throws a TypeError with vLLM's
 * message for a malformed pair or an unknown name, a RangeError for a negative (or inf/nan) value.
 */
export function parseGoodput(pairs: readonly string[]): Slo {
  if (pairs.length === 0) throw new TypeError(`--goodput needs at least one KEY:VALUE pair; ${FORMAT_HELP}`);
  const slo: Slo = {};
  for (const pair of pairs) {
    const parts = pair.split(':');
    const value = parts.length === 2 ? pyFloat(parts[1]) : undefined;
    if (value === undefined) throw new TypeError(`${FORMAT_HELP} (got '${pair}')`);
    const name = parts[0];
    if (!Object.hasOwn(GOODPUT_KEYS, name)) {
      throw new TypeError(
        `Invalid metric name found, ${name}: ${pyRepr(value)}. The service level objective name should be one of ['ttft', 'tpot', 'e2el']. `,
      );
    }
    if (value < 0) {
      throw new RangeError(
        `Invalid value found, ${name}: ${pyRepr(value)}. The service level objective value should be non-negative.`,
      );
    }
    if (!Number.isFinite(value)) {
      throw new RangeError(
        `Invalid value found, ${name}: ${pyRepr(value)}. Give a finite number of milliseconds, or leave ${name} out.`,
      );
    }
    slo[GOODPUT_KEYS[name as keyof typeof GOODPUT_KEYS]] = value;
  }
  return slo;
}

/** An `Slo` in vLLM's `--goodput` syntax, e.g. `ttft:200 tpot:50 e2el:1000` (keys in that order). */
export function formatGoodput(slo: Slo): string {
  return (Object.entries(GOODPUT_KEYS) as Array<[string, keyof Slo]>)
    .filter(([, field]) => slo[field] !== undefined)
    .map(([name, field]) => `${name}:${slo[field]}`)
    .join(' ');
}

/**
 * Goodput of measured (non-warm-up) records over `durationS` seconds: `good` = successful records
 * meeting every SLO, `requestsPerSec` = good / durationS (NaN when durationS is 0), as vLLM's
 * `good_completed` and `request_goodput`.
 */
export function goodputOf(
  records: readonly RequestRecord[],
  slo: Slo,
  durationS: number,
): { good: number; requestsPerSec: number } {
  const good = records.filter((r) => !r.warmup && meetsSlo(r, slo)).length;
  return { good, requestsPerSec: durationS > 0 ? good / durationS : NaN };
}
