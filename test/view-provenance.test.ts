/** Tables and charts label each run from its own manifest (simulated or not), never from the current target. */
import { describe, expect, it } from 'vitest';
import {
  compareRows,
  compareTable,
  latencyCdf,
  percentileBars,
  provenanceOf,
  provenanceSuffix,
  requestGantt,
  summaryTable,
} from '../src/view';
import { summary, timelineRecords } from './helpers/view-fixtures';

const simRun = { summary: summary(1), manifest: { target: { simulated: true, kind: 'sim', serverVersion: '0.19.0' } } };
const gpuRun = { summary: summary(2), manifest: { target: { simulated: false, kind: 'vllm', serverVersion: '0.11.0' } } };

describe('labels from the run manifest', () => {
  it('summaryTable: a simulated run is captioned so even when the caller says it is not', () => {
    expect(summaryTable(simRun, { simulated: false })).toMatch(/\(simulated\)<\/caption>/);
    expect(summaryTable(gpuRun, { simulated: true })).not.toContain('(simulated)');
    expect(summaryTable(summary(1), { simulated: true })).toContain('(simulated)');
  });

  it('compareTable: caption from the manifests; a server column when the rows come from different servers', () => {
    const same = [
      { label: 'a', ...simRun },
      { label: 'b', ...simRun },
    ];
    expect(compareTable(same, undefined, { simulated: false })).toContain('运行对比 runs compared (simulated)</caption>');
    expect(Object.keys(compareRows(same)[0])).not.toContain('服务器 server');
    const mixed = [
      { label: 'sim', ...simRun },
      { label: '4090', ...gpuRun },
    ];
    expect(compareTable(mixed)).toContain('运行对比 runs compared (simulated and real runs mixed)</caption>');
    expect(compareRows(mixed).map((r) => r['服务器 server'])).toEqual(['simulated 0.19.0', 'vLLM 0.11.0']);
    expect(compareTable([{ label: 'gpu', ...gpuRun }], undefined, { simulated: true })).toContain(
      '<caption>运行对比 runs compared</caption>',
    );
  });

  it('charts: the title says simulated, real or mixed from the runs given', () => {
    expect(provenanceOf([simRun, gpuRun])).toBe('mixed');
    expect(provenanceOf([])).toBeUndefined();
    expect(requestGantt(timelineRecords(), { title: 'T', simulated: simRun }).layout.title).toEqual({ text: 'T (simulated)' });
    expect(requestGantt(timelineRecords(), { title: 'T', simulated: [gpuRun] }).layout.title).toEqual({ text: 'T' });
    const bars = percentileBars([{ label: 'a', summary: simRun.summary }], 'e2eMs', { title: 'B', simulated: [simRun, gpuRun] });
    expect(bars.layout.title).toEqual({ text: 'B (simulated and real runs mixed)' });
    expect(latencyCdf([{ label: 'x', values: [1, 2, 3] }], { title: 'C', simulated: true }).layout.title).toEqual({
      text: 'C (simulated)',
    });
  });
});

describe('every chart builder labels itself from the runs given', () => {
  it('each exported builder that returns a Figure titles a simulated run "(simulated)", a real one not', async () => {
    const view = await import('../src/view');
    const recs = timelineRecords();
    const pts = view.scalingPoints([1, 2].map((c) => ({ concurrency: c, summary: summary(c) })));
    const build: Record<string, (sim: unknown) => { layout: { title?: { text: string } } }> = {
      latencyCdf: (s) => view.latencyCdf([{ label: 'a', values: [1, 2] }], { simulated: s as never }),
      percentileBars: (s) => view.percentileBars([{ label: 1, summary: summary(1) }], 'ttftMs', { simulated: s as never }),
      abComparison: (s) =>
        view.abComparison([{ label: 'a', values: [1, 2] }], { metric: 'TTFT', percentile: 50, simulated: s as never }),
      throughputVsConcurrency: (s) => view.throughputVsConcurrency(pts, { simulated: s as never }),
      latencyThroughputTradeoff: (s) => view.latencyThroughputTradeoff(pts, { simulated: s as never }),
      requestGantt: (s) => view.requestGantt(recs, { simulated: s as never }),
      itlTimeSeries: (s) => view.itlTimeSeries(recs, { simulated: s as never }),
      serverTimeline: (s) => view.serverTimeline(recs, [], { simulated: s as never }),
    };
    // A new chart builder in src/view must be added above (and so be checked).
    const fs = await import('node:fs');
    const path = await import('node:path');
    const dir = path.join(__dirname, '..', 'src', 'view');
    const builders = fs
      .readdirSync(dir)
      .flatMap((f) => [...fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/export function (\w+)\([^)]*\)\s*:\s*Figure\b/g)])
      .map((m) => m[1]);
    expect(builders.filter((b) => !(b in build))).toEqual([]);
    expect(new Set(builders)).toEqual(new Set(Object.keys(build)));
    for (const [name, f] of Object.entries(build)) {
      expect(f(simRun).layout.title?.text, name).toMatch(/\(simulated\)$/);
      expect(f([simRun, gpuRun]).layout.title?.text, name).toMatch(/\(simulated and real runs mixed\)$/);
      expect(f(gpuRun).layout.title?.text, name).not.toMatch(/simulated/);
    }
  });
});

describe('simulator profiles in the label', () => {
  const onProfile = (id?: string) => ({
    summary: summary(1),
    manifest: {
      target: {
        simulated: true,
        kind: 'sim',
        ...(id ? { simProfile: { id, status: 'spec-derived, not calibrated', gpu: 'NVIDIA L40S' } } : {}),
      },
    },
  });

  it('the default profile (named or absent) adds nothing; another profile is named with its status', () => {
    expect(provenanceSuffix([onProfile()])).toBe(' (simulated)');
    expect(provenanceSuffix([onProfile('rtx4090-qwen2.5-7b-instruct-gptq-int4')])).toBe(' (simulated)');
    expect(provenanceSuffix([onProfile('l40s-qwen2.5-7b-instruct-awq')])).toBe(
      ' (simulated, profile l40s-qwen2.5-7b-instruct-awq (spec-derived, not calibrated))',
    );
    expect(provenanceSuffix([onProfile(), onProfile('l40s-qwen2.5-7b-instruct-awq')])).toBe(
      ' (simulated, profiles rtx4090-qwen2.5-7b-instruct-gptq-int4 / l40s-qwen2.5-7b-instruct-awq)',
    );
  });
});
