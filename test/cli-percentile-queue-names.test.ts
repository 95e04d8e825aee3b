/**
 * vLLM's newer `--percentile-metrics` names (vllm/benchmarks/serve.py): `client_queue_time` is
 * LoadLab's client queue row, `e2el_including_client_queue` is E2EL from the intended send time;
 * the table says how they were timed. Pure: hand-built records in, text out.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatPercentileTable, metricSamples, QUEUE_NOTE } from '../src/cli/percentile-table';
import { runCommand } from '../src/cli/run';
import { PERCENTILE_METRICS, percentileFlags } from '../src/cli/run-dataset-args';
import { UsageError } from '../src/cli/usage-error';
import { startScriptedServer } from './helpers/sse-server';
import { rec } from './helpers/view-fixtures';

const records = [
  rec(0, { intended: 0, start: 10, chunks: [30, 40, 50] }),
  rec(1, { intended: 100, start: 100, chunks: [120, 125] }),
  rec(2, { intended: 200, start: 260, chunks: [300, 310, 330, 345] }),
  rec(3, { intended: 300, start: 390, chunks: [400], ok: false }),
  rec(4, { intended: 0, start: 0, chunks: [5, 6], warmup: true }),
];

describe('--percentile-metrics: client_queue_time and e2el_including_client_queue', () => {
  it('are accepted, in the order given, next to the older names', () => {
    expect(PERCENTILE_METRICS).toEqual(['ttft', 'tpot', 'itl', 'e2el', 'client_queue_time', 'e2el_including_client_queue']);
    expect(percentileFlags({ 'percentile-metrics': 'e2el_including_client_queue,ttft,client_queue_time' })).toEqual({
      metrics: ['e2el_including_client_queue', 'ttft', 'client_queue_time'],
      percentiles: [99],
    });
    expect(() => percentileFlags({ 'percentile-metrics': 'ttft,queue_time' })).toThrow(UsageError);
    expect(() => percentileFlags({ 'percentile-metrics': 'queue_time' })).toThrow(
      "unknown metric 'queue_time'; use a comma list of ttft, tpot, itl, e2el, client_queue_time, e2el_including_client_queue",
    );
  });

  it('client_queue_time is queueMs; e2el_including_client_queue is the last token chunk minus the intended send time', () => {
    const ok = records.filter((r) => r.ok && !r.warmup);
    expect(metricSamples(records, 'client_queue_time')).toEqual(ok.map((r) => r.queueMs));
    expect(metricSamples(records, 'client_queue_time')).toEqual(metricSamples(records, 'queue'));
    const incl = metricSamples(records, 'e2el_including_client_queue');
    expect(incl).toEqual(ok.map((r) => r.chunkMs[r.chunkMs.length - 1] - r.intendedStartMs));
    // Queue-inclusive E2EL is never below E2EL (queueMs ≥ 0 here).
    const e2e = metricSamples(records, 'e2el');
    incl.forEach((x, i) => expect(x).toBeGreaterThanOrEqual(e2e[i]));
  });

  it('the table shows the queue row once, the E2EL-from-intended row, and says how they were timed', () => {
    const text = formatPercentileTable(records, {
      metrics: ['ttft', 'client_queue_time', 'e2el_including_client_queue'],
      percentiles: [50, 99],
    });
    const rows = text.split('\n').map((l) => l.split(/\s{2,}/)[0]);
    expect(rows.filter((l) => l === 'queue (client)')).toHaveLength(1);
    expect(rows.slice(1, 5)).toEqual(['TTFT', 'queue (client)', 'E2EL from intended', 'TTFT from intended']);
    expect(text).toMatch(/^E2EL from intended\s+3\s/m);
    expect(text.endsWith(QUEUE_NOTE)).toBe(true);
    expect(QUEUE_NOTE).toContain('closed loop');
    const plain = formatPercentileTable(records, { metrics: ['ttft', 'e2el'], percentiles: [99] });
    expect(plain).not.toContain(QUEUE_NOTE);
    expect(plain.split('\n').map((l) => l.split(/\s{2,}/)[0])).toEqual([
      'metric (ms)',
      'TTFT',
      'E2EL',
      'queue (client)',
      'TTFT from intended',
    ]);
  });

  it('loadlab run prints them and records the choice in the manifest', { timeout: 60_000 }, async () => {
    const server = await startScriptedServer({ firstTokenDelayMs: 5, gapMs: 5, tokens: 3 });
    const tmp = mkdtempSync(join(tmpdir(), 'loadlab-qnames-'));
    try {
      const out = { stdout: '', stderr: '' };
      const io = {
        stdout: { write: (x: string) => ((out.stdout += x), true) } as unknown as NodeJS.WritableStream,
        stderr: { write: (x: string) => ((out.stderr += x), true) } as unknown as NodeJS.WritableStream,
      };
      const dir = join(tmp, 'run');
      const argv = ['--base-url', server.url, '--request-rate', '40', '--max-concurrency', '1', '--num-prompts', '6'];
      const metrics = 'ttft,client_queue_time,e2el_including_client_queue';
      const code = await runCommand([...argv, '--percentile-metrics', metrics, '--out', dir, '--quiet'], io);
      expect(out.stderr).toBe('');
      expect(code).toBe(0);
      expect(out.stdout).toMatch(/^queue \(client\)\s+6\s/m);
      expect(out.stdout).toMatch(/^E2EL from intended\s+6\s/m);
      expect(out.stdout).toContain(QUEUE_NOTE);
      const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
      expect(m.workload.percentileMetrics).toEqual(['ttft', 'client_queue_time', 'e2el_including_client_queue']);
    } finally {
      await server.close();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
