/**
 * What `loadlab sweep` prints at the end: what it ran against (from the points' own manifests), one
 * row per point (req/s, output tok/s, TTFT p50/p99, TPOT p50, goodput, verdict), then the knee, the
 * saturation point and the capacity under each SLO, each with the rule that found it. Pure.
 */

import type { Located } from '../sweep/knee';
import { pointName, type SweepVariable } from '../sweep/plan';
import type { SweepPoint } from '../sweep/point';
import type { SweepFile } from '../sweep/sweep-file';

function num(x: number | undefined, digits = 1): string {
  return x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits);
}

/** The point table as aligned text. */
export function formatPointTable(points: readonly SweepPoint[], withGoodput: boolean): string {
  const header = [
    'point',
    'status',
    'req/s',
    'out tok/s',
    'TTFT p50',
    'TTFT p99',
    'TPOT p50',
    ...(withGoodput ? ['goodput', 'meets SLO'] : []),
    'verdict',
  ];
  const rows = points.map((p) => [
    p.name,
    p.status + (p.reused ? ' (reused)' : ''),
    num(p.requestsPerSec, 2),
    num(p.outputTokensPerSec),
    num(p.ttftP50Ms),
    num(p.ttftP99Ms),
    num(p.tpotP50Ms),
    ...(withGoodput ? [num(p.goodputPerSec, 2), p.meetsSlo === undefined ? '–' : p.meetsSlo ? 'yes' : 'no'] : []),
    p.verdict ?? '–',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

function located(what: string, l: Located & { near?: number[] }, variable: SweepVariable): string {
  if (l.value === undefined) return `${what}: not found: ${l.why ?? 'no data'} (${l.rule})`;
  const near = l.near?.length
    ? `; ${l.near.map((x) => pointName(variable, x)).join(', ')} within the margin: the data cannot tell them apart`
    : '';
  return `${what}: ${pointName(variable, l.value)} (${l.rule}${near})`;
}

/** The provenance line: simulated, real or mixed, from the points' manifests. */
export function provenanceLine(file: SweepFile): string {
  switch (file.provenance) {
    case 'simulated':
      return "target: SIMULATED (LoadLab's simulator, not a GPU): these numbers describe the simulator, not your hardware";
    case 'real':
      return "target: a real server (not simulated), per every point's manifest";
    case 'mixed':
      return 'target: MIXED: some points were measured on the simulator and some on a real server; do not compare them';
    default:
      return 'target: no point was measured';
  }
}

/** The whole end-of-sweep report. */
export function formatSweepReport(file: SweepFile, dir: string): string {
  const v = file.plan.variable;
  const lines = [
    provenanceLine(file),
    '',
    formatPointTable(
      [...file.points].sort((a, b) => a.value - b.value),
      file.plan.slo !== undefined,
    ),
    "(latencies in ms; goodput in good requests/s; verdict from each run's health: ok, client-bound, sim-behind)",
    '',
    located('knee', file.knee, v),
    located('saturation', file.saturation, v),
  ];
  for (const c of file.capacity) {
    const head = `capacity under ${c.criterion} (≥ ${+(c.attainment * 100).toFixed(2)} % of requests meet it)`;
    const at = (x: number) => `${pointName(v, x)}${v === 'rate' ? ' req/s' : ''}`;
    if (c.value === undefined) lines.push(`${head}: none measured`);
    else if (c.firstMiss === undefined) lines.push(`${head}: ${at(c.value)} or more (no measured load missed it)`);
    else lines.push(`${head}: ${at(c.value)} (lowest load that missed it: ${at(c.firstMiss)})`);
    if (c.note) lines.push(`  note: ${c.note}`);
  }
  if (file.searchEnd) lines.push(`SLO search stopped: ${file.searchEnd}`);
  const disturbed = file.points.filter((p) => p.verdict && p.verdict !== 'ok' && p.verdict !== 'unknown');
  if (disturbed.length > 0) {
    lines.push(
      `caution: ${disturbed.map((p) => `${p.name} (${p.verdict})`).join(', ')}: client-bound = the load generator was the bottleneck, ` +
        'sim-behind = the simulator fell behind real time; their timings include that delay, and what rests on them is uncertain',
    );
  }
  lines.push(`status: ${file.status}; sweep.json and one run folder per point in ${dir}`);
  return `${lines.join('\n')}\n`;
}
