/**
 * What `loadlab report` reads: run folders and sweep folders, on copies of the shipped simulated
 * sample (data/sample/c1, c8). Sweep points follow their manifests' load, not folder names;
 * moved-aside `.incomplete-` folders are not points; a run without summary.json is summarised from
 * its records and says so; a damaged manifest still gives a report (provenance unknown); a folder
 * that holds no run is refused with what a run folder holds.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareRuns } from '../src/report/compare';
import { readReportInput, readReportRun } from '../src/report/report-input';
import { MAX_ITL_POINTS, runReportHtml } from '../src/report/report-run';
import { writeReport } from '../src/report/write-report';
import { fromRoot } from '../src/paths';

const SAMPLE = fromRoot('data', 'sample');
let tmp: string;

function copyRun(name: 'c1' | 'c8', to: string): string {
  fs.cpSync(path.join(SAMPLE, name), to, { recursive: true });
  for (const f of ['report.html', 'records.csv']) fs.rmSync(path.join(to, f), { force: true });
  return to;
}

function editJson(file: string, edit: (j: Record<string, unknown>) => void): void {
  const j = JSON.parse(fs.readFileSync(file, 'utf8'));
  edit(j);
  fs.writeFileSync(file, JSON.stringify(j));
}

const measured = (dir: string) =>
  fs
    .readFileSync(path.join(dir, 'requests.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .filter((l) => !JSON.parse(l).warmup).length;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-report-input-'));
});
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('readReportInput', () => {
  it('orders sweep points by each manifest’s concurrency, not by folder name; skips .incomplete- folders', () => {
    const sweep = path.join(tmp, 'sweep');
    copyRun('c8', path.join(sweep, 'a-first'));
    copyRun('c1', path.join(sweep, 'z-last'));
    copyRun('c1', path.join(sweep, 'z-last.incomplete-20260101-000000'));
    fs.mkdirSync(path.join(sweep, 'notes'));
    const input = readReportInput(sweep);
    expect(input.kind).toBe('sweep');
    if (input.kind !== 'sweep') return;
    expect(input.axis).toBe('concurrency');
    expect(input.points.map((p) => p.label)).toEqual(['c=1', 'c=8']);
    expect(input.points.map((p) => path.basename(p.run.dir))).toEqual(['z-last', 'a-first']);
  });

  it('an open-loop sweep is ordered by rate', () => {
    const sweep = path.join(tmp, 'rates');
    for (const [name, rate] of [
      ['r-fast', 8],
      ['r-slow', 2],
    ] as const) {
      const dir = copyRun('c1', path.join(sweep, name));
      editJson(path.join(dir, 'manifest.json'), (m) => {
        m.load = { shape: 'open', options: { kind: 'open', rate, label: `open ${rate}/s` } };
      });
    }
    const input = readReportInput(sweep);
    expect(input.kind === 'sweep' && input.axis).toBe('rate');
    expect(input.kind === 'sweep' && input.points.map((p) => p.label)).toEqual(['rate=2/s', 'rate=8/s']);
    const written = writeReport(sweep, { out: path.join(tmp, 'rates-report', 'report.html') });
    expect(fs.readFileSync(written.html, 'utf8')).toContain('请求速率 request rate (req/s)');
  });

  it('a run without summary.json is summarised from its records, and the report says so', () => {
    const dir = copyRun('c1', path.join(tmp, 'no-summary'));
    fs.rmSync(path.join(dir, 'summary.json'));
    editJson(path.join(dir, 'manifest.json'), (m) => {
      m.status = 'interrupted';
    });
    const run = readReportRun(dir);
    expect(run.summary.requests).toBe(measured(dir));
    expect(run.notes.join('\n')).toMatch(/no summary\.json \(status interrupted\): summarised here from the \d+ records/);
    const html = fs.readFileSync(writeReport(dir).html, 'utf8');
    expect(html).toContain('no summary.json (status interrupted)');
  });

  it('a run whose manifest is missing still gets a report and a comparison, its provenance unknown', () => {
    const dir = copyRun('c8', path.join(tmp, 'damaged'));
    fs.rmSync(path.join(dir, 'manifest.json'));
    const written = writeReport(dir);
    const html = fs.readFileSync(written.html, 'utf8');
    expect(html).toContain('manifest.json is missing');
    expect(written.records).toBeGreaterThan(0);
    const c = compareRuns([readReportRun(path.join(SAMPLE, 'c1')), readReportRun(dir)]);
    expect(c.provenance).toBe('unknown');
    expect(c.runs[1].server).toMatch(/manifest unusable/);
  });

  it('refuses a folder holding no run, naming what a run folder holds and where runs lie deeper', () => {
    const empty = path.join(tmp, 'empty');
    fs.mkdirSync(empty);
    expect(() => readReportInput(empty)).toThrow(/holds no run: a run folder holds manifest\.json and requests\.jsonl/);
    const outer = path.join(tmp, 'outer');
    copyRun('c1', path.join(outer, 'inner', 'c1'));
    expect(() => readReportInput(outer)).toThrow(/runs lie deeper, e\.g\. in .*inner/);
    expect(() => writeReport(path.join(SAMPLE, 'c1'), { out: path.join(tmp, 'r.txt') })).toThrow(/ending in \.html/);
  });
});

describe('runReportHtml on a long run', () => {
  it('draws 1 request in k when the run has more than MAX_ITL_POINTS gaps, and says so', () => {
    const run = readReportRun(path.join(SAMPLE, 'c8'));
    const one = run.records.find((r) => !r.warmup && r.ok)!;
    const perRequest = 200;
    const n = Math.ceil((MAX_ITL_POINTS * 1.5) / perRequest);
    const records = Array.from({ length: n }, (_, i) => ({
      ...one,
      index: i,
      itlMs: Array.from({ length: perRequest }, () => 7),
      chunkMs: Array.from({ length: perRequest + 1 }, (_, k) => 1000 + i + k * 7),
    }));
    const html = runReportHtml({ ...run, records });
    expect(html).toContain('1 request in 2 drawn');
    expect(html).toContain(`共 ${n * perRequest} 个间隔 gaps`);
  });
});
