import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { figureHtml, plotlyInjected, resetPlotlyInjection, saveFigure, setHtmlDisplay, show, type Figure } from '../src/view';

const LIB = 'plotly.js v'; // banner at the top of plotly.min.js
const fig: Figure = {
  data: [{ type: 'scatter', x: [1, 2], y: [3, NaN], name: '</script><b>' }],
  layout: { title: { text: 't' } },
};

beforeEach(() => resetPlotlyInjection());
afterEach(() => setHtmlDisplay(undefined));

describe('figureHtml', () => {
  it('inlines plotly.js with the first chart of a session only', () => {
    const first = figureHtml(fig);
    const second = figureHtml(fig);
    expect(first).toContain(LIB);
    expect(first.length).toBeGreaterThan(1_000_000);
    expect(second).not.toContain(LIB);
    expect(second.length).toBeLessThan(5_000);
    expect(second).toMatch(/<div id="loadlab-plot-[0-9a-f]+"/);
    expect(second).toContain('window.Plotly.newPlot');
    resetPlotlyInjection();
    expect(figureHtml(fig)).toContain(LIB);
  });
  it('escapes data so it cannot close the script; NaN becomes null', () => {
    const html = figureHtml(fig, { includePlotly: false, divId: 'd' });
    expect(html.match(/<\/script>/g)).toHaveLength(1);
    expect(html).toContain('"y":[3,null]');
    expect(plotlyInjected()).toBe(false);
  });
  it('escapes HTML-parser sequences inside the inlined library', () => {
    const lib = figureHtml(fig, { includePlotly: true }).split('<div id=')[0];
    expect(lib.match(/<\/script/gi)).toHaveLength(1);
    expect(lib).not.toMatch(/<!--|<script[^>]*>[\s\S]*<script/i);
  });
});

describe('show', () => {
  it('returns the HTML outside a kernel', () => {
    expect(show(fig)).toContain(LIB);
    expect(show(fig)).not.toContain(LIB);
  });
  it('displays through the kernel display and returns nothing', () => {
    const shown: string[] = [];
    setHtmlDisplay({ html: (s) => shown.push(s) });
    expect(show(fig)).toBeUndefined();
    expect(show(fig)).toBeUndefined();
    expect(shown).toHaveLength(2);
    expect(shown[0]).toContain(LIB);
    expect(shown[1]).not.toContain(LIB);
  });
  it('keeps the library pending when the kernel display fails', () => {
    setHtmlDisplay({
      html: () => {
        throw new Error('Not ready');
      },
    });
    show(fig);
    expect(plotlyInjected()).toBe(false);
  });
  it('saves standalone files, inline or with a sibling plotly.min.js', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-view-'));
    try {
      show({ ...fig, layout: {} }, { saveTo: path.join(dir, 'a', 'inline.html'), title: 'My chart' });
      const inline = fs.readFileSync(path.join(dir, 'a', 'inline.html'), 'utf8');
      expect(inline).toMatch(/^<!DOCTYPE html>/);
      expect(inline).toContain('<title>My chart</title>');
      expect(inline).toContain(LIB);
      expect(inline).toContain('"title":{"text":"My chart"}');
      const file = saveFigure(fig, path.join(dir, 'b', 'sib.html'), { plotlyJs: 'sibling' });
      const sib = fs.readFileSync(file, 'utf8');
      expect(sib).toContain('<script src="plotly.min.js"></script>');
      expect(sib).not.toContain(LIB);
      expect(fs.statSync(path.join(dir, 'b', 'plotly.min.js')).size).toBeGreaterThan(1_000_000);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('show with a banner', () => {
  it('puts the warnings in a full-width banner above the chart, in the notebook and in the saved file', () => {
    const shown: string[] = [];
    setHtmlDisplay({ html: (s) => shown.push(s) });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-banner-'));
    try {
      const file = path.join(dir, 'c.html');
      expect(show(fig, { banner: ['⚠ 测量端成了瓶颈 CLIENT-BOUND'], saveTo: file })).toBeUndefined();
      const html = shown[0];
      expect(html.indexOf('loadlab-banner')).toBeGreaterThanOrEqual(0);
      expect(html.indexOf('loadlab-banner')).toBeLessThan(html.indexOf('class="loadlab-plot"'));
      expect(fs.readFileSync(file, 'utf8')).toContain('CLIENT-BOUND');
      show(fig);
      expect(shown[1]).not.toContain('loadlab-banner');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
