/**
 * Waves of a run, counted from its records, for legends and captions that describe a run
 * ("happy c=64 (2 波 two waves)") instead of stating what it was meant to do.
 * A wave is a group of requests the client sent together: sorted by `startMs`, a new wave begins
 * where the gap to the previous send exceeds `gapMs` (default half the median E2E of the run's
 * requests). A closed loop of c slots serving 2c equal requests has two waves; a burst has one.
 */
import type { RequestRecord } from '../types';
import { finitePercentile } from './figure';

/** Options of `countWaves`. */
export interface WavesOptions {
  /** Gap between sends (ms) that starts a new wave. Default: half the median `endMs − startMs`. */
  gapMs?: number;
}

/** Number of waves in `records` (warm-up requests left out); 0 when there are none. */
export function countWaves(records: readonly RequestRecord[], opts: WavesOptions = {}): number {
  const rs = records.filter((r) => !r.warmup);
  if (rs.length === 0) return 0;
  const gapMs =
    opts.gapMs ??
    finitePercentile(
      rs.map((r) => r.endMs - r.startMs),
      50,
    ) / 2;
  if (!(gapMs >= 0)) throw new Error(`gapMs must be a duration ≥ 0 ms, got ${gapMs}`);
  const starts = rs.map((r) => r.startMs).sort((a, b) => a - b);
  let waves = 1;
  for (let i = 1; i < starts.length; i++) if (starts[i] - starts[i - 1] > gapMs) waves++;
  return waves;
}

/** `'1 波 one wave'`, `'2 波 two waves'`, … `'7 波 7 waves'`: the legend text for `n` waves. */
export function wavesLabel(n: number): string {
  const words = ['no', 'one', 'two', 'three', 'four', 'five'];
  return `${n} 波 ${words[n] ?? n} wave${n === 1 ? '' : 's'}`;
}
