/**
 * The executed lessons, opened in a real browser: every `data/executed/*.html` (written by
 * `npm run lessons`) is loaded in headless Chromium, and for each page we assert that
 * - every LoadLab chart drew: its `.loadlab-plot` div holds Plotly's `.main-svg` with at least one
 *   trace and something drawn inside (points, bars or line paths), and no "LoadLab: …" failure text;
 * - no JavaScript error was raised (`pageerror`);
 * - no cell shows an error: no stderr output block holding a stack trace, `…Error:` or a TypeScript
 *   diagnostic (`12:5 - …`; tslab prints compile and runtime errors to stderr, which nbconvert
 *   marks `data-mime-type="application/vnd.jupyter.stderr"`), and no `error` output in the `.ipynb`;
 * - every chart labels its runs from their manifests: when every run the lesson saved (its `data/NN-…/`
 *   folder; for 07-replot, every run under `data/`) is simulated, every chart title says "(simulated…)";
 *   when none is, no title does; a lesson with both kinds of run is only checked for a title on every chart;
 * - in a 1400 px wide window no output overflows (no table, banner, chart or output area wider than
 *   its box or the window) and the run tables LoadLab builds (`summaryTable`, `compareTable`) have
 *   Chinese headers, and so do the tables a notebook builds itself (every column header has Chinese,
 *   or is a bare percentile / n / max).
 * `LOADLAB_EXECUTED_DIR` points the test at another folder of executed lessons (default data/executed).
 * One browser for all pages (plotly.js is ~4.8 MB per page); the network is cut off, so the page's
 * CDN scripts (MathJax, require.js) fail quietly and nothing is fetched. Skipped, saying why, when
 * there are no executed lessons or no /usr/bin/chromium. Never downloads a browser.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromRoot } from '../src/paths';
import {
  englishOnlyHeaders,
  OVERFLOW_REPORT,
  PAGE_WIDTH,
  TABLES_REPORT,
  type OverflowReport,
  type TableReport,
} from './helpers/page-checks';

const CHROMIUM = '/usr/bin/chromium';
const EXECUTED = process.env.LOADLAB_EXECUTED_DIR || fromRoot('data', 'executed');
const pages = fs.existsSync(EXECUTED)
  ? fs
      .readdirSync(EXECUTED)
      .filter((f) => /^\d\d[a-z]?-.*\.html$/.test(f))
      .sort()
  : [];
const hasChromium = fs.existsSync(CHROMIUM);
const skipWhy = !pages.length
  ? `no executed lessons in ${EXECUTED}: run \`npm run lessons\` first`
  : !hasChromium
    ? `${CHROMIUM} is missing (install Debian's chromium)`
    : '';
if (skipWhy && process.env.CI) throw new Error(`lessons-browser cannot run in CI: ${skipWhy}`);
if (skipWhy) console.warn(`lessons-browser: skipped, ${skipWhy}`);

/** What the page reports about itself (computed in the browser). */
interface PageReport {
  charts: { id: string; title: string; svg: number; traces: number; marks: number; failure: string }[];
  stderr: string[];
}

// Browser code as a string: the project compiles without the DOM lib.
const ALL_DRAWN = `[...document.querySelectorAll('.loadlab-plot')].every((el) =>
  el.querySelector('.main-svg') || /^LoadLab:/.test((el.textContent || '').trim()))`;
const REPORT = `({
  charts: [...document.querySelectorAll('.loadlab-plot')].map((el) => ({
    id: el.id,
    title: (el.querySelector('.gtitle') || {}).textContent || '',
    svg: el.querySelectorAll('.main-svg').length,
    traces: el.querySelectorAll('.main-svg .trace').length,
    marks: [...el.querySelectorAll('.main-svg .trace path, .main-svg .trace image')]
      .filter((p) => (p.getAttribute('d') || p.getAttribute('href') || '').length > 4).length,
    failure: /^LoadLab:/.test((el.textContent || '').trim()) ? el.textContent.trim().slice(0, 200) : '',
  })),
  stderr: [...document.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')]
    .map((el) => (el.textContent || '').trim()),
})`;

/** `target.simulated` of every run manifest under `dir` (run folders, sweeps, charts folders skipped). */
function simulatedMarks(dir: string, depth = 4): boolean[] {
  if (depth < 0 || !fs.existsSync(dir)) return [];
  const manifest = path.join(dir, 'manifest.json');
  if (fs.existsSync(manifest)) {
    const target = (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { target?: { simulated?: unknown } }).target;
    return typeof target?.simulated === 'boolean' ? [target.simulated] : [];
  }
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== 'executed' && e.name !== 'charts')
    .flatMap((e) => simulatedMarks(path.join(dir, e.name), depth - 1));
}

/** What the lesson's saved runs are: all simulated, all real, mixed, or none found. */
function lessonProvenance(page: string): 'simulated' | 'real' | 'mixed' | 'none' {
  const data = path.dirname(EXECUTED);
  const marks = page.startsWith('07-') ? simulatedMarks(data) : simulatedMarks(path.join(data, page.replace(/\.html$/, '')));
  if (marks.length === 0) return 'none';
  return marks.every(Boolean) ? 'simulated' : marks.some(Boolean) ? 'mixed' : 'real';
}

/** A stderr block that shows a failure, not a harmless warning. */
const FAILURE = /Traceback|\b\w*Error\b:|^\s*\d+:\d+ - /m;

describe.skipIf(!!skipWhy)(`executed lessons in headless Chromium (${skipWhy || `${pages.length} pages`})`, () => {
  let context: BrowserContext;
  let profile: string;

  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    profile = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-lessons-browser-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: PAGE_WIDTH, height: 1000 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    // Offline: only the page itself (file://) loads; CDN scripts are refused.
    await context.route(/^https?:/, (route) => route.abort());
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    if (profile) fs.rmSync(profile, { recursive: true, force: true });
  });

  it.each(pages)(
    `%s: every chart drew, no page error, no error output; at ${PAGE_WIDTH} px nothing overflows, run-table headers Chinese`,
    async (name) => {
      const ipynb = path.join(EXECUTED, name.replace(/\.html$/, '.ipynb'));
      if (fs.existsSync(ipynb)) {
        const nb = JSON.parse(fs.readFileSync(ipynb, 'utf8')) as {
          cells: { outputs?: { output_type: string; ename?: string; evalue?: string }[] }[];
        };
        const errors = nb.cells.flatMap((c) => c.outputs ?? []).filter((o) => o.output_type === 'error');
        expect(
          errors.map((o) => `${o.ename}: ${o.evalue}`),
          `error outputs in ${ipynb}`,
        ).toEqual([]);
      }
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (e) => pageErrors.push(String(e)));
      try {
        await page.goto(`file://${path.join(EXECUTED, name)}`, { waitUntil: 'load', timeout: 60_000 });
        await page.waitForFunction(ALL_DRAWN, null, { timeout: 60_000 });
        const report = (await page.evaluate(REPORT)) as PageReport;
        expect(pageErrors, 'JavaScript errors on the page').toEqual([]);
        expect(
          report.stderr.filter((t) => FAILURE.test(t)).map((t) => t.slice(0, 400)),
          'cells with an error output',
        ).toEqual([]);
        for (const c of report.charts) {
          expect(c.failure, `chart ${c.id}`).toBe('');
          expect(c.svg, `chart ${c.id} has no SVG`).toBeGreaterThan(0);
          expect(c.traces, `chart ${c.id} has no trace`).toBeGreaterThan(0);
          expect(c.marks, `chart ${c.id} drew nothing inside its traces`).toBeGreaterThan(0);
        }
        const provenance = lessonProvenance(name);
        for (const c of report.charts) {
          expect(c.title, `chart ${c.id} has no title to carry its runs' label`).not.toBe('');
          if (provenance === 'simulated') expect(c.title, `chart ${c.id}: its runs are simulated`).toMatch(/\(simulated/);
          if (provenance === 'real') expect(c.title, `chart ${c.id}: its runs are real`).not.toMatch(/simulated/);
        }
        const overflow = (await page.evaluate(OVERFLOW_REPORT)) as OverflowReport;
        expect(overflow.overflowing, `outputs wider than their box or the ${overflow.viewport} px window`).toEqual([]);
        expect(overflow.pageScrollWidth, 'page scrolls sideways').toBeLessThanOrEqual(overflow.viewport);
        const tables = (await page.evaluate(TABLES_REPORT)) as TableReport[];
        const english = tables
          .map((t) => ({ kind: t.kind, caption: t.caption.slice(0, 80), english: englishOnlyHeaders(t) }))
          .filter((t) => t.english.length > 0);
        expect(english, "English-only table headers (LoadLab tables and the notebook's own)").toEqual([]);
      } finally {
        await page.close();
      }
    },
    150_000,
  );
});
