/**
 * `vllm bench serve` result files (src/exchange/): import a result written by vLLM's own code
 * (test/fixtures/vllm-bench/, built from vllm/benchmarks/serve.py's result dict), export a run with
 * vLLM's keys, and the live round trip `loadlab run --result-json vllm` → `loadlab import`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importCommand } from '../src/cli/import';
import { runCommand } from '../src/cli/run';
import { importVllmResult } from '../src/exchange/import-vllm';
import { vllmResultOf } from '../src/exchange/vllm-result';
import { VllmResultError } from '../src/exchange/vllm-result-file';
import { listRuns, loadRun } from '../src/run/loader';
import { startSim, type SimHandle } from '../src/sim/start';
import { summarizeRun } from '../src/stats/summary';
import { compareRows, compareTable, latencyCdf, provenanceOf, provenanceSuffix, summaryTable } from '../src/view';
import { capture } from './helpers/cli-io';

const FIXTURES = join(__dirname, 'fixtures', 'vllm-bench');
const DETAILED = join(FIXTURES, 'serve-detailed.json');
const SUMMARY_ONLY = join(FIXTURES, 'serve-summary-only.json');
const fixture = JSON.parse(readFileSync(DETAILED, 'utf8')) as Record<string, unknown>;
const LOADLAB_KEYS = ['loadlab_simulated', 'loadlab_target_kind', 'loadlab_run_id', 'loadlab_status', 'base_url'];
const ALL = { percentileMetrics: ['ttft', 'tpot', 'itl', 'e2el'] as const, metricPercentiles: [50, 90, 99] };

/** |a − b| within 1e-9 relative (float noise of s ↔ ms and of summation order), or both 0. */
function close(a: unknown, b: unknown, what: string): void {
  expect(typeof a, what).toBe('number');
  const x = a as number;
  const y = b as number;
  expect(Math.abs(x - y), `${what}: ${x} vs ${y}`).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(y)));
}

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'loadlab-exchange-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('import a vllm bench serve --save-detailed result', () => {
  it('loads as a run whose summary equals the file’s own aggregates', () => {
    const dir = join(tmp, 'imported');
    importVllmResult(DETAILED, dir);
    const run = loadRun(dir);
    expect(run.problems).toEqual([]);
    const s = run.summary!;
    expect([s.requests, s.completed, s.failed]).toEqual([8, fixture.completed, fixture.failed]);
    expect(s.errors).toEqual({ http_5xx: 1 });
    expect([s.totalPromptTokens, s.totalOutputTokens]).toEqual([fixture.total_input_tokens, fixture.total_output_tokens]);
    expect(s.durationS).toBe(fixture.duration);
    close(s.requestsPerSec, fixture.request_throughput, 'request_throughput');
    close(s.outputTokensPerSec, fixture.output_throughput, 'output_throughput');
    close(s.totalTokensPerSec, fixture.total_token_throughput, 'total_token_throughput');
    const dists = { ttft: s.ttftMs, tpot: s.tpotMs, itl: s.itlMs, e2el: s.e2eMs };
    for (const [m, d] of Object.entries(dists)) {
      close(d.mean, fixture[`mean_${m}_ms`], `mean_${m}_ms`);
      close(d.std, fixture[`std_${m}_ms`], `std_${m}_ms`);
      close(d.p50, fixture[`median_${m}_ms`], `median_${m}_ms`);
      close(d.p90, fixture[`p90_${m}_ms`], `p90_${m}_ms`);
      close(d.p99, fixture[`p99_${m}_ms`], `p99_${m}_ms`);
    }
    // Documented differences: the records' own window is shorter than vLLM's duration (which starts
    // before dispatch and ends after gather), and queue/intended times come from vLLM's queue_times.
    expect(summarizeRun(run.records).durationS).toBeLessThan(fixture.duration as number);
    const queue = (fixture.queue_times as number[]).filter((_, i) => (fixture.errors as string[])[i] === '');
    close(s.queueMs.max, Math.max(...queue) * 1000, 'queue max');
    for (const r of run.records.filter((x) => x.ok)) close(r.ttftFromIntendedMs, r.ttftMs! + r.queueMs, 'ttft from intended');
    const failed = run.records[5];
    expect(failed).toMatchObject({ ok: false, status: 500, chunkMs: [], itlMs: [] });
    expect(failed.error).toEqual({ code: 'http_5xx', message: 'Internal Server Error' });
    // Honest provenance: an import, server unknown, timings said to be reconstructed.
    const m = run.manifest;
    expect(m.target.kind).toBe('import');
    expect('simulated' in m.target).toBe(false);
    expect(m.imported?.timing).toMatch(/^reconstructed from vllm bench serve/);
    expect(m.notes?.join('\n')).toMatch(/server unknown/);
    expect(m.notes?.join('\n')).toMatch(/client health unknown/);
    expect(s.health).toBeUndefined();
  });

  it('exports back to the same keys, in vLLM’s order, with the same values', () => {
    const dir = join(tmp, 'reexport');
    importVllmResult(DETAILED, dir);
    const out = vllmResultOf(loadRun(dir), ALL);
    const keys = Object.keys(out);
    expect(keys.filter((k) => !LOADLAB_KEYS.includes(k))).toEqual(Object.keys(fixture));
    for (const [k, want] of Object.entries(fixture)) {
      const got = out[k];
      if (k === 'generated_texts') {
        expect(got).toEqual((want as string[]).map(() => '')); // documented: LoadLab keeps no output text
      } else if (k === 'start_times') {
        const w = want as number[];
        const g = got as number[];
        for (let i = 1; i < w.length; i++) close(g[i] - g[0], w[i] - w[0], `start_times[${i}] − [0]`); // shifted origin
      } else if (k === 'itls') {
        (want as number[][]).forEach((gaps, i) => {
          expect((got as number[][])[i]).toHaveLength(gaps.length);
          gaps.forEach((g, j) => close((got as number[][])[i][j], g, `itls[${i}][${j}]`));
        });
      } else if (Array.isArray(want) && typeof want[0] === 'number') {
        (want as number[]).forEach((w, i) => close((got as number[])[i], w, `${k}[${i}]`));
      } else if (typeof want === 'number') {
        close(got, want, k);
      } else {
        expect(got, k).toEqual(want);
      }
    }
    expect(out.loadlab_simulated).toBe('unknown');
    expect(out.loadlab_target_kind).toBe('import');
  });

  it('recomputes goodput with the SLO the file was made with (ttft:300) to the file’s request_goodput', () => {
    const run = importVllmResult(DETAILED, join(tmp, 'goodput'), { slo: { ttftMs: 300 } });
    close(run.summary.goodput?.requestsPerSec, fixture.request_goodput, 'request_goodput');
    close(vllmResultOf(loadRun(run.dir)).request_goodput, fixture.request_goodput, 'exported request_goodput');
  });

  it('refuses a summary-only file naming --save-detailed, and other files with the fix', () => {
    expect(() => importVllmResult(SUMMARY_ONLY, join(tmp, 'no'))).toThrow(VllmResultError);
    expect(() => importVllmResult(SUMMARY_ONLY, join(tmp, 'no'))).toThrow(
      /saved without --save-detailed.*--save-result --save-detailed/,
    );
    const appended = join(tmp, 'appended.json');
    writeFileSync(appended, `${readFileSync(SUMMARY_ONLY, 'utf8')}\n${readFileSync(SUMMARY_ONLY, 'utf8')}`);
    expect(() => importVllmResult(appended, join(tmp, 'no'))).toThrow(/holds 2 results.*--append-result/);
    const notResult = join(tmp, 'not.json');
    writeFileSync(notResult, '{"hello": 1}');
    expect(() => importVllmResult(notResult, join(tmp, 'no'))).toThrow(/not a vllm bench serve result/);
    const inf = join(tmp, 'inf.json'); // json.dump writes --burstiness inf as a bare Infinity
    writeFileSync(inf, readFileSync(DETAILED, 'utf8').replace('"burstiness": 1.0', '"burstiness": Infinity'));
    expect(loadRun(importVllmResult(inf, join(tmp, 'inf')).dir).manifest.load.options.burstiness).toBe('inf');
    const noStarts = join(tmp, 'nostarts.json');
    const { start_times: _drop, ...rest } = fixture;
    writeFileSync(noStarts, JSON.stringify(rest));
    expect(() => importVllmResult(noStarts, join(tmp, 'no'))).toThrow(/no start_times.*will not invent send times/);
  });

  it('loadlab import: exit 2 with the fix for a summary-only file; a report labelled imported on success', () => {
    const bad = capture();
    expect(importCommand([SUMMARY_ONLY, '--out', join(tmp, 'cli-no')], bad.io)).toBe(2);
    expect(bad.out.stderr).toMatch(/--save-detailed/);
    const noOut = capture();
    expect(importCommand([DETAILED], noOut.io)).toBe(2);
    expect(noOut.out.stderr).toMatch(/--out DIR is required/);
    const ok = capture();
    expect(importCommand([DETAILED, '--out', join(tmp, 'cli'), '--real'], ok.io)).toBe(0);
    expect(ok.out.stdout).toMatch(/imported from vllm bench serve \(real server\)/);
    expect(loadRun(join(tmp, 'cli')).manifest.target.simulated).toBe(false);
  });
});

describe('lesson 07 sees an imported run as imported', () => {
  it('listRuns/loadRun read it; tables, the server column and chart titles say imported, server unknown', () => {
    const root = join(tmp, 'lesson07');
    importVllmResult(DETAILED, join(root, 'vllm-c2'));
    importVllmResult(DETAILED, join(root, 'vllm-sim'), { simulated: true });
    const listed = listRuns(root);
    expect(listed.map((l) => [l.complete, l.manifest.target.kind])).toEqual([
      [true, 'import'],
      [true, 'import'],
    ]);
    const unknown = loadRun(listed[0].dir);
    const sim = loadRun(listed[1].dir);
    expect(provenanceOf(unknown)).toBe('unknown');
    expect(summaryTable({ summary: unknown.summary!, manifest: unknown.manifest })).toContain(
      '(imported from vllm bench serve, server unknown)</caption>',
    );
    expect(summaryTable({ summary: sim.summary!, manifest: sim.manifest })).toContain(
      '(imported from vllm bench serve, simulated)</caption>',
    );
    const real = { summary: unknown.summary!, manifest: { target: { kind: 'vllm', simulated: false, serverVersion: '0.11.0' } } };
    const items = [
      { label: 'vllm bench', summary: unknown.summary!, manifest: unknown.manifest },
      { label: 'loadlab', ...real },
    ];
    expect(compareRows(items).map((r) => r['服务器 server'])).toEqual(['imported (server unknown)', 'vLLM 0.11.0']);
    expect(compareTable(items)).toContain('(some imported from vllm bench serve, some from an unknown server)</caption>');
    const cdf = latencyCdf([{ label: 'x', values: unknown.records.map((r) => r.ttftMs ?? NaN) }], {
      title: 'TTFT',
      simulated: unknown,
    });
    expect(cdf.layout.title).toEqual({ text: 'TTFT (imported from vllm bench serve, server unknown)' });
    expect(provenanceSuffix([sim, unknown])).toBe(
      ' (imported from vllm bench serve, simulated runs mixed with runs from an unknown server)',
    );
  });
});

describe('live round trip: loadlab run --result-json vllm → loadlab import', () => {
  let sim: SimHandle;
  beforeAll(async () => {
    sim = await startSim();
  }, 60_000);
  afterAll(async () => {
    await sim?.stop();
  });

  it('a bad --result-json fails before any request', async () => {
    const { out, io } = capture();
    const code = await runCommand(
      ['--base-url', sim.baseUrl, '--num-prompts', '1', '--out', join(tmp, 'x'), '--result-json', 'csv'],
      io,
    );
    expect(code).toBe(2);
    expect(out.stderr).toMatch(/--result-json takes vllm .* or vllm:FILE/);
  });

  it('writes every key of vLLM’s file, and imports back to the same requests', { timeout: 90_000 }, async () => {
    const dir = join(tmp, 'live');
    const { out, io } = capture();
    const args = ['--base-url', sim.baseUrl, '--num-prompts', '6', '--request-rate', '50', '--max-concurrency', '2'];
    const report = ['--percentile-metrics', 'ttft,tpot,itl,e2el', '--metric-percentiles', '50,90,99', '--goodput', 'ttft:600000'];
    const code = await runCommand(
      [...args, '--max-tokens', '8', ...report, '--result-json', 'vllm', '--out', dir, '--quiet'],
      io,
    );
    expect(out.stderr).toBe('');
    expect(code).toBe(0);
    expect(out.stdout).toContain(`vllm bench serve result: ${join(dir, 'vllm-result.json')}`);
    const file = JSON.parse(readFileSync(join(dir, 'vllm-result.json'), 'utf8'));
    for (const k of Object.keys(fixture)) expect(file, k).toHaveProperty(k);
    expect(file).toMatchObject({ loadlab_simulated: 'true', backend: 'openai-chat', request_rate: 50, max_concurrency: 2 });
    expect(file.request_goodput).toBeGreaterThan(0);
    expect(file.completed).toBe(6);

    const back = join(tmp, 'live-back');
    importVllmResult(join(dir, 'vllm-result.json'), back);
    const original = loadRun(dir)
      .records.filter((r) => !r.warmup)
      .sort((a, b) => a.index - b.index);
    const imported = loadRun(back);
    expect(imported.problems).toEqual([]);
    expect(imported.manifest.target.simulated).toBe(true); // from the file's loadlab_simulated, said in the notes
    expect(imported.manifest.notes?.join('\n')).toMatch(/from the file's loadlab_simulated metadata/);
    expect(imported.records.map((r) => r.outputTokens)).toEqual(original.map((r) => r.outputTokens));
    imported.records.forEach((r, i) => close(r.ttftMs, original[i].ttftMs, `ttft ${i}`));
    imported.records.forEach((r, i) => close(r.ttftMs! / 1000, file.ttfts[i], `file ttfts[${i}]`));
    expect(imported.records.map((r) => r.outputTokens)).toEqual(file.output_lens);
  });
});

describe('pure pieces, pinned by hand', () => {
  it('vLLM error strings become stable LoadLab codes', async () => {
    const { errorCodeOf } = await import('../src/exchange/vllm-records');
    expect(errorCodeOf('Bad Request')).toEqual({ code: 'http_4xx', status: 400, known: true });
    expect(errorCodeOf('Service Unavailable')).toEqual({ code: 'http_5xx', status: 503, known: true });
    expect(errorCodeOf('Never received a valid chunk to calculate TTFT.This response will be marked as failed!').code).toBe(
      'stream_error',
    );
    expect(errorCodeOf('Traceback …\naiohttp.client_exceptions.ServerDisconnectedError: Server disconnected').code).toBe(
      'connection_reset',
    );
    expect(errorCodeOf('Traceback …\naiohttp.client_exceptions.ClientConnectorError: Cannot connect to host').code).toBe(
      'connection_refused',
    );
    expect(errorCodeOf('timeout: no bytes for 60 s')).toEqual({ code: 'timeout', known: true }); // LoadLab's own export
    expect(errorCodeOf('something else')).toEqual({ code: 'stream_error', known: false });
  });

  it('peaks: one-second buckets of chunk times, and half-open intervals (a departure counts before an arrival)', async () => {
    const { vllmPeaks } = await import('../src/exchange/vllm-peaks');
    // A: chunks at 0.1, 0.2, 1.5 s, ends 1.5; B starts exactly at 1.5 (no overlap), chunks at 1.6, 1.7.
    const a = { startS: 0, ttftS: 0.1, itlS: [0.1, 1.3], latencyS: 1.5 };
    const b = { startS: 1.5, ttftS: 0.1, itlS: [0.1], latencyS: 0.2 };
    expect(vllmPeaks([a, b])).toEqual({ maxOutputTokensPerS: 3, maxConcurrentRequests: 1 });
    expect(vllmPeaks([a, { ...b, startS: 1.4 }]).maxConcurrentRequests).toBe(2);
    expect(vllmPeaks([])).toEqual({ maxOutputTokensPerS: 0, maxConcurrentRequests: 0 });
  });
});
