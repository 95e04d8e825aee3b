import { afterEach, describe, expect, it } from 'vitest';
import { compareRows, compareTable, formatCell, setHtmlDisplay, summaryRows, summaryTable, table, tableHtml } from '../src/view';
import { summary } from './helpers/view-fixtures';

/** Cell texts of every body row. */
function cells(html: string): string[][] {
  const body = html.split('<tbody>')[1];
  return [...body.matchAll(/<tr>(.*?)<\/tr>/g)].map((m) => [...m[1].matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((c) => c[1]));
}

afterEach(() => setHtmlDisplay(undefined));

describe('formatCell', () => {
  it('fixed digits, — for missing, ∞ for infinities', () => {
    expect(formatCell(1.23456, 2)).toBe('1.23');
    expect(formatCell(2, 3)).toBe('2.000');
    expect(formatCell(2, 3, true)).toBe('2');
    expect([NaN, null, undefined].map((v) => formatCell(v))).toEqual(['—', '—', '—']);
    expect(formatCell(-Infinity)).toBe('-∞');
  });
});

describe('table', () => {
  it('renders an HTML table with fixed digits per column, integer columns without decimals, NaN as —', () => {
    const html = tableHtml(
      [
        { name: 'a<b', n: 3, ms: 1.23456 },
        { name: 'c', n: 10, ms: NaN },
      ],
      { caption: 'Cap', digits: 1 },
    );
    expect(html).toMatch(/^<table class="loadlab-table"><caption>Cap<\/caption>/);
    expect(html).toContain('<th style="text-align:left">name</th><th style="text-align:right">n</th>');
    expect(cells(html)).toEqual([
      ['a&lt;b', '3', '1.2'],
      ['c', '10', '—'],
    ]);
    expect(cells(tableHtml([{ x: 1.5 }], { digits: { x: 3 } }))).toEqual([['1.500']]);
  });
  it('accepts a danfojs-style DataFrame (columns + values), keeping NaN', () => {
    const df = {
      columns: ['a', 'b'],
      values: [
        [1.5, 'x'],
        [NaN, 'y'],
      ],
    };
    expect(cells(tableHtml(df))).toEqual([
      ['1.50', 'x'],
      ['—', 'y'],
    ]);
  });
  it('returns the HTML outside a kernel, and nothing once a display took it', () => {
    expect(table([{ a: 1 }])).toContain('<table');
    const shown: string[] = [];
    setHtmlDisplay({ html: (s) => shown.push(s) });
    expect(table([{ a: 1 }])).toBeUndefined();
    expect(shown[0]).toContain('<td style="text-align:right">1</td>');
  });
});

describe('summaryTable / compareTable', () => {
  it('lists TTFT/TPOT/ITL/E2E with n, mean and percentiles', () => {
    const rows = summaryRows(summary(2));
    expect(rows.map((r) => r.metric)).toEqual(['TTFT', 'TPOT', 'ITL', 'E2E']);
    expect(Object.keys(rows[0])).toEqual(['metric', 'n', 'mean', 'p50', 'p90', 'p95', 'p99', 'max']);
    expect(rows[3]).toMatchObject({ p50: 200, p95: 400, p99: 600 });
    const html = summaryTable(summary(2), { simulated: true })!;
    expect(html).toContain('9 of 10 requests completed, 1 failed (simulated)</caption>');
    expect(cells(html)[2]).toEqual(['ITL', '0', '—', '—', '—', '—', '—', '—']);
    expect(cells(html)[0].slice(0, 4)).toEqual(['TTFT', '10', '22.0', '20.0']);
  });
  it('puts runs in rows with E2E/TTFT percentiles and throughput', () => {
    const items = [
      { label: 1, summary: summary(1) },
      { label: 4, summary: summary(4) },
    ];
    const rows = compareRows(items);
    expect(rows[1]).toMatchObject({ run: '4', 'E2E p50 ms': 400, 'E2E p99 ms': 1200, 'TTFT p95 ms': 80, 'output tok/s': 400 });
    const custom = compareRows(items, [{ header: 'TPOT p50 ms', value: (s) => s.tpotMs.p50 }]);
    expect(custom).toEqual([
      { run: '1', 'TPOT p50 ms': 5 },
      { run: '4', 'TPOT p50 ms': 5 },
    ]);
    expect(compareTable(items)).toContain('<caption>Runs compared</caption>');
  });
});
