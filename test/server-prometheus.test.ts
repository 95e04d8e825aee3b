import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PromRegistry } from '../src/sim/http/prom';
import { histogramDelta, histogramQuantile, readHistogram } from '../src/observe/histogram';
import {
  findFamily,
  parsePromFloat,
  parsePrometheus,
  pickSamples,
  pickValue,
  PrometheusParseError,
  sumValues,
} from '../src/observe/prometheus';

const fixture = (name: string) => readFileSync(join(__dirname, 'fixtures', name), 'utf8');
const M = 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4';

describe('parsePrometheus on vLLM text', () => {
  const fams = parsePrometheus(fixture('vllm-metrics-v1.prom'));

  it('reads HELP, TYPE and names with colons', () => {
    const f = findFamily(fams, 'vllm:num_requests_running')!;
    expect(f.type).toBe('gauge');
    expect(f.help).toBe('Number of requests in model execution batches.');
    expect(f.samples).toEqual([{ name: 'vllm:num_requests_running', labels: { engine: '0', model_name: M }, value: 7 }]);
  });

  it("groups a histogram's _bucket/_count/_sum into one family, le as a label", () => {
    const f = findFamily(fams, 'vllm:time_to_first_token_seconds')!;
    expect(f.type).toBe('histogram');
    expect(f.samples.map((s) => s.name)).toEqual([
      ...Array(5).fill('vllm:time_to_first_token_seconds_bucket'),
      'vllm:time_to_first_token_seconds_count',
      'vllm:time_to_first_token_seconds_sum',
    ]);
    expect(f.samples[4].labels).toEqual({ engine: '0', le: '+Inf', model_name: M });
    // prometheus_client writes _created as its own gauge family in format 0.0.4.
    expect(findFamily(fams, 'vllm:time_to_first_token_seconds_created')!.samples[0].value).toBe(1768731088.2);
  });

  it('keeps counters under their _total name; picks by labels in any order', () => {
    expect(findFamily(fams, 'vllm:request_success_total')!.type).toBe('counter');
    expect(pickValue(fams, 'vllm:request_success_total', { finished_reason: 'length' })).toBe(131);
    expect(pickValue(fams, 'vllm:request_success_total', { model_name: M, finished_reason: 'stop', engine: '0' })).toBe(120);
    expect(sumValues(fams, 'vllm:request_success_total')).toBe(251);
    expect(pickValue(fams, 'vllm:request_success_total', { finished_reason: 'error' })).toBeUndefined();
    expect(pickValue(fams, 'vllm:no_such_metric')).toBeUndefined();
    expect(pickSamples(fams, 'vllm:request_success_total')).toHaveLength(3);
  });

  it('reads cache_config_info labels', () => {
    const [s] = pickSamples(fams, 'vllm:cache_config_info');
    expect(s.labels).toMatchObject({
      num_gpu_blocks: '9362',
      block_size: '16',
      enable_prefix_caching: 'True',
      num_cpu_blocks: 'None',
    });
  });
});

describe('parsePrometheus, format corners', () => {
  it('unescapes \\\\, \\" and \\n in label values and \\\\, \\n in HELP', () => {
    const text = [
      '# HELP odd A help with a \\\\ backslash\\nand a second line',
      '# TYPE odd gauge',
      'odd{path="C:\\\\models\\\\qwen",msg="say \\"hi\\"\\nbye",empty=""} 1',
    ].join('\n');
    const [f] = parsePrometheus(text);
    expect(f.help).toBe('A help with a \\ backslash\nand a second line');
    expect(f.samples[0].labels).toEqual({ path: 'C:\\models\\qwen', msg: 'say "hi"\nbye', empty: '' });
  });

  it('reads NaN, ±Inf, exponents, signs and optional timestamps', () => {
    const text = [
      'a NaN',
      'b +Inf',
      'c -Inf',
      'd 1.7687310882e+09',
      'e 1e-05',
      'f -3.5E2 1716000000123',
      'g{x="1"} 42 -5',
      'h{ x = "1" , y="2", } 7',
    ].join('\n');
    const fams = parsePrometheus(text);
    const v = (n: string) => pickValue(fams, n);
    expect(v('a')).toBeNaN();
    expect(v('b')).toBe(Infinity);
    expect(v('c')).toBe(-Infinity);
    expect(v('d')).toBe(1768731088.2);
    expect(v('e')).toBe(0.00001);
    expect(v('f')).toBe(-350);
    expect(pickSamples(fams, 'f')[0].timestampMs).toBe(1716000000123);
    expect(pickSamples(fams, 'g')[0].timestampMs).toBe(-5);
    expect(pickSamples(fams, 'h')[0].labels).toEqual({ x: '1', y: '2' });
    expect(fams.every((f) => f.type === 'untyped')).toBe(true);
  });

  it('groups OpenMetrics-style counter and histogram series (_total, _created) under the declared name', () => {
    const text = [
      '# TYPE vllm:prompt_tokens counter',
      '# HELP vllm:prompt_tokens Prefill tokens.',
      'vllm:prompt_tokens_total{engine="0"} 5.0',
      'vllm:prompt_tokens_created{engine="0"} 1.7e+09',
      '# TYPE lat histogram',
      'lat_bucket{le="1.0"} 1',
      'lat_bucket{le="+Inf"} 2',
      'lat_count 2',
      'lat_sum 3.5',
      'lat_created 1.7e+09',
      '# EOF',
    ].join('\n');
    const fams = parsePrometheus(text);
    expect(fams.map((f) => [f.name, f.type, f.samples.length])).toEqual([
      ['vllm:prompt_tokens', 'counter', 2],
      ['lat', 'histogram', 5],
    ]);
  });

  it('accepts comments, blank lines, CRLF and an exemplar', () => {
    const fams = parsePrometheus('# just a comment\r\n\r\n  x{a="b"} 2 # {trace_id="abc"} 1.0\r\n');
    expect(pickValue(fams, 'x', { a: 'b' })).toBe(2);
  });

  it('names the line of malformed input', () => {
    expect(() => parsePrometheus('ok 1\nbad{a="1"')).toThrow(PrometheusParseError);
    expect(() => parsePrometheus('ok 1\nbad{a="1} 2')).toThrow(/line 2: unterminated value of label a/);
    expect(() => parsePrometheus('bad{a="1" 2')).toThrow(/line 1: expected , or } after label a/);
    expect(() => parsePrometheus('x{a=1} 2')).toThrow(/double quotes/);
    expect(() => parsePrometheus('x one')).toThrow(/'one' is not a number/);
    expect(() => parsePrometheus('x')).toThrow(/expected a value/);
    expect(() => parsePrometheus('# TYPE x weird')).toThrow(/unknown metric type 'weird'/);
  });

  it('parsePromFloat refuses what Number() would wrongly accept', () => {
    expect(parsePromFloat('')).toBeNaN();
    expect(parsePromFloat('0x10')).toBeNaN();
    expect(parsePromFloat('.5')).toBe(0.5);
  });
});

describe("the simulator's registry output round-trips", () => {
  it("writes a counter's _created as its own gauge family (prometheus_client 0.0.4) and reads a histogram back", () => {
    const reg = new PromRegistry({ engine: '0', model_name: 'm' }, () => 1768731088.25);
    reg.counter('vllm:prompt_tokens', 'Prefill tokens.').inc(5);
    const h = reg.histogram('loadlab:sim_step_lateness_seconds', 'Lateness.', [0.001, 0.005, 0.01]);
    for (const v of [0.0005, 0.002, 0.002, 0.02]) h.observe(v);
    const fams = parsePrometheus(reg.render());
    const counter = findFamily(fams, 'vllm:prompt_tokens_total')!;
    expect(counter.samples.map((s) => [s.name, s.value])).toEqual([['vllm:prompt_tokens_total', 5]]);
    const created = findFamily(fams, 'vllm:prompt_tokens_created')!;
    expect([created.type, created.samples.map((s) => s.value)]).toEqual(['gauge', [1768731088.25]]);
    const hist = readHistogram(fams, 'loadlab:sim_step_lateness_seconds')!;
    expect(hist).toEqual({ le: [0.001, 0.005, 0.01, Infinity], counts: [1, 3, 3, 4], count: 4, sum: 0.0245 });
  });
});

describe('histograms', () => {
  const h = { le: [0.1, 0.2, 0.5, Infinity], counts: [10, 30, 40, 40], count: 40, sum: 6 };

  it('histogramQuantile interpolates as PromQL histogram_quantile', () => {
    expect(histogramQuantile(h, 0.5)).toBeCloseTo(0.15); // rank 20: halfway through (0.1, 0.2]
    expect(histogramQuantile(h, 0.25)).toBeCloseTo(0.1); // rank 10: top of the first bucket
    expect(histogramQuantile(h, 0.1)).toBeCloseTo(0.04); // first bucket starts at 0
    expect(histogramQuantile({ ...h, counts: [0, 0, 0, 5], count: 5 }, 0.99)).toBe(0.5); // +Inf bucket → largest finite bound
    expect(histogramQuantile({ ...h, counts: [0, 0, 0, 0], count: 0 }, 0.5)).toBeNaN();
  });

  it('histogramDelta subtracts scrapes and treats a drop as a reset', () => {
    const later = { ...h, counts: [12, 35, 46, 46], count: 46, sum: 7 };
    expect(histogramDelta(later, h)).toEqual({ le: h.le, counts: [2, 5, 6, 6], count: 6, sum: 1 });
    const restarted = { ...h, counts: [1, 1, 1, 1], count: 1, sum: 0.05 };
    expect(histogramDelta(restarted, h)).toBe(restarted);
  });

  it('readHistogram sums engines', () => {
    const text = [
      '# TYPE t histogram',
      't_bucket{engine="0",le="1.0"} 1',
      't_bucket{engine="0",le="+Inf"} 2',
      't_count{engine="0"} 2',
      't_sum{engine="0"} 3',
      't_bucket{le="1.0",engine="1"} 4',
      't_bucket{le="+Inf",engine="1"} 4',
      't_count{engine="1"} 4',
      't_sum{engine="1"} 1',
    ].join('\n');
    expect(readHistogram(parsePrometheus(text), 't')).toEqual({ le: [1, Infinity], counts: [5, 6], count: 6, sum: 4 });
    expect(readHistogram(parsePrometheus(text), 't', { engine: '1' })!.count).toBe(4);
    expect(readHistogram(parsePrometheus(text), 'absent')).toBeUndefined();
  });
});
