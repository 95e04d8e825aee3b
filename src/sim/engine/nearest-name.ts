/**
 * "Did you mean …?" for names a user typed (profile names, profile fields): the known names
 * closest by edit distance, or those that contain what was typed.
 */

/** Levenshtein distance between `a` and `b` (insert, delete, substitute; case-insensitive). */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[y.length];
}

/**
 * Known names that `typed` probably meant: those containing it (case-insensitive), else those containing
 * each of its `-`-separated parts (`h100-qwen`), else those within an edit distance of max(2, a third of
 * its length), closest first; at most `max` (default 3).
 */
export function nearestNames(typed: string, known: readonly string[], max = 3): string[] {
  const t = typed.toLowerCase();
  const containing = known.filter((k) => t.length >= 2 && k.toLowerCase().includes(t));
  if (containing.length) return containing.slice(0, max);
  const parts = t.split(/[-_\s]+/).filter((p) => p.length >= 2);
  const byParts = known.filter((k) => parts.length > 1 && parts.every((p) => k.toLowerCase().includes(p)));
  if (byParts.length) return byParts.slice(0, max);
  const limit = Math.max(2, Math.floor(t.length / 3));
  return known
    .map((k) => ({ k, d: editDistance(t, k) }))
    .filter((c) => c.d <= limit)
    .sort((p, q) => p.d - q.d || p.k.localeCompare(q.k))
    .slice(0, max)
    .map((c) => c.k);
}

/** ` Did you mean a or b?` (with a leading space), or '' when nothing is close. */
export function didYouMean(typed: string, known: readonly string[]): string {
  const near = nearestNames(typed, known);
  return near.length ? ` Did you mean ${near.join(' or ')}?` : '';
}
