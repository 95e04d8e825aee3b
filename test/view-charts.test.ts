import { describe, expect, it } from 'vitest';
import {
  abComparison,
  findSaturation,
  itlTimeSeries,
  latencyCdf,
  latencyThroughputTradeoff,
  percentileBars,
  requestGantt,
  scalingPoints,
  scalingTitle,
  tagColors,
  timeRangeS,
  colorAt,
  countWaves,
  wavesLabel,
  serverTimeline,
  throughputVsConcurrency,
  counterIncrements,
} from '../src/view';
import { metricsSamples, rec, summary, timelineRecords } from './helpers/view-fixtures';

describe('latencyCdf', () => {
  it('draws a step line per series through sorted values and marks p50/p95/p99', () => {
    const fig = latencyCdf(
      [
        { label: 'a', values: [30, 10, 20, NaN, 40] },
        { label: 'b', values: [] },
      ],
      { title: 'TTFT', unit: 'ms' },
    );
    expect(fig.data).toHaveLength(4); // line + markers per series
    expect(fig.data[0].x).toEqual([10, 20, 30, 40]);
    expect(fig.data[0].y).toEqual([0.25, 0.5, 0.75, 1]);
    expect(fig.data[1].x).toEqual([25, 38.5, 39.7].map((v) => expect.closeTo(v, 9)));
    expect(fig.data[1].text).toEqual(['p50', 'p95', 'p99']);
    expect(fig.data[2].x).toEqual([]);
    expect(fig.layout.title?.text).toBe('TTFT');
    expect(fig.layout.xaxis?.title?.text).toBe('延迟 latency (ms)');
  });
  it('labels simulated numbers', () => {
    expect(latencyCdf([], { title: 'TTFT', simulated: true }).layout.title?.text).toBe('TTFT (simulated)');
  });
});

describe('percentileBars', () => {
  it('one grouped trace per percentile, values straight from the summaries', () => {
    const fig = percentileBars(
      [
        { label: 1, summary: summary(1) },
        { label: 8, summary: summary(8) },
      ],
      'e2eMs',
    );
    expect(fig.layout.barmode).toBe('group');
    expect(fig.data.map((t) => t.name)).toEqual(['p50', 'p95', 'p99']);
    expect(fig.data[0].x).toEqual(['1', '8']);
    expect(fig.data[2].y).toEqual([300, 2400]);
    expect(fig.layout.yaxis?.title?.text).toBe('端到端延迟 E2E (ms)');
  });
});

describe('findSaturation', () => {
  const pts = [1, 2, 4, 8, 16, 32].map((c, i) => ({ concurrency: c, outputTokensPerSec: [100, 190, 360, 600, 640, 650][i] }));
  it('returns the first concurrency whose next doubling adds < 10%', () => {
    expect(findSaturation(pts)).toBe(8); // 600 → 640 is +6.7%
    expect(findSaturation(pts, { gainBelow: 0.8 })).toBe(4); // 360 → 600 is +67% < 80%
    expect(findSaturation(pts.slice(0, 4))).toBeUndefined();
    expect(findSaturation([])).toBeUndefined();
  });
  it('normalises gaps that are not one doubling (per doubling)', () => {
    // 1 → 4 is two doublings: 100 → 118 is ~8.6% per doubling.
    expect(
      findSaturation([
        { concurrency: 4, outputTokensPerSec: 118 },
        { concurrency: 1, outputTokensPerSec: 100 },
      ]),
    ).toBe(1);
  });
  it('rejects a nonsense threshold with the fix', () => {
    expect(() => findSaturation(pts, { gainBelow: -1 })).toThrow(/gainBelow must be a fraction/);
  });
});

describe('throughputVsConcurrency / latencyThroughputTradeoff', () => {
  const pts = scalingPoints([8, 1, 4].map((c) => ({ concurrency: c, summary: summary(c) })));
  it('puts throughput and TTFT (p50 line, p95–p99 band) on two y axes and marks saturation', () => {
    const fig = throughputVsConcurrency(pts, { saturationAt: 4, simulated: true });
    expect(fig.data).toHaveLength(4);
    expect(fig.data[0].x).toEqual([1, 4, 8]);
    expect(fig.data[0].y).toEqual([100, 400, 800]);
    expect(fig.data.slice(1).every((t) => t.yaxis === 'y2')).toBe(true);
    const [, p50, p95, p99] = fig.data;
    expect(p50.y).toEqual([10, 40, 80]);
    expect(p95).toMatchObject({ y: [20, 80, 160], showlegend: false });
    expect(p99).toMatchObject({ y: [30, 120, 240], fill: 'tonexty' }); // the band fills down to p95, the trace before it
    expect(p50.name).toContain('TTFT p50');
    expect(throughputVsConcurrency(pts, { latency: 'ttftP99Ms' }).data.map((t) => t.y)).toEqual([
      [100, 400, 800],
      [30, 120, 240],
    ]);
    expect(fig.layout.yaxis2).toMatchObject({ overlaying: 'y', side: 'right' });
    expect(fig.layout.xaxis?.type).toBe('log');
    expect(fig.layout.shapes?.[0]).toMatchObject({ x0: 4, x1: 4 });
    expect(fig.layout.annotations?.[0]).toMatchObject({ x: Math.log10(4), text: expect.stringContaining('4') });
    expect(fig.layout.title?.text).toMatch(/\(simulated\)$/);
    expect(throughputVsConcurrency(pts).layout.annotations).toBeUndefined();
  });
  it('titles itself from the data: a plateau only when one is measured', () => {
    // 100 → 400 → 800 tok/s: +100 % per doubling all along.
    expect(throughputVsConcurrency(pts).layout.title?.text).toBe('吞吐随并发持续上升（未见平台）');
    const flat = [
      { concurrency: 1, outputTokensPerSec: 100 },
      { concurrency: 2, outputTokensPerSec: 190 },
      { concurrency: 4, outputTokensPerSec: 200 },
      { concurrency: 8, outputTokensPerSec: 205 },
    ];
    expect(scalingTitle(flat)).toBe('吞吐随并发上升，c=2 后每翻倍增幅 < 10 %');
    expect(scalingTitle(flat, { gainBelow: 0.02 })).toBe('吞吐随并发持续上升（未见平台）'); // 4 → 8 is +2.5 %
    expect(scalingTitle(flat.slice(0, 1))).not.toMatch(/上升/);
    expect(throughputVsConcurrency(pts, { title: 'T' }).layout.title?.text).toBe('T');
  });
  it('plots throughput against p95 E2E labelled by concurrency', () => {
    const fig = latencyThroughputTradeoff(pts);
    expect(fig.data[0].x).toEqual([100, 400, 800]);
    expect(fig.data[0].y).toEqual([200, 800, 1600]);
    expect(fig.data[0].text).toEqual(['c=1', 'c=4', 'c=8']);
    // The leftmost label sits right of its point and no label is clipped at the axis.
    expect(fig.data[0]).toMatchObject({ textposition: ['top right', 'top left', 'top left'], cliponaxis: false });
  });
});

describe('requestGantt', () => {
  it('splits each request into queued / waiting / decode bars in seconds, plus ticks and failures', () => {
    const fig = requestGantt(timelineRecords());
    expect(fig.data.map((t) => t.name)).toEqual([
      '客户端排队 queued (client)',
      '等首个 token（排队 + 预填充 prefill）',
      '解码 decode',
      'token 块 chunks',
      '失败 failed',
    ]);
    const [queued, waiting, decode, ticks, failed] = fig.data;
    expect(queued).toMatchObject({ y: [1], base: [0], x: [0.05] });
    expect(waiting.base).toEqual([0, 0.05, 0.06]);
    expect(waiting.x).toEqual([0.1, 0.15, 0.24].map((v) => expect.closeTo(v, 9)));
    expect(decode.base).toEqual([0.1, 0.2, 0.3]);
    expect(decode.x).toEqual([0.04, 0.32, 0.01].map((v) => expect.closeTo(v, 9)));
    expect(ticks.x).toHaveLength(11);
    expect(failed).toMatchObject({ x: [0.4], y: [2] });
    expect(fig.layout.barmode).toBe('overlay');
    expect(fig.layout.xaxis?.title?.text).toBe('运行时间 run time (s)');
  });
  it('colours decode by tag and can drop ticks', () => {
    const fig = requestGantt(timelineRecords(), { colorBy: 'tag', ticks: false });
    expect(fig.data.map((t) => t.name)).toEqual([
      '客户端排队 queued (client)',
      '等首个 token（排队 + 预填充 prefill）',
      '解码 decode · long',
      '解码 decode · short',
      '失败 failed',
    ]);
  });
  it('gives each tag one fixed colour, whatever the order or the run, and shares an x range', () => {
    const colorOf = (recs: ReturnType<typeof timelineRecords>, tag: string) =>
      (requestGantt(recs, { colorBy: 'tag' }).data.find((t) => t.name === `解码 decode · ${tag}`)!.marker as { color: string })
        .color;
    const a = timelineRecords();
    const b = [...timelineRecords()].reverse(); // 'long' seen first now
    for (const tag of ['short', 'long']) expect(colorOf(a, tag)).toBe(colorOf(b, tag));
    expect(colorOf(a, 'short')).not.toBe(colorOf(a, 'long'));
    expect(colorOf(a, 'long')).toBe(tagColors(['long']).get('long'));
    // ITL scatter: the same tag colours as the Gantt.
    const itl = itlTimeSeries(a);
    expect((itl.data.find((t) => t.name === 'long')!.marker as { color: string }).color).toBe(colorOf(a, 'long'));
    const later = timelineRecords().map((r) => ({ ...r, endMs: r.endMs + 1000, chunkMs: r.chunkMs.map((c) => c + 1000) }));
    const range = timeRangeS(a, later);
    expect(range[0]).toBe(0);
    expect(range[1]).toBeGreaterThanOrEqual(1.52);
    expect(requestGantt(a, { xRange: range }).layout.xaxis).toMatchObject({ range, autorange: false });
  });
});

describe('itlTimeSeries', () => {
  it('plots each gap at the arrival of the chunk that ended it', () => {
    const fig = itlTimeSeries(timelineRecords(), { tag: 'long' });
    expect(fig.data).toHaveLength(1);
    expect(fig.data[0].x).toEqual([0.21, 0.51, 0.52]);
    expect(fig.data[0].y).toEqual([10, 300, 10]);
    expect(fig.layout.shapes?.[0]).toMatchObject({ y0: 10 }); // median line
    expect(itlTimeSeries(timelineRecords()).data.map((t) => t.name)).toEqual(['short', 'long']);
  });
});

describe('serverTimeline', () => {
  const fig = serverTimeline(timelineRecords(), metricsSamples(), {
    series: ['running', 'waiting', 'kvUsage', 'preemptions', 'generationTokensPerSec'],
  });
  it('shares one x axis across stacked panels', () => {
    expect(fig.data.every((t) => t.xaxis === 'x')).toBe(true);
    const axes = ['yaxis', 'yaxis2', 'yaxis3', 'yaxis4'].map(
      (k) => fig.layout[k] as { domain: [number, number]; anchor: string },
    );
    expect(fig.layout.yaxis5).toBeUndefined();
    for (const a of axes) expect(a.anchor).toBe('x');
    for (let i = 1; i < axes.length; i++) expect(axes[i].domain[1]).toBeLessThan(axes[i - 1].domain[0]); // top to bottom
    expect(fig.layout.xaxis).toMatchObject({ anchor: 'y4' });
  });
  it('draws gauges as given, counters as increments and rates', () => {
    const byName = (n: string) => fig.data.find((t) => t.name === n)!;
    expect(byName('running (requests)')).toMatchObject({ yaxis: 'y2', y: [0, 1, 2, 3, 3, 3] });
    expect(byName('KV cache usage (%)').y).toEqual([0, 10, 20, 30, 40, 50].map((v) => expect.closeTo(v, 9)));
    expect(byName('generation tokens/s')).toMatchObject({ yaxis: 'y4', y: [100, 100, 100, 100, 100] });
    expect(byName('preemptions (+n per scrape)')).toMatchObject({ x: [0.3], y: [1] });
    expect(fig.layout.shapes).toEqual([expect.objectContaining({ x0: 0.3, yref: 'paper', y0: 0, y1: 1 })]);
  });
  it('marks ITL stalls above k× the median gap on the request row', () => {
    const stalls = fig.data.find((t) => String(t.name).startsWith('ITL stall'))!;
    expect(stalls).toMatchObject({ x: [0.51], y: [1], yaxis: 'y' });
  });
  it('adds GPU utilisation by default when samples are given', () => {
    const g = serverTimeline([rec(0, { start: 0, chunks: [10, 20] })], metricsSamples(), {
      gpu: [
        { tMs: 0, gpu: 0, utilPct: 50 },
        { tMs: 100, gpu: 0, utilPct: 90 },
      ],
      simulated: true,
    });
    expect(g.data.find((t) => t.name === 'GPU 0 util (%)')).toMatchObject({ yaxis: 'y3', y: [50, 90] });
    expect(g.layout.title?.text).toMatch(/\(simulated\)$/);
  });
  it('treats a counter that went down as a reset, as server/counters.ts does', () => {
    expect(
      counterIncrements(
        [
          { tMs: 0, preemptionsTotal: 5 },
          { tMs: 1, preemptionsTotal: 2 },
        ],
        'preemptionsTotal',
      ),
    ).toEqual([{ tMs: 1, inc: 2, dtMs: 1 }]);
  });
});

describe('abComparison', () => {
  it('plots the percentile of each variant with CI error bars', () => {
    const fig = abComparison(
      [
        { label: 'A', values: [1, 2, 3, 4, 5], ci: { lo: 2, hi: 4.5 } },
        { label: 'B', values: [10, 20, 30] },
      ],
      { metric: 'TTFT', percentile: 'p50' },
    );
    expect(fig.data).toHaveLength(1);
    expect(fig.data[0].y).toEqual([3, 20]);
    expect(fig.data[0].error_y).toMatchObject({ array: [1.5, 0], arrayminus: [1, 0], symmetric: false });
    expect(fig.layout.yaxis?.title?.text).toBe('TTFT p50 (ms)');
    expect(fig.layout.xaxis?.title?.text).toBe('设置 setting');
    expect(abComparison([{ label: 'A', values: [1] }], { metric: 'E2E', percentile: 95, showValues: true }).data).toHaveLength(2);
    expect(() => abComparison([], { metric: 'E2E', percentile: 'p150' })).toThrow(/percentile must be/);
  });
  it('colours variant i as latencyCdf colours series i (points and dots)', () => {
    const items = ['A', 'B', 'C'].map((label, i) => ({ label, values: [1 + i, 2 + i, 3 + i] }));
    const cdf = latencyCdf(items);
    const cdfColors = cdf.data.filter((_, k) => k % 2 === 0).map((t) => (t.line as { color: string }).color);
    const ab = abComparison(items, { metric: 'TTFT', percentile: 50, showValues: true, xTitle: '并发 concurrency' });
    expect((ab.data[0].marker as { color: string[] }).color).toEqual(cdfColors);
    expect(ab.data.slice(1).map((t) => (t.marker as { color: string }).color)).toEqual(cdfColors);
    expect(cdfColors).toEqual([0, 1, 2].map(colorAt));
    expect(ab.layout.xaxis?.title?.text).toBe('并发 concurrency');
  });
});

describe('countWaves / wavesLabel', () => {
  it('counts groups of sends from the data: a closed loop serving 2c requests has two waves, a burst one', () => {
    const req = (i: number, start: number, e2e: number, warmup = false) =>
      rec(i, { start, chunks: [start + 100, start + e2e], warmup });
    // Closed loop, 4 slots, 8 requests of ~1 s: the second four start as the first four end.
    const closed = [0, 5, 9, 14].flatMap((s, i) => [req(i, s, 1000 + s), req(i + 4, 1000 + 2 * s, 1000)]);
    expect(countWaves(closed)).toBe(2);
    expect(wavesLabel(countWaves(closed))).toBe('2 波 two waves');
    const burst = [0, 1, 2, 3, 4, 5].map((s, i) => req(i, s, 500 + 300 * i));
    expect(countWaves(burst)).toBe(1);
    expect(wavesLabel(1)).toBe('1 波 one wave');
    // Warm-up requests are not a wave.
    expect(countWaves([req(99, -5000, 1000, true), ...burst])).toBe(1);
    expect(countWaves([])).toBe(0);
    expect(countWaves(closed, { gapMs: 2 })).toBeGreaterThan(2);
    expect(() => countWaves(closed, { gapMs: -1 })).toThrow(/gapMs must be/);
  });
});
