/**
 * Real-browser checks in headless Chromium: two charts on one page (plotly.js inlined once, with
 * the first) draw with no page error; and at 1400 px wide the run tables have Chinese headers,
 * warnings span the full width, nothing overflows and no chart label is clipped.
 * Skipped when /usr/bin/chromium is missing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BrowserContext } from 'playwright-core';
import {
  abComparison,
  compareTable,
  DEFAULT_COMPARE_METRICS,
  figureHtml,
  latencyThroughputTradeoff,
  resetPlotlyInjection,
  scalingPoints,
  serverTimeline,
  setHtmlDisplay,
  summaryTable,
  tableHtml,
  throughputVsConcurrency,
} from '../src/view';
import type { RunSummary } from '../src/types';
import {
  englishOnlyHeaders,
  OVERFLOW_REPORT,
  PAGE_WIDTH,
  TABLES_REPORT,
  type OverflowReport,
  type TableReport,
} from './helpers/page-checks';
import { metricsSamples, summary, timelineRecords } from './helpers/view-fixtures';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = fs.existsSync(CHROMIUM);
if (!hasChromium) console.warn(`view-browser: skipped, ${CHROMIUM} is missing (install Debian's chromium to run it)`);

/** A headless Chromium with its profile under `dir`, at `PAGE_WIDTH` × 1000 px. */
async function launch(dir: string): Promise<BrowserContext> {
  const { chromium } = await import('playwright-core');
  return chromium.launchPersistentContext(path.join(dir, 'profile'), {
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
}

describe.skipIf(!hasChromium)('charts in headless Chromium', () => {
  it('draws every chart with its traces, plotly.js inlined once, no page errors', async () => {
    resetPlotlyInjection();
    const pts = scalingPoints(
      [1, 2, 4, 8].map((c) => ({ concurrency: c, summary: summary(c, [100, 190, 360, 380][Math.log2(c)]) })),
    );
    const charts = [
      figureHtml(serverTimeline(timelineRecords(), metricsSamples(), { simulated: true })),
      figureHtml(throughputVsConcurrency(pts, { saturationAt: 4 })),
    ];
    expect(charts.filter((h) => h.includes('plotly.js v'))).toHaveLength(1);
    const page = `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
${charts[0]}\n${tableHtml([{ a: 1.5, b: NaN }])}\n${charts[1]}</body></html>`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-view-browser-'));
    const file = path.join(dir, 'page.html');
    fs.writeFileSync(file, page);
    const context = await launch(dir);
    try {
      const p = await context.newPage();
      const errors: string[] = [];
      p.on('pageerror', (e) => errors.push(String(e)));
      p.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      await p.goto(`file://${file}`);
      // Browser code as strings: the project compiles without the DOM lib.
      await p.waitForFunction(`document.querySelectorAll('.loadlab-plot .main-svg').length >= 2`, null, { timeout: 30000 });
      const drawn = (await p.evaluate(`[...document.querySelectorAll('.loadlab-plot')].map((el) => ({
        svg: el.querySelectorAll('.main-svg').length,
        traces: el.querySelectorAll('.scatterlayer .trace, .barlayer .trace').length,
        points: el.querySelectorAll('.scatterlayer path.point, .barlayer path, .scatterlayer path.js-line').length,
        shapes: el.querySelectorAll('.shapelayer path').length,
        title: el.querySelector('.gtitle')?.textContent ?? '',
      }))`)) as { svg: number; traces: number; points: number; shapes: number; title: string }[];
      expect(errors).toEqual([]);
      expect(drawn).toHaveLength(2);
      for (const d of drawn) {
        expect(d.svg).toBeGreaterThan(0);
        expect(d.traces).toBeGreaterThan(1);
        expect(d.points).toBeGreaterThan(3);
      }
      expect(drawn[0].title).toMatch(/\(simulated\)$/);
      expect(drawn[0].shapes).toBeGreaterThan(0); // preemption marker
      expect(drawn[1].shapes).toBe(1); // saturation line
    } finally {
      await context.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60000); // parsing 4.8 MB of plotly.js takes ~2 s idle, 10-20 s on a loaded 2-core box

  it(`at ${PAGE_WIDTH} px: Chinese run-table headers, a full-width banner, nothing overflows, no label clipped`, async () => {
    resetPlotlyInjection();
    setHtmlDisplay(null);
    const warning = 'The load generator was the bottleneck: its event loop lagged 120 ms behind, '.repeat(4);
    const sick: RunSummary = { ...summary(8), health: { clientBound: true, simBehind: false, warnings: [warning] } };
    const sim = { target: { simulated: true, kind: 'sim', serverVersion: '0.19.0' } };
    const gpu = { target: { simulated: false, kind: 'vllm', serverVersion: '0.11.0' } };
    const items = [1, 2, 4, 8, 16, 32, 64].map((c, i) => ({
      label: `c=${c}`,
      summary: c === 8 ? sick : summary(c),
      manifest: i % 2 ? gpu : sim,
    }));
    const extra = [{ header: '首字延迟 TTFT p99 (ms)', value: (s: RunSummary) => s.ttftMs.p99 }];
    const pts = scalingPoints(items.map((it, i) => ({ concurrency: [1, 2, 4, 8, 16, 32, 64][i], summary: it.summary })));
    const html = [
      summaryTable(sick)!,
      compareTable(items, undefined, {})!,
      compareTable(items, [...DEFAULT_COMPARE_METRICS, ...extra])!,
      figureHtml(latencyThroughputTradeoff(pts)),
      figureHtml(throughputVsConcurrency(pts)),
      figureHtml(
        abComparison(
          items.map((it) => ({ label: it.label, values: [1, 2, 3].map((k) => k * it.summary.ttftMs.p50) })),
          {
            metric: 'TTFT',
            percentile: 50,
            showValues: true,
          },
        ),
      ),
    ].join('\n');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-view-width-'));
    const file = path.join(dir, 'page.html');
    fs.writeFileSync(
      file,
      `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:8px">${html}</body></html>`,
    );
    const context = await launch(dir);
    try {
      const p = await context.newPage();
      await p.goto(`file://${file}`);
      await p.waitForFunction(`document.querySelectorAll('.loadlab-plot .main-svg').length >= 3`, null, { timeout: 30000 });
      const tables = (await p.evaluate(TABLES_REPORT)) as TableReport[];
      expect(tables.map((t) => t.kind)).toEqual(['summary', 'compare', 'compare']);
      for (const t of tables) expect(englishOnlyHeaders(t), `${t.kind}: ${t.caption}`).toEqual([]);
      const overflow = (await p.evaluate(OVERFLOW_REPORT)) as OverflowReport;
      expect(overflow.overflowing).toEqual([]);
      expect(overflow.pageScrollWidth).toBeLessThanOrEqual(overflow.viewport);
      // The banner spans the page (not the table's width), above the first table.
      const banner = (await p.evaluate(`(() => {
        const b = document.querySelector('.loadlab-banner').getBoundingClientRect();
        const t = document.querySelector('table.loadlab-table').getBoundingClientRect();
        return { width: b.width, body: document.body.clientWidth, above: b.bottom <= t.top, table: t.width };
      })()`)) as { width: number; body: number; above: boolean; table: number };
      expect(banner.above).toBe(true);
      expect(banner.width).toBeGreaterThanOrEqual(banner.body - 1);
      // Every "c=N" label of the trade-off chart is whole: inside the SVG, and not cut at the plot area's edge.
      const labels = (await p.evaluate(`(() => {
        const plot = document.querySelectorAll('.loadlab-plot')[0];
        const box = (el) => el.getBoundingClientRect();
        const within = (r, b) => r.left >= b.left - 0.5 && r.right <= b.right + 0.5 && r.top >= b.top - 0.5 && r.bottom <= b.bottom + 0.5;
        const svg = box(plot.querySelector('.main-svg'));
        const area = box(plot.querySelector('.nsewdrag'));
        return [...plot.querySelectorAll('.textpoint text')].map((t) => {
          const r = box(t);
          // Clipped: a clip-path on the way up cuts it at the plot area's edge.
          const clipped = t.closest('[clip-path]') !== null && !within(r, area);
          return { text: t.textContent, inside: within(r, svg) && !clipped };
        });
      })()`)) as { text: string; inside: boolean }[];
      expect(labels.map((l) => l.text)).toContain('c=1');
      expect(labels.filter((l) => !l.inside)).toEqual([]);
    } finally {
      await context.close();
      setHtmlDisplay(undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60000);
});
