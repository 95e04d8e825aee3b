/**
 * The one palette of every chart: series colours by position (the same i-th colour in a CDF, its
 * bootstrap dots and its bars), fixed colours for request phases, and one fixed colour per request
 * tag (`long`, `short`, …) that does not depend on which chart, or which run, shows it.
 */

/** Plotly's default colour cycle; series `i` of every chart gets `PALETTE[i]`. */
export const PALETTE: readonly string[] = [
  '#1f77b4',
  '#ff7f0e',
  '#2ca02c',
  '#d62728',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
];

/** The `i`-th palette colour (wraps around). */
export function colorAt(i: number): string {
  return PALETTE[((i % PALETTE.length) + PALETTE.length) % PALETTE.length];
}

/** Fixed colours for request phases and markers, shared by the Gantt and the server timeline. */
export const PHASE_COLORS = {
  queued: '#c7c7c7',
  waiting: '#ffbb78',
  decode: '#1f77b4',
  tokens: 'rgba(0,0,0,0.45)',
  failed: '#d62728',
  stall: '#d62728',
  preemption: '#9467bd',
} as const;

/**
 * Colours for request tags: none of them near a phase colour (no orange next to the light-orange
 * "waiting", no red next to "failed", no purple next to "preemption", no grey next to "queued").
 */
export const TAG_PALETTE: readonly string[] = [
  '#8c564b',
  '#bcbd22',
  '#393b79',
  '#1f77b4',
  '#e377c2',
  '#2ca02c',
  '#17becf',
  '#637939',
];

/** FNV-1a hash of a string, 32 bits. */
function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * One fixed colour per tag: its home slot in `TAG_PALETTE` is a hash of the tag's name, so `long`
 * and `short` keep their colours in every chart and every run. Tags whose home slots collide are
 * moved to the next free slot, in name order (so the same set of tags always gets the same colours).
 */
export function tagColors(tags: Iterable<string>): Map<string, string> {
  const out = new Map<string, string>();
  const used = new Set<number>();
  for (const tag of [...new Set(tags)].sort()) {
    let slot = hash(tag) % TAG_PALETTE.length;
    for (let k = 0; k < TAG_PALETTE.length && used.has(slot); k++) slot = (slot + 1) % TAG_PALETTE.length;
    used.add(slot);
    out.set(tag, TAG_PALETTE[slot]);
  }
  return out;
}
