/**
 * Per-turn statistics of a multi-turn (sessions) run: for turn 0, 1, 2, … the measured requests
 * sent, how many completed or failed, and the TTFT distribution of the successful ones.
 *
 * vLLM's multi-turn benchmark (benchmarks/multi_turn/benchmark_serving_multi_turn.py,
 * `process_statistics`) pools every turn into one TTFT distribution and reports `input_num_turns`
 * beside it; splitting TTFT by turn is LoadLab's addition: a later turn carries a longer history,
 * so its prefill (and its prefix-cache hits) differ from turn 0's. Pure: records in, rows out.
 */

import type { RequestRecord, TurnSummary } from '../types';
import { describe } from './percentile';

/**
 * One row per turn position present in `records` (warm-up left out), ascending; `undefined` when
 * no measured record carries a `turn` (an ordinary run). TTFT in ms over successful requests.
 */
export function summarizeTurns(records: readonly RequestRecord[]): TurnSummary[] | undefined {
  const byTurn = new Map<number, RequestRecord[]>();
  for (const r of records) {
    if (r.warmup || typeof r.turn !== 'number') continue;
    const list = byTurn.get(r.turn);
    if (list) list.push(r);
    else byTurn.set(r.turn, [r]);
  }
  if (byTurn.size === 0) return undefined;
  return [...byTurn.keys()]
    .sort((a, b) => a - b)
    .map((turn) => {
      const rs = byTurn.get(turn)!;
      const ok = rs.filter((r) => r.ok);
      const ttft = ok.map((r) => r.ttftMs).filter((x): x is number => typeof x === 'number');
      return { turn, requests: rs.length, completed: ok.length, failed: rs.length - ok.length, ttftMs: describe(ttft) };
    });
}
