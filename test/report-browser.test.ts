/**
 * `loadlab report` pages in headless Chromium: two small runs against the simulator (with
 * `/metrics` sampled), a run report and a sweep report (a folder holding both runs as `c=1/`,
 * `c=4/`), opened with every http(s) request aborted. For each page: every `.loadlab-plot` drew
 * traces with marks, no page error, no request left the machine, run-table headers are Chinese and
 * nothing overflows at 1400 px. The CSV files parse back (RFC 4180) to the record and point counts.
 * A copy of one run gets a hand-written `gpu.jsonl` (test data, labelled so here) to draw the GPU chart.
 * Skipped, saying why, without /usr/bin/chromium; never downloads a browser.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main';
import { RECORD_COLUMNS } from '../src/view/frame';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { startSim, type SimHandle } from '../src/sim/start';
import { makeRequest } from '../src/workload/workload';
import {
  englishOnlyHeaders,
  OVERFLOW_REPORT,
  PAGE_WIDTH,
  TABLES_REPORT,
  type OverflowReport,
  type TableReport,
} from './helpers/page-checks';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = fs.existsSync(CHROMIUM);
if (!hasChromium) console.warn(`report-browser: skipped, ${CHROMIUM} is missing (install Debian's chromium to run it)`);

/** A minimal RFC 4180 reader: quoted fields, doubled quotes, CRLF; returns rows of fields. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(field), (field = '');
    else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      (row = []), (field = ''), i++;
    } else field += ch;
  }
  if (field !== '' || row.length) rows.push([...row, field]);
  return rows;
}

const lines = (f: string) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean);

// Browser code as strings: the project compiles without the DOM lib.
const CHARTS = `[...document.querySelectorAll('.loadlab-plot')].map((el) => ({
  id: el.id,
  svg: el.querySelectorAll('.main-svg').length,
  traces: el.querySelectorAll('.main-svg .trace').length,
  marks: [...el.querySelectorAll('.main-svg .trace path')].filter((p) => (p.getAttribute('d') || '').length > 4).length,
  failure: /^LoadLab:/.test((el.textContent || '').trim()) ? el.textContent.trim().slice(0, 200) : '',
}))`;
const ALL_DRAWN = `[...document.querySelectorAll('.loadlab-plot')].every((el) =>
  el.querySelector('.main-svg') || /^LoadLab:/.test((el.textContent || '').trim()))`;
const HEADINGS = `[...document.querySelectorAll('h2')].map((h) => h.textContent)`;

let tmp: string;
let sim: SimHandle | undefined;
let context: BrowserContext | undefined;
const offsite: string[] = [];

describe.skipIf(!hasChromium)('loadlab report pages in headless Chromium (simulator runs, network cut off)', () => {
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-report-browser-'));
    sim = await startSim();
    const spec = makeRequest('你好，请介绍一下你自己。', { maxTokens: 12 });
    for (const c of [1, 4]) {
      await runLoad({
        baseUrl: sim.baseUrl,
        workload: [spec],
        requests: 4 * c,
        warmup: 1,
        shape: closedLoop(c),
        out: path.join(tmp, 'sweep', `c=${c}`),
        sampleMetrics: 100,
        abortOnSigint: false,
      });
    }
    // GPU chart: a copy of c=4 with hand-written nvidia-smi samples (test data, not a measurement).
    const gpuRun = path.join(tmp, 'c4-gpu');
    fs.cpSync(path.join(tmp, 'sweep', 'c=4'), gpuRun, { recursive: true });
    const gpu = [0, 200, 400, 600].map((t) =>
      JSON.stringify({ tMs: t, gpu: 0, utilPct: 50 + t / 20, memUsedMiB: 20000, memTotalMiB: 24564 }),
    );
    fs.writeFileSync(path.join(gpuRun, 'gpu.jsonl'), `${gpu.join('\n')}\n`);

    const { chromium } = await import('playwright-core');
    context = await chromium.launchPersistentContext(path.join(tmp, 'profile'), {
      executablePath: CHROMIUM,
      viewport: { width: PAGE_WIDTH, height: 1000 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
      ],
    });
    context.on('request', (r) => {
      if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) offsite.push(r.url());
    });
    await context.route(/^https?:/, (route) => route.abort());
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await sim?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** `loadlab report ARGS` in-process; returns stdout, failing on a non-zero exit. */
  async function report(...args: string[]): Promise<string> {
    let stdout = '';
    let stderr = '';
    const io = {
      stdout: { write: (s: string) => ((stdout += s), true) } as unknown as NodeJS.WritableStream,
      stderr: { write: (s: string) => ((stderr += s), true) } as unknown as NodeJS.WritableStream,
    };
    expect(await main(['report', ...args], io), stderr).toBe(0);
    return stdout;
  }

  /** Open `file` offline and check every chart, errors, tables and width; returns the section headings. */
  async function checkPage(file: string, tableKind: 'summary' | 'compare'): Promise<string[]> {
    const page = await context!.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    try {
      await page.goto(`file://${file}`, { waitUntil: 'load', timeout: 60_000 });
      await page.waitForFunction(ALL_DRAWN, null, { timeout: 60_000 });
      const charts = (await page.evaluate(CHARTS)) as {
        id: string;
        svg: number;
        traces: number;
        marks: number;
        failure: string;
      }[];
      expect(charts.length).toBeGreaterThan(3);
      for (const c of charts) {
        expect(c.failure, c.id).toBe('');
        expect(c.svg, `${c.id} has no SVG`).toBeGreaterThan(0);
        expect(c.traces, `${c.id} has no trace`).toBeGreaterThan(0);
        expect(c.marks, `${c.id} drew nothing inside its traces`).toBeGreaterThan(0);
      }
      expect(errors, 'JavaScript errors on the page').toEqual([]);
      const tables = (await page.evaluate(TABLES_REPORT)) as TableReport[];
      expect(tables.map((t) => t.kind)).toContain(tableKind);
      for (const t of tables) expect(englishOnlyHeaders(t), `${t.kind}: ${t.caption}`).toEqual([]);
      const overflow = (await page.evaluate(OVERFLOW_REPORT)) as OverflowReport;
      expect(overflow.overflowing).toEqual([]);
      expect(overflow.pageScrollWidth).toBeLessThanOrEqual(overflow.viewport);
      return (await page.evaluate(HEADINGS)) as string[];
    } finally {
      await page.close();
    }
  }

  it('a run report: every chart drew, the server timeline is there, nothing left the machine; records.csv parses back', async () => {
    const dir = path.join(tmp, 'sweep', 'c=4');
    const out = await report(dir);
    const html = path.join(dir, 'report.html');
    expect(out).toContain(html);
    const text = fs.readFileSync(html, 'utf8');
    expect(text).toContain('(simulated)');
    expect(text).not.toMatch(/<script[^>]+src=/); // plotly.js inlined, nothing loaded from elsewhere
    const headings = await checkPage(html, 'summary');
    expect(headings).toContain('服务器时间线 server timeline (/metrics)');
    expect(offsite).toEqual([]);
    const rows = parseCsv(fs.readFileSync(path.join(dir, 'records.csv'), 'utf8'));
    expect(rows[0]).toEqual(Object.keys(RECORD_COLUMNS));
    expect(rows.length - 1).toBe(lines(path.join(dir, 'requests.jsonl')).length);
    expect(rows.slice(1).every((r) => r.length === rows[0].length)).toBe(true);
  }, 180_000);

  it('a sweep report: points ordered by concurrency, every chart drew, points.csv and records.csv parse back', async () => {
    const dir = path.join(tmp, 'sweep');
    const htmlFile = path.join(tmp, 'out', 'sweep-report.html');
    const out = await report(dir, '--out', htmlFile);
    expect(out).toMatch(/sweep of 2 points \(c=1, c=4\)/);
    const headings = await checkPage(htmlFile, 'compare');
    expect(headings).toEqual(expect.arrayContaining(['吞吐与负载 throughput vs load', '首字延迟与负载 TTFT vs load']));
    expect(offsite).toEqual([]);
    const points = parseCsv(fs.readFileSync(path.join(tmp, 'out', 'points.csv'), 'utf8'));
    expect(points.slice(1).map((r) => r[0])).toEqual(['c=1', 'c=4']);
    const records = parseCsv(fs.readFileSync(path.join(tmp, 'out', 'records.csv'), 'utf8'));
    const onDisk = ['c=1', 'c=4'].reduce((n, c) => n + lines(path.join(dir, c, 'requests.jsonl')).length, 0);
    expect(records[0][0]).toBe('point');
    expect(records.length - 1).toBe(onDisk);
  }, 180_000);

  it('a run with gpu.jsonl gets the GPU chart, and it draws', async () => {
    const dir = path.join(tmp, 'c4-gpu');
    await report(dir, '--no-csv');
    expect(fs.existsSync(path.join(dir, 'records.csv'))).toBe(false);
    const headings = await checkPage(path.join(dir, 'report.html'), 'summary');
    expect(headings).toContain('GPU (nvidia-smi)');
    expect(offsite).toEqual([]);
  }, 180_000);
});
