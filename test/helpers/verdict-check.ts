/**
 * Reads verdict prose the way a careful reader would (issue #13): every clause that prints an
 * interval `区间 [lo, hi]` must say only what that interval allows. Used on the sentences the
 * helpers build and on the Markdown an executed lesson notebook shows.
 *
 * A clause is the text between `。` or line breaks. Rules for a clause with one interval:
 * - `不含 0` → 0 is outside [lo, hi]; a "比 X 高" claim needs lo > 0, "比 X 低" needs hi < 0;
 * - `含 0` (not `不含 0`) → lo ≤ 0 ≤ hi, and no "比 X 高/低" claim;
 * - `都在 T ms 阈值之上` → lo > T; `都在 T ms 阈值之内` → hi ≤ T; `跨过 T ms 阈值` → lo ≤ T < hi;
 * - `落在设定的 ±X% 阈值之内` → |lo|, |hi| ≤ X % of the first `… ms` value in the clause (A's);
 * - `不足以判断` only beside `含 0` or `跨过`;
 * - a clause with an interval and none of these words is a problem too.
 */

const NUM = String.raw`(-?\d+(?:\.\d+)?(?:e-?\d+)?)`;
const INTERVAL = new RegExp(String.raw`区间 \[${NUM}, ${NUM}\]`, 'g');
const CLAIM = /比 \S+ ([高低]) /;

/** The clauses of a text (split at `。` and line breaks) that print an interval. */
export function intervalClauses(text: string): string[] {
  return text
    .split(/[。\n]/)
    .map((c) => c.trim())
    .filter((c) => c.includes('区间 ['));
}

function checkClause(clause: string): string | undefined {
  const found = [...clause.matchAll(INTERVAL)];
  if (found.length !== 1) return `expected one parsable interval, found ${found.length}`;
  const lo = Number(found[0][1]);
  const hi = Number(found[0][2]);
  if (!(lo <= hi)) return `interval [${lo}, ${hi}] is not ordered`;
  const claim = CLAIM.exec(clause)?.[1];
  const excludes0 = clause.includes('不含 0');
  const includes0 = !excludes0 && clause.includes('含 0');
  const undecided = clause.includes('不足以判断');
  const above = /都在 (\d+(?:\.\d+)?) ms 阈值之上/.exec(clause);
  const within = /都在 (\d+(?:\.\d+)?) ms 阈值之内/.exec(clause);
  const crosses = /跨过 (\d+(?:\.\d+)?) ms 阈值/.exec(clause);
  const band = /落在设定的 ±(\d+(?:\.\d+)?)% 阈值之内/.exec(clause);
  if (claim && !excludes0) return `claims "${claim}" without an interval that excludes 0`;
  if (claim === '高' && !(lo > 0)) return `claims higher but lo = ${lo}`;
  if (claim === '低' && !(hi < 0)) return `claims lower but hi = ${hi}`;
  if (excludes0 && !(lo > 0 || hi < 0)) return `says 不含 0 but the interval [${lo}, ${hi}] holds 0`;
  if (includes0 && !(lo <= 0 && hi >= 0)) return `says 含 0 but the interval is [${lo}, ${hi}]`;
  if (undecided && !includes0 && !crosses) return 'says 不足以判断 without saying why (含 0 / 跨过)';
  if (above && !(lo > Number(above[1]))) return `says above ${above[1]} ms but lo = ${lo}`;
  if (within && !(hi <= Number(within[1]))) return `says within ${within[1]} ms but hi = ${hi}`;
  if (crosses && !(lo <= Number(crosses[1]) && hi > Number(crosses[1])))
    return `says it crosses ${crosses[1]} ms: [${lo}, ${hi}]`;
  if (band) {
    const a = Number(/(-?\d+(?:\.\d+)?) ms/.exec(clause)?.[1]);
    const limit = (Math.abs(a) * Number(band[1])) / 100;
    // The printed numbers are rounded; allow the last printed digit.
    if (!(Math.abs(lo) <= limit * 1.01 + 0.05 && Math.abs(hi) <= limit * 1.01 + 0.05)) {
      return `says within ±${band[1]}% of ${a} ms but the interval is [${lo}, ${hi}]`;
    }
  }
  if (!excludes0 && !includes0 && !above && !within && !crosses && !band) return 'prints an interval but no verdict word';
  return undefined;
}

/** Every problem found in `text`'s interval clauses, as `"<problem>: <clause>"`; empty when all are sound. */
export function verdictProblems(text: string): string[] {
  const out: string[] = [];
  for (const clause of intervalClauses(text)) {
    const p = checkClause(clause);
    if (p) out.push(`${p}: ${clause}`);
  }
  return out;
}

/** A comparison's fields, as `compareMetric` returns them (structural, so this file needs no src import). */
interface ComparisonLike {
  requestedPct: number;
  pct: number;
  a: { value: number };
  interval: [number, number];
  direction: 'higher' | 'lower' | 'undecided';
  thresholdPct?: number;
  negligible: boolean;
  disturbed: string[];
}

/**
 * What is wrong with a comparison's verdict, judged by its own interval: a direction the interval
 * does not support, "negligible" beyond the stated threshold, or a tail percentile kept for a
 * disturbed run. Empty when sound.
 */
export function comparisonProblems(c: ComparisonLike, what = ''): string[] {
  const [lo, hi] = c.interval;
  const out: string[] = [];
  const at = `${what} [${lo}, ${hi}]`;
  if (c.direction === 'higher' && !(lo > 0)) out.push(`${at}: says higher, but the interval reaches 0`);
  if (c.direction === 'lower' && !(hi < 0)) out.push(`${at}: says lower, but the interval reaches 0`);
  if (c.direction === 'undecided' && (lo > 0 || hi < 0)) out.push(`${at}: says undecided, but the interval excludes 0`);
  if (c.negligible) {
    const band = c.thresholdPct === undefined ? NaN : (Math.abs(c.a.value) * c.thresholdPct) / 100;
    if (!(Math.abs(lo) <= band && Math.abs(hi) <= band)) out.push(`${at}: says no meaningful change beyond ±${c.thresholdPct}%`);
  }
  if (c.disturbed.length > 0 && c.requestedPct > 50 && c.pct !== 50) out.push(`${at}: a disturbed run kept p${c.pct}`);
  return out;
}
