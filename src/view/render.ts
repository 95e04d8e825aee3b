/**
 * Render layer: turns a `Figure` into notebook output or a standalone HTML file.
 *
 * plotly.js (~4.8 MB minified) is inlined into the notebook ONCE per kernel session, with the
 * first chart; later charts emit only a `<div>` and a `<script>` that waits for `window.Plotly`
 * and calls `Plotly.newPlot`. This works in live JupyterLab (outputs share one page) and in
 * nbconvert's HTML export (outputs are inlined in order, so the library precedes the charts).
 * Nothing here needs the DOM at compile time: the browser code is a string.
 *
 * Standalone files (`saveTo`) must work offline, so by default each inlines plotly.js too
 * (~4.8 MB per file). With `plotlyJs: 'sibling'` they instead load `plotly.min.js`, copied once
 * into the same folder: use that when a run folder collects many charts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { bannerHtml } from './banner';
import { displayHtml, kernelDisplay, renderState } from './display';
import type { Figure } from './figure';

export { displayHtml, setHtmlDisplay, type HtmlDisplay } from './display';

/** How standalone HTML files get plotly.js: inlined (default, one self-contained file) or a sibling `plotly.min.js`. */
export type PlotlyJsMode = 'inline' | 'sibling';

/** Options of `saveFigure` / `standaloneHtml`. */
export interface SaveOptions {
  /** Page `<title>`; also the figure title when the figure has none. */
  title?: string;
  /** Default `'inline'` (self-contained, ~4.8 MB per file). */
  plotlyJs?: PlotlyJsMode;
  /** Warnings shown as a full-width banner above the chart (e.g. `healthBannerLines(run.summary)`), one line each. */
  banner?: string | string[];
}

/** Options of `show`. */
export interface ShowOptions extends SaveOptions {
  /** Also write a standalone HTML file here (folders are created), e.g. into the run folder. */
  saveTo?: string;
}

/** Options of `figureHtml`. */
export interface FigureHtmlOptions {
  /**
   * Inline plotly.js before the chart. Default: only if it has not been emitted yet in this
   * session (see `resetPlotlyInjection`). Passing `true` also marks it emitted.
   */
  includePlotly?: boolean;
  /** Id of the chart's `<div>`; default a random `loadlab-plot-…`. */
  divId?: string;
}

const DEFAULT_CONFIG = { responsive: true, displaylogo: false };
/** How long a chart waits for `window.Plotly` before saying why it cannot draw, ms. */
const WAIT_FOR_PLOTLY_MS = 20000;

/** Forget that plotly.js was emitted, so the next chart inlines it again (tests, cleared outputs). */
export function resetPlotlyInjection(): void {
  renderState().injected = false;
}

/** Whether plotly.js has been emitted in this session. */
export function plotlyInjected(): boolean {
  return renderState().injected;
}

/** `require` in CommonJS (the tslab kernel); one rooted at the working directory in ESM (vitest, tsx). */
function localRequire(): NodeRequire {
  return typeof require === 'function' ? require : createRequire(path.join(process.cwd(), 'index.js'));
}

/** Absolute path of the installed `plotly.min.js` (package `plotly.js-dist-min`). */
export function plotlyJsPath(): string {
  try {
    return localRequire().resolve('plotly.js-dist-min/plotly.min.js');
  } catch {
    throw new Error(
      `plotly.js-dist-min is not installed where ${process.cwd()} can find it: run \`npm install\` in the LoadLab folder`,
    );
  }
}

let plotlySource: string | undefined;

/**
 * A `<script>` tag inlining plotly.js (defines `window.Plotly`). Sequences the HTML parser
 * would act on inside a script (`</script`, `<script`, `<!--`) are escaped as `\x3C`.
 */
export function plotlyScriptTag(): string {
  if (plotlySource === undefined) {
    plotlySource = fs.readFileSync(plotlyJsPath(), 'utf8').replace(/<(\/?script|!--)/gi, '\\x3C$1');
  }
  return `<script type="text/javascript">${plotlySource}</script>`;
}

/** JSON safe inside `<script>`: every `<` escaped; NaN/Infinity become null (gaps in Plotly). */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/** Browser code that waits for the element and `window.Plotly`, then draws. */
function drawScript(divId: string, payload: string): string {
  const msg =
    'LoadLab: plotly.js is not loaded on this page. It is inlined with the first chart of a kernel ' +
    'session; if that output was cleared, run resetPlotlyInjection() and show this chart again.';
  return `(function () {
  var id = ${JSON.stringify(divId)}, fig = ${payload}, t0 = Date.now();
  function draw() {
    var el = document.getElementById(id);
    if (el && window.Plotly) {
      Promise.resolve(window.Plotly.newPlot(el, fig.data, fig.layout, fig.config)).catch(function (e) {
        el.textContent = 'LoadLab: Plotly failed to draw: ' + e;
      });
      return;
    }
    if (Date.now() - t0 > ${WAIT_FOR_PLOTLY_MS}) { if (el) el.textContent = ${JSON.stringify(msg)}; return; }
    setTimeout(draw, 50);
  }
  draw();
})();`;
}

/** `fig` with `title` as its title when it has none. */
function withTitle(fig: Figure, title?: string): Figure {
  if (!title || fig.layout.title) return fig;
  return { ...fig, layout: { ...fig.layout, title: { text: title } } };
}

/**
 * HTML for one chart: a `<div>` and a `<script>` that draws it, preceded by plotly.js the first
 * time in a session (see `FigureHtmlOptions.includePlotly`). The output must then be displayed,
 * since later charts rely on that copy of the library.
 */
export function figureHtml(fig: Figure, opts: FigureHtmlOptions = {}): string {
  const s = renderState();
  const include = opts.includePlotly ?? !s.injected;
  const id = opts.divId ?? `loadlab-plot-${randomBytes(6).toString('hex')}`;
  const height = typeof fig.layout.height === 'number' ? fig.layout.height : 450;
  const payload = scriptJson({ data: fig.data, layout: fig.layout, config: { ...DEFAULT_CONFIG, ...fig.config } });
  const parts: string[] = [];
  if (include) {
    parts.push(plotlyScriptTag());
    s.injected = true;
  }
  parts.push(`<div id="${id}" class="loadlab-plot" style="width:100%;min-height:${height}px"></div>`);
  parts.push(`<script type="text/javascript">${drawScript(id, payload)}</script>`);
  return parts.join('\n');
}

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * A complete offline HTML page showing `fig`. `plotlyJs: 'sibling'` references `plotly.min.js`
 * in the same folder instead of inlining it (`saveFigure` copies it there).
 */
export function standaloneHtml(fig: Figure, opts: SaveOptions = {}): string {
  const f = withTitle(fig, opts.title);
  const title = opts.title ?? f.layout.title?.text ?? 'LoadLab chart';
  const lib = opts.plotlyJs === 'sibling' ? '<script src="plotly.min.js"></script>' : plotlyScriptTag();
  return [
    '<!DOCTYPE html>',
    '<html><head><meta charset="utf-8">',
    `<title>${escapeText(title)}</title>`,
    '</head><body style="margin:16px;font-family:sans-serif">',
    lib,
    bannerHtml(opts.banner),
    figureHtml(f, { includePlotly: false, divId: 'loadlab-plot' }),
    '</body></html>',
    '',
  ].join('\n');
}

/**
 * Write `fig` as a standalone HTML file (creating folders). With `plotlyJs: 'sibling'`,
 * `plotly.min.js` is copied next to it once. Returns the absolute path written.
 */
export function saveFigure(fig: Figure, file: string, opts: SaveOptions = {}): string {
  const abs = path.resolve(file);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  if (opts.plotlyJs === 'sibling') {
    const lib = path.join(path.dirname(abs), 'plotly.min.js');
    const src = plotlyJsPath();
    if (!fs.existsSync(lib) || fs.statSync(lib).size !== fs.statSync(src).size) fs.copyFileSync(src, lib);
  }
  fs.writeFileSync(abs, standaloneHtml(fig, opts));
  return abs;
}

/**
 * Show `fig` inline in the notebook (plotly.js inlined with the first chart of the session only),
 * and with `saveTo` also write a standalone HTML file. Returns undefined when a kernel displayed
 * it (so a cell ending in `show(fig)` prints nothing more); outside a kernel returns the HTML.
 */
export function show(fig: Figure, opts: ShowOptions = {}): string | undefined {
  const f = withTitle(fig, opts.title);
  if (opts.saveTo) saveFigure(f, opts.saveTo, opts);
  const s = renderState();
  const before = s.injected;
  const html = bannerHtml(opts.banner) + figureHtml(f);
  if (displayHtml(html)) return undefined;
  // Not displayed anywhere: in a kernel that would leave later charts without the library.
  if (kernelDisplay()) s.injected = before;
  return html;
}
