/** Where a concurrency sweep stops paying: the saturation point and the scaling chart's computed title. */

/**
 * The saturation point of a sweep: the first concurrency after which the next doubling adds less
 * than `gainBelow` (default 0.1 = 10%) output throughput. Gains between points that are not
 * exactly a doubling apart are normalised per doubling: (T₂/T₁)^(1/log₂(c₂/c₁)) − 1.
 * Undefined when throughput keeps growing (or with fewer than two points).
 */
export function findSaturation(
  points: { concurrency: number; outputTokensPerSec: number }[],
  opts: { gainBelow?: number } = {},
): number | undefined {
  const gainBelow = opts.gainBelow ?? 0.1;
  if (!Number.isFinite(gainBelow) || gainBelow < 0) {
    throw new Error(`gainBelow must be a fraction ≥ 0 (0.1 = 10%), got ${gainBelow}`);
  }
  const ps = [...points].sort((a, b) => a.concurrency - b.concurrency);
  for (let i = 0; i + 1 < ps.length; i++) {
    const a = ps[i];
    const b = ps[i + 1];
    const doublings = Math.log2(b.concurrency / a.concurrency);
    if (!(doublings > 0) || !(a.outputTokensPerSec > 0)) continue;
    const gain = (b.outputTokensPerSec / a.outputTokensPerSec) ** (1 / doublings) - 1;
    if (gain < gainBelow) return a.concurrency;
  }
  return undefined;
}

/**
 * The scaling chart's title, computed from the data: "吞吐随并发上升，c=X 后每翻倍增幅 < Y %" only
 * when `findSaturation(points, { gainBelow })` finds that point; otherwise "吞吐随并发持续上升（未见平台）".
 * `gainBelow` default 0.1 (10 %).
 */
export function scalingTitle(
  points: { concurrency: number; outputTokensPerSec: number }[],
  opts: { gainBelow?: number } = {},
): string {
  const gainBelow = opts.gainBelow ?? 0.1;
  if (points.length < 2) return '吞吐与并发 throughput vs concurrency';
  const at = findSaturation(points, { gainBelow });
  if (at !== undefined) return `吞吐随并发上升，c=${at} 后每翻倍增幅 < ${+(gainBelow * 100).toFixed(2)} %`;
  return '吞吐随并发持续上升（未见平台）';
}
