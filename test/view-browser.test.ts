/**
 * One real-browser check: two charts on one page (plotly.js inlined once, with the first) draw
 * in headless Chromium with no page error. Skipped when /usr/bin/chromium is missing.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { figureHtml, resetPlotlyInjection, scalingPoints, serverTimeline, tableHtml, throughputVsConcurrency } from '../src/view';
import { metricsSamples, summary, timelineRecords } from './helpers/view-fixtures';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = fs.existsSync(CHROMIUM);
if (!hasChromium) console.warn(`view-browser: skipped, ${CHROMIUM} is missing (install Debian's chromium to run it)`);

describe.skipIf(!hasChromium)('charts in headless Chromium', () => {
  it('draws every chart with its traces, plotly.js inlined once, no page errors', async () => {
    const { chromium } = await import('playwright-core');
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
    const context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
      executablePath: CHROMIUM,
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
});
