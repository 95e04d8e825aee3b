/**
 * The server timeline's swapped-requests trace (`MetricsSample.swapped`, V0's `vllm:num_requests_swapped`):
 * drawn iff the run's samples carry it, on the requests panel, with a Chinese label and the English term.
 */
import { describe, expect, it } from 'vitest';
import { hasSwapped, serverTimeline } from '../src/view/charts-server';
import type { MetricsSample } from '../src/types';
import { metricsSamples, timelineRecords } from './helpers/view-fixtures';

const NAME = '换出到 CPU 的请求 swapped (requests)';
const withSwapped = (): MetricsSample[] => metricsSamples().map((m, i) => ({ ...m, swapped: [0, 0, 2, 3, 1, 0][i] ?? 0 }));
const names = (metrics: MetricsSample[], series?: Parameters<typeof serverTimeline>[2]) =>
  serverTimeline(timelineRecords(), metrics, series).data.map((t) => String(t.name));

describe('swapped requests in serverTimeline', () => {
  it('appears by default when the samples carry it, on the requests panel, as a step line', () => {
    const metrics = withSwapped();
    expect(hasSwapped(metrics)).toBe(true);
    const fig = serverTimeline(timelineRecords(), metrics);
    const trace = fig.data.find((t) => t.name === NAME)!;
    const running = fig.data.find((t) => t.name === 'running (requests)')!;
    expect(trace.yaxis).toBe(running.yaxis);
    expect(trace.y).toEqual(metrics.map((m) => m.swapped));
    expect(trace.x).toEqual(metrics.map((m) => m.tMs / 1000));
    expect(trace.line).toMatchObject({ shape: 'hv' });
  });

  it('is absent when no sample carries it (V1, the simulator), even when asked for', () => {
    const metrics = metricsSamples();
    expect(hasSwapped(metrics)).toBe(false);
    expect(names(metrics)).not.toContain(NAME);
    expect(names(metrics, { series: ['running', 'waiting', 'swapped', 'kvUsage'] })).not.toContain(NAME);
    // Asking for it changes nothing else: the same traces and panels as without it.
    const without = serverTimeline(timelineRecords(), metrics, { series: ['running', 'waiting', 'kvUsage'] });
    const asked = serverTimeline(timelineRecords(), metrics, { series: ['running', 'waiting', 'swapped', 'kvUsage'] });
    expect(asked.data.map((t) => [t.name, t.yaxis])).toEqual(without.data.map((t) => [t.name, t.yaxis]));
    expect(Object.keys(asked.layout).filter((k) => k.startsWith('yaxis'))).toEqual(
      Object.keys(without.layout).filter((k) => k.startsWith('yaxis')),
    );
  });

  it('appears when asked for and present, and a single sample with it is enough', () => {
    const one = metricsSamples().map((m, i) => (i === 2 ? { ...m, swapped: 4 } : m));
    expect(names(one, { series: ['running', 'swapped'] })).toContain(NAME);
    const trace = serverTimeline(timelineRecords(), one, { series: ['swapped'] }).data.find((t) => t.name === NAME)!;
    expect(trace.y).toEqual([4]);
  });
});
