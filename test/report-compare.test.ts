/**
 * `compareRuns` / `loadlab compare` on runs against scripted SSE servers with known timings (child
 * processes, real HTTP on port 0): the base server sends the first token after 100 ms and a token
 * every 20 ms; the "late" one after 150 ms (+50 ms to the first token), same gaps. Invariants only:
 * a run compared with itself claims nothing; two runs of the same script claim no difference beyond
 * a stated threshold; +50 ms to the first token makes TTFT "real" (interval above 0) and leaves
 * TPOT unclaimed; a disturbed run is compared on p50 and says so; mixed provenance is named.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main';
import { compareRuns, LATENCY_ROWS } from '../src/report/compare';
import { formatComparison } from '../src/report/compare-text';
import { csvField, toCsv } from '../src/report/csv';
import { readReportRun } from '../src/report/report-input';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import { spawnScriptedServer, type ScriptedServer } from './helpers/sse-server';
import { capture } from './helpers/cli-io';

let tmp: string;
let base: ScriptedServer;
let late: ScriptedServer;
const dirs = { a: '', a2: '', b: '' };

async function measure(dir: string, server: ScriptedServer): Promise<string> {
  await runLoad({
    baseUrl: server.url,
    workload: [makeRequest('hello', { maxTokens: 6 })],
    requests: 40,
    shape: closedLoop(4),
    out: dir,
    abortOnSigint: false,
  });
  return dir;
}

/** A copy of run folder `from` at `to`, with `edit` applied to one of its JSON files. */
function copyWith(
  from: string,
  to: string,
  file: 'summary.json' | 'manifest.json',
  edit: (j: Record<string, unknown>) => void,
): string {
  fs.cpSync(from, to, { recursive: true });
  const f = path.join(to, file);
  const j = JSON.parse(fs.readFileSync(f, 'utf8'));
  edit(j);
  fs.writeFileSync(f, JSON.stringify(j));
  return to;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-report-compare-'));
  [base, late] = await Promise.all([
    spawnScriptedServer({ firstTokenDelayMs: 100, gapMs: 20, tokens: 6 }),
    spawnScriptedServer({ firstTokenDelayMs: 150, gapMs: 20, tokens: 6 }),
  ]);
  dirs.a = await measure(path.join(tmp, 'a'), base);
  dirs.a2 = await measure(path.join(tmp, 'a2'), base);
  dirs.b = await measure(path.join(tmp, 'b'), late);
}, 120_000);

afterAll(async () => {
  await Promise.all([base?.close(), late?.close()]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('compareRuns on scripted timings', () => {
  it('a run against itself and against a byte copy: every verdict "cannot tell"', () => {
    const copy = path.join(tmp, 'a-copy');
    fs.cpSync(dirs.a, copy, { recursive: true });
    for (const other of [dirs.a, copy]) {
      const c = compareRuns([readReportRun(dirs.a), readReportRun(other)]);
      expect(c.diffs.length).toBe(LATENCY_ROWS.length + 2); // latency rows, req/s, output tok/s
      expect(c.diffs.filter((d) => d.verdict !== 'cannot tell')).toEqual([]);
      for (const d of c.diffs.filter((x) => x.interval)) expect(d.interval![0]).toBeLessThanOrEqual(0);
      expect(formatComparison(c)).toContain('No difference is real');
    }
  });

  it('two runs of the same script: no p50 latency difference is claimed beyond a stated ±25 % threshold', () => {
    const c = compareRuns([readReportRun(dirs.a), readReportRun(dirs.a2)], { thresholdPct: 25 });
    const p50 = c.diffs.filter((d) => /^(TTFT|TPOT|ITL|E2E) p50$/.test(d.row));
    expect(p50).toHaveLength(4);
    expect(p50.filter((d) => d.verdict === 'real')).toEqual([]);
  });

  it('+50 ms to the first token: TTFT "real" with its interval above 0; TPOT not claimed', () => {
    const c = compareRuns([readReportRun(dirs.a), readReportRun(dirs.b)], { thresholdPct: 25 });
    const row = (name: string) => c.diffs.find((d) => d.row === name)!;
    for (const name of ['TTFT p50', 'TTFT from intended send p99']) {
      expect(row(name).verdict, name).toBe('real');
      expect(row(name).direction).toBe('higher');
      expect(row(name).interval![0]).toBeGreaterThan(0);
      expect(row(name).diff).toBeGreaterThan(0);
    }
    expect(row('TPOT p50').verdict).not.toBe('real');
    // Every "real" verdict has an interval that excludes 0; every rate row stays unclaimed.
    for (const d of c.diffs) {
      if (d.verdict === 'real') expect(d.interval![0] > 0 || d.interval![1] < 0, d.row).toBe(true);
      if (!d.interval) expect(d.verdict).toBe('cannot tell');
    }
    // Each later run's cells carry an interval that holds its value.
    for (const r of c.rows.filter((x) => x.unit === 'ms')) {
      for (const cell of r.cells) expect(cell.interval![0] <= cell.value && cell.value <= cell.interval![1], r.label).toBe(true);
    }
    const text = formatComparison(c);
    expect(text).toMatch(/^TTFT p50 .* real \(b higher\)$/m);
    expect(text).toMatch(/^TPOT p50 .* (cannot tell|negligible)$/m);
  });

  it('a client-bound run is compared on p50 for its tails, and says so', () => {
    const sick = copyWith(dirs.b, path.join(tmp, 'b-sick'), 'summary.json', (s) => {
      s.health = { clientBound: true, simBehind: false, warnings: ['event loop lagged'] };
    });
    const c = compareRuns([readReportRun(dirs.a), readReportRun(sick)]);
    const tails = c.diffs.filter((d) => / p99$/.test(d.row));
    expect(tails.length).toBeGreaterThan(0);
    for (const d of tails) {
      expect(d.comparedAtPct).toBe(50);
      expect(d.note).toMatch(/b-sick was client-bound/);
    }
    expect(c.notes.join('\n')).toMatch(/client-bound/);
    expect(formatComparison(c)).toMatch(/TTFT p99 → p50/);
  });

  it('a simulated run beside a real one is labelled "simulated and real mixed"', () => {
    const simulated = copyWith(dirs.a2, path.join(tmp, 'a2-sim'), 'manifest.json', (m) => {
      (m.target as Record<string, unknown>).simulated = true;
    });
    const c = compareRuns([readReportRun(dirs.a), readReportRun(simulated)]);
    expect(c.provenance).toBe('simulated and real mixed');
    expect(formatComparison(c).split('\n')[0]).toBe('Runs compared (simulated and real mixed):');
    expect(c.notes.join('\n')).toMatch(/simulated and real runs mixed/);
  });

  it('runs whose chunks were stamped differently say so (a run without clock.chunkStamp stamped per callback)', () => {
    const older = copyWith(dirs.a2, path.join(tmp, 'a2-older'), 'manifest.json', (m) => {
      delete (m.clock as Record<string, unknown>).chunkStamp;
    });
    expect(readReportRun(dirs.a).manifest?.clock.chunkStamp).toBe('turn');
    const c = compareRuns([readReportRun(dirs.a), readReportRun(older)]);
    expect(c.notes.join('\n')).toMatch(/stamped token chunks differently \(turn \/ callback\): part of a TTFT or ITL difference/);
    expect(compareRuns([readReportRun(dirs.a), readReportRun(dirs.a2)]).notes.join('\n')).not.toMatch(/stamped/);
  });
});

describe('loadlab compare (CLI)', () => {
  it('prints the table and the verdicts; --json gives the same comparison', async () => {
    const { out, io } = capture();
    expect(await main(['compare', dirs.a, dirs.b, '--threshold', '25'], io)).toBe(0);
    expect(out.stdout).toMatch(/^TTFT p50 .* real \(b higher\)$/m);
    expect(out.stdout).toContain('baseline a:');
    const j = capture();
    expect(await main(['compare', dirs.a, dirs.b, '--json'], j.io)).toBe(0);
    const parsed = JSON.parse(j.out.stdout);
    expect(parsed.runs.map((r: { label: string }) => r.label)).toEqual(['a', 'b']);
    expect(parsed.diffs.find((d: { row: string }) => d.row === 'TTFT p50').verdict).toBe('real');
  });

  it('refuses, with the fix, one folder, a folder that is no run, and a bad threshold (exit 2)', async () => {
    const empty = path.join(tmp, 'empty');
    fs.mkdirSync(empty, { recursive: true });
    const cases: [string[], RegExp][] = [
      [['compare', dirs.a], /at least two run folders/],
      [['compare', dirs.a, empty], /not a run folder: a run folder holds manifest\.json and requests\.jsonl/],
      [['compare', tmp, dirs.a], /it holds run folders \(a sweep\?\): give those, e\.g\. .*\ba\b/],
      [['compare', dirs.a, dirs.b, '--threshold', '0'], /--threshold must be a percent > 0/],
      [['report', dirs.a, dirs.b], /exactly one run or sweep folder/],
      [['report', path.join(tmp, 'nope')], /is not a folder/],
    ];
    for (const [argv, msg] of cases) {
      const { out, io } = capture();
      expect(await main(argv, io), argv.join(' ')).toBe(2);
      expect(out.stderr).toMatch(msg);
    }
  });
});

describe('CSV (RFC 4180)', () => {
  it('quotes commas, quotes and line breaks; missing numbers are empty fields', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('x\ny')).toBe('"x\ny"');
    expect(csvField(NaN)).toBe('');
    expect(csvField(null)).toBe('');
    expect(csvField(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(toCsv(['a', 'b'], [{ a: 1, b: 'x' }])).toBe('a,b\r\n1,x\r\n');
  });
});
