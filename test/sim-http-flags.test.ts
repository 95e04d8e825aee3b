/** `vllm serve` flag parsing (the table in src/vllm/flags.ts) and the Prometheus number format. */
import { describe, expect, it } from 'vitest';
import { formatFlagsHelp, parseServeArgs, SERVE_FLAGS, toServeArgs } from '../src/vllm/flags';
import { buckets125 } from '../src/sim/http/metrics';
import { pyFloat } from '../src/sim/http/prom';
import { pyJsonDumps } from '../src/sim/http/reply';

describe('parseServeArgs', () => {
  it('has vLLM-like defaults: loopback, port 8000', () => {
    const a = parseServeArgs([]);
    expect(a).toMatchObject({ host: '127.0.0.1', port: 8000, statsIntervalS: 10, flags: {} });
    expect(a.model).toBeUndefined();
  });

  it('accepts --flag value, --flag=value, --x/--no-x booleans and a positional model', () => {
    const a = parseServeArgs([
      'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
      '--max-num-seqs',
      '8',
      '--max-num-batched-tokens=512',
      '--no-enable-chunked-prefill',
      '--enable-prefix-caching',
      '--max-model-len',
      '4K',
      '--gpu-memory-utilization',
      '0.9',
      '--preemption-mode',
      'swap',
      '--seed=7',
      '--port',
      '0',
      '--host',
      '0.0.0.0',
      '--served-model-name',
      'qwen',
    ]);
    expect(a.model).toBe('Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4');
    expect(a.port).toBe(0);
    expect(a.host).toBe('0.0.0.0');
    expect(a.flags).toEqual({
      maxNumSeqs: 8,
      maxNumBatchedTokens: 512,
      enableChunkedPrefill: false,
      enablePrefixCaching: true,
      maxModelLen: 4096,
      gpuMemoryUtilization: 0.9,
      preemptionMode: 'swap',
      seed: 7,
      servedModelName: 'qwen',
    });
    expect(parseServeArgs(['--max-model-len', '1k']).flags.maxModelLen).toBe(1000);
    expect(parseServeArgs(['--max-model-len', '25.6k']).flags.maxModelLen).toBe(25600);
  });

  it('throws on an unknown flag, listing the known ones', () => {
    expect(() => parseServeArgs(['--max-num-seqz', '4'])).toThrow(
      /unknown flag --max-num-seqz\. Known flags: .*--max-num-seqs.*--enable-prefix-caching\/--no-enable-prefix-caching/,
    );
  });

  it('names the fix for bad values', () => {
    expect(() => parseServeArgs(['--max-num-seqs', 'many'])).toThrow("--max-num-seqs must be an integer ≥ 1, got 'many'");
    expect(() => parseServeArgs(['--gpu-memory-utilization', '1.5'])).toThrow(
      '--gpu-memory-utilization must be a number in [0.01, 1]',
    );
    expect(() => parseServeArgs(['--preemption-mode', 'evict'])).toThrow('--preemption-mode must be one of recompute, swap');
    expect(() => parseServeArgs(['--max-num-seqs'])).toThrow('--max-num-seqs needs a value');
    expect(() => parseServeArgs(['--enable-prefix-caching=false'])).toThrow('--no-enable-prefix-caching');
    expect(() => parseServeArgs(['--max-model-len', '1.5K'])).toThrow(/no decimals with K\/M\/G\/T/);
  });

  it('toServeArgs is its inverse; target vllm drops simulator-only flags', () => {
    const flags = {
      maxModelLen: 4096,
      maxNumSeqs: 4,
      enableChunkedPrefill: false,
      enablePrefixCaching: true,
      preemptionMode: 'swap' as const,
      swapSpace: 2,
      seed: 3,
      numGpuBlocksOverride: 100,
    };
    const args = toServeArgs(flags);
    expect(parseServeArgs(args).flags).toEqual(flags);
    expect(toServeArgs(flags, { target: 'vllm' })).toEqual([
      '--max-model-len',
      '4096',
      '--max-num-seqs',
      '4',
      '--no-enable-chunked-prefill',
      '--enable-prefix-caching',
      '--num-gpu-blocks-override',
      '100',
    ]);
  });

  it('help lists every flag once', () => {
    const help = formatFlagsHelp();
    for (const f of SERVE_FLAGS) expect(help).toContain(f.cli);
    expect(help).toContain('[simulator only]');
  });
});

describe('Prometheus and Python formatting', () => {
  it('prints floats as prometheus_client does', () => {
    expect(pyFloat(0)).toBe('0.0');
    expect(pyFloat(131)).toBe('131.0');
    expect(pyFloat(0.005)).toBe('0.005');
    expect(pyFloat(2560)).toBe('2560.0');
    expect(pyFloat(Infinity)).toBe('+Inf');
    expect(pyFloat(1768731088.123)).toBe('1.768731088123e+09');
    expect(pyFloat(1234567)).toBe('1.234567e+06');
    expect(pyFloat(0.00005)).toBe('5e-05');
  });

  it("builds vLLM's 1-2-5 buckets", () => {
    expect(buckets125(4096)).toEqual([1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000]);
  });

  it('writes in-stream errors as Python json.dumps', () => {
    expect(
      pyJsonDumps({ error: { message: 'Internal server error', type: 'InternalServerError', param: null, code: 500 } }),
    ).toBe('{"error": {"message": "Internal server error", "type": "InternalServerError", "param": null, "code": 500}}');
    expect(pyJsonDumps('显存')).toBe('"\\u663e\\u5b58"');
  });
});
