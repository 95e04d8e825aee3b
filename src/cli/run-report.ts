/**
 * What `loadlab run` prints once the run is saved: the target (simulated or real, from the run's
 * own manifest), the load, the latency table (LoadLab's or vLLM's `--metric-percentiles` one, with
 * `--ci` intervals), what the server's `/metrics` said (`--metrics-interval`), and the stop rule
 * (`--duration`).
 */

import type { DurationStopRule } from '../runner/runner-stop';
import type { RunResult } from '../runner/runner';
import type { StampLag } from '../client-stall';
import { formatPercentileTable } from './percentile-table';
import { formatLatencyTable, formatRunReport } from './report';
import type { RunArgs } from './run-args';
import { formatServerLine } from './server-line';

/** `--duration 60 s: issued 532 of at most 10000 requests before the deadline; …`, or undefined without a stop rule. */
export function formatStopLine(rule: DurationStopRule | undefined): string | undefined {
  if (rule?.rule !== 'duration') return undefined;
  const why =
    rule.stoppedBy === 'duration'
      ? 'the deadline came first; requests in flight then finished and are counted'
      : rule.stoppedBy === 'count'
        ? 'all were issued before the deadline'
        : 'interrupted before the deadline';
  return `--duration ${rule.durationMs / 1000} s: issued ${rule.issued} of at most ${rule.maxRequests} requests (${why})`;
}

/** The report printed after a run; `loadLabel` describes the load (shape, requests, warm-up). */
export function runReport(result: RunResult, loadLabel: string, args: RunArgs): string {
  const t = result.manifest.target;
  const latencyTable = args.percentiles
    ? formatPercentileTable(result.records, args.percentiles, { ci: args.ci })
    : formatLatencyTable(result.summary, { records: result.records, ci: args.ci });
  const serverLine =
    args.metricsIntervalMs === undefined
      ? undefined
      : (formatServerLine(result.metrics ?? [], t.simulated === true) ?? 'no /metrics sample could be read during the run');
  const stopLine = formatStopLine(result.manifest.load.options.stopRule as DurationStopRule | undefined);
  return formatRunReport({
    summary: result.summary,
    dir: result.dir,
    status: result.manifest.status,
    targetLabel: `${t.kind}${t.simulated ? ' (simulated)' : ''} ${t.baseUrl} model ${t.model}`,
    loadLabel,
    warnings: result.summary.health?.warnings ?? [],
    ...clientLine(result.summary.health?.clientStampLag, result.manifest.client?.cpuSplit as { note?: string } | undefined),
    latencyTable,
    ...(serverLine ? { serverLine } : {}),
    ...(stopLine ? { stopLine } : {}),
  });
}

/**
 * Against the simulator: how late the client stamped the token chunks it sent (src/runner/stamp-lag.ts),
 * and where its load thread ran (src/runner/load-cpus.ts).
 */
function clientLine(l: StampLag | undefined, split: { note?: string } | undefined): { clientLine?: string } {
  if (!l) return {};
  return {
    clientLine:
      `chunks stamped p50 ${l.p50Ms.toFixed(2)} / p99 ${l.p99Ms.toFixed(2)} / max ${l.maxMs.toFixed(1)} ms after the simulator ` +
      `sent them (${l.chunks} chunks); ITL p99 ${l.itlP99Ms.measured.toFixed(1)} ms measured, ${l.itlP99Ms.sent.toFixed(1)} ms as sent` +
      (split?.note ? `; ${split.note}` : ''),
  };
}
