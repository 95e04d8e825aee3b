/**
 * Browser-side checks shared by the Chromium tests (as strings: the project compiles without the
 * DOM lib): table headers in Chinese, and outputs that fit the page width.
 */

/** Width of the browser window the layout checks use, px (the reviewers' screenshots were 1400 wide). */
export const PAGE_WIDTH = 1400;

/** A header that needs no Chinese: a bare percentile column (`p95 (ms)`) under a Chinese caption. */
export const BARE_HEADER = /^(p\d+(\.\d+)?|max|n)( \([^)]*\))?$/;

/** What `TABLES_REPORT` returns: per LoadLab table, its kind (library tables only) and headers. */
export interface TableReport {
  kind: string;
  caption: string;
  headers: string[];
}

/** Every `.loadlab-table`: its `data-loadlab-table` kind ('' for a notebook's own table), caption and headers. */
export const TABLES_REPORT = `[...document.querySelectorAll('table.loadlab-table')].map((t) => ({
  kind: t.getAttribute('data-loadlab-table') || '',
  caption: (t.querySelector('caption')?.textContent || '').trim(),
  headers: [...t.querySelectorAll('thead th')].map((th) => (th.textContent || '').trim()),
}))`;

/** True when `s` holds a CJK ideograph. */
export function hasChinese(s: string): boolean {
  return /[\u4e00-\u9fff]/.test(s);
}

/** Headers of `t` that are neither Chinese nor a bare percentile column. */
export function englishOnlyHeaders(t: TableReport): string[] {
  return t.headers.filter((h) => !hasChinese(h) && !BARE_HEADER.test(h));
}

/** What `OVERFLOW_REPORT` returns: the page's width and every output element that does not fit. */
export interface OverflowReport {
  viewport: number;
  pageScrollWidth: number;
  overflowing: { what: string; right: number; scrollWidth: number; clientWidth: number }[];
}

/**
 * Every LoadLab table, banner and chart, and every notebook output area: right edge beyond the
 * window, or content wider than its box (scrollWidth > clientWidth + 1: a scrollbar or clipping).
 */
export const OVERFLOW_REPORT = `(() => {
  const vw = document.documentElement.clientWidth;
  const els = [...document.querySelectorAll(
    'table.loadlab-table, .loadlab-banner, .loadlab-plot, .jp-OutputArea-output, .output_area .output_subarea')];
  const overflowing = els
    .map((el) => {
      const r = el.getBoundingClientRect();
      const what = el.className + (el.id ? '#' + el.id : '') + ': ' + (el.textContent || '').trim().slice(0, 60);
      return { what, right: Math.round(r.right), scrollWidth: el.scrollWidth, clientWidth: el.clientWidth, visible: r.width > 0 };
    })
    .filter((e) => e.visible && (e.right > vw + 1 || e.scrollWidth > e.clientWidth + 1))
    .map(({ visible, ...e }) => e);
  return { viewport: vw, pageScrollWidth: document.documentElement.scrollWidth, overflowing };
})()`;
