/**
 * The per-turn TTFT table `loadlab run --multi-turn` prints under the latency table: one row per
 * turn (0-based) with the requests sent, how many failed, and n, p50, p95, p99 of TTFT in ms over
 * the successful ones (numpy's linear percentiles, src/stats/percentile.ts). With a small n the
 * upper percentiles are interpolated between few values: n is printed beside them for that reason.
 * Pure: the summary's `byTurn` in, text out.
 */

import type { TurnSummary } from '../types';

const num = (x: number): string => (Number.isNaN(x) ? '–' : x.toFixed(1));

/** Aligned text, headed `TTFT by turn (ms)`. */
export function formatTurnTable(byTurn: readonly TurnSummary[]): string {
  const header = ['turn', 'sent', 'failed', 'TTFT n', 'p50', 'p95', 'p99'];
  const rows = byTurn.map((t) => [
    String(t.turn),
    String(t.requests),
    String(t.failed),
    String(t.ttftMs.n),
    num(t.ttftMs.p50),
    num(t.ttftMs.p95),
    num(t.ttftMs.p99),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return ['TTFT by turn (ms)', line(header), ...rows.map(line)].join('\n');
}
