import { afterEach, describe, expect, it } from 'vitest';
import {
  bannerHtml,
  healthBannerLines,
  compareRows,
  compareTable,
  formatCell,
  setHtmlDisplay,
  summaryRows,
  summaryTable,
  table,
  tableHtml,
} from '../src/view';
import type { RunSummary } from '../src/types';
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
    expect(rows.map((r) => r['指标 metric'])).toEqual([
      '首字延迟 TTFT',
      '每输出 token 时间 TPOT',
      'token 间隔 ITL',
      '端到端延迟 E2E',
    ]);
    expect(Object.keys(rows[0])).toEqual([
      '指标 metric',
      '样本数 n',
      '均值 mean (ms)',
      'p50 (ms)',
      'p90 (ms)',
      'p95 (ms)',
      'p99 (ms)',
      '最大 max (ms)',
    ]);
    expect(rows[3]).toMatchObject({ 'p50 (ms)': 200, 'p95 (ms)': 400, 'p99 (ms)': 600 });
    const html = summaryTable(summary(2), { simulated: true })!;
    expect(html).toContain('10 个请求中 9 个完成，1 个失败 (simulated)</caption>');
    expect(cells(html)[2]).toEqual(['token 间隔 ITL', '0', '—', '—', '—', '—', '—', '—']);
    expect(cells(html)[0].slice(0, 4)).toEqual(['首字延迟 TTFT', '10', '22.0', '20.0']);
    expect(html).not.toContain('loadlab-banner');
  });
  it('puts runs in rows with E2E/TTFT percentiles and throughput', () => {
    const items = [
      { label: 1, summary: summary(1) },
      { label: 4, summary: summary(4) },
    ];
    const rows = compareRows(items);
    expect(rows[1]).toMatchObject({
      '运行 run': '4',
      '端到端 E2E p50 (ms)': 400,
      '端到端 E2E p99 (ms)': 1200,
      '首字延迟 TTFT p95 (ms)': 80,
      '输出吞吐 output (tok/s)': 400,
    });
    const custom = compareRows(items, [{ header: 'TPOT p50 ms', value: (s) => s.tpotMs.p50 }]);
    expect(custom).toEqual([
      { '运行 run': '1', 'TPOT p50 ms': 5 },
      { '运行 run': '4', 'TPOT p50 ms': 5 },
    ]);
    expect(compareTable(items)).toContain('<caption>运行对比 runs compared</caption>');
  });
  it('headers are Chinese with the English metric name kept', () => {
    const heads = (html: string) => [...html.matchAll(/<th[^>]*>(.*?)<\/th>/g)].map((m) => m[1]);
    const all = [...heads(summaryTable(summary(1))!), ...heads(compareTable([{ label: 'a', summary: summary(1) }])!)];
    const cjk = /[\u4e00-\u9fff]/;
    // Every header but the bare percentile columns (p50 (ms) …, under a Chinese caption) is Chinese.
    for (const h of all.filter((h) => !/^p\d+ \(ms\)$/.test(h))) expect(h).toMatch(cjk);
    for (const name of ['TTFT', 'E2E', 'tok/s', 'p95']) expect(all.join(' ')).toContain(name);
  });
  it('health warnings go to a full-width banner above the table, not into the caption', () => {
    const warning = 'The load generator was the bottleneck: its event loop lagged 120 ms.';
    const sick: RunSummary = { ...summary(1), health: { clientBound: true, simBehind: false, warnings: [warning] } };
    const html = summaryTable(sick)!;
    const caption = html.match(/<caption>(.*?)<\/caption>/)![1];
    expect(caption).not.toContain('⚠');
    expect(html.indexOf('loadlab-banner')).toBeLessThan(html.indexOf('<table'));
    expect(html).toContain(warning);
    expect(html).toContain('CLIENT-BOUND');
    expect(html).toMatch(/class="loadlab-banner"[^>]*width:100%/);
    const cmp = compareTable([
      { label: 'c=1', summary: summary(1) },
      { label: 'c=8', summary: sick },
    ])!;
    expect(cmp.indexOf('c=8：')).toBeLessThan(cmp.indexOf('<table'));
    expect(cells(cmp).map((r) => r[r.length - 1])).toEqual(['正常 ok', '⚠ 客户端瓶颈 client-bound']);
    expect(bannerHtml([])).toBe('');
    expect(bannerHtml('<b>')).toContain('&lt;b&gt;');
  });
  it('a flagged run with CPU steal of 0.5 % or more says so in Chinese, under the first line', () => {
    const stall = (stealPercent: number) => ({
      cause: 'other-processes' as const,
      lateMs: { ownCpu: 1, gc: 0, otherProcesses: 80 },
      gcCount: 0,
      gcPauseTotalMs: 0,
      gcPauseMaxMs: 0,
      othersLoad1m: 0.4,
      stealPercent,
    });
    const run = (steal: number): RunSummary => ({
      ...summary(1),
      health: { clientBound: false, simBehind: true, warnings: ['w'], clientStall: stall(steal) },
    });
    const lines = healthBannerLines(run(15.94));
    expect(lines[0]).toContain('模拟器落后于真实时间');
    expect(lines[1]).toMatch(/^这次运行中，这台虚拟机的宿主机拿走了 15\.9 % 的 CPU（CPU 窃取 steal/);
    expect(lines[2]).toBe('w');
    expect(healthBannerLines(run(0.3))).toHaveLength(2); // below 0.5 %: no line
  });
  it('a client-bound run whose loop was mostly woken late says so in Chinese, and that no program took the CPU', () => {
    const stall = {
      cause: 'woken-late' as const,
      lateMs: { ownCpu: 1, gc: 0, otherProcesses: 30, inRunQueue: 4, wokenLate: 21.46 },
      gcCount: 0,
      gcPauseTotalMs: 0,
      gcPauseMaxMs: 0,
      othersLoad1m: 0.4,
    };
    const run = (clientBound: boolean): RunSummary => ({
      ...summary(1),
      health: { clientBound, simBehind: !clientBound, warnings: ['w'], clientStall: stall },
    });
    const lines = healthBannerLines(run(true));
    expect(lines[0]).toContain('CLIENT-BOUND');
    expect(lines[1]).toMatch(
      /^客户端的事件循环迟到，主要是因为线程过了该醒的时刻还在睡：内核（或虚拟机的宿主机）晚唤醒了它，至少 21\.5 ms（晚唤醒 woken late）/,
    );
    expect(lines[1]).toContain('不是客户端的工作量，也不是别的程序');
    expect(lines[2]).toBe('w');
    expect(healthBannerLines(run(false))).toHaveLength(2); // not client-bound: the loop's cause is not the flag's
  });
});
