import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seededRng } from '../src/rng';
import { loadTokenizer } from '../src/sim/http/tokens';
import { DatasetError, loadDataset } from '../src/workload/datasets/index';
import { drawLengths, uniformAround } from '../src/workload/datasets/lengths';
import { samplePrefixRepetition } from '../src/workload/datasets/prefix';
import { sampleRandom } from '../src/workload/datasets/random';
import { conversationRequests, readShareGpt } from '../src/workload/datasets/sharegpt';
import { SOURCE_TEXT, SOURCE_TOKENS_PER_CHAR } from '../src/workload/datasets/text';

const SAMPLE = join(__dirname, '..', 'datasets', 'sample-sharegpt.json');
const tmp = mkdtempSync(join(tmpdir(), 'loadlab-datasets-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const f = join(tmp, name);
  writeFileSync(f, text);
  return f;
};
const userText = (r: { messages?: Array<{ content: string }> }): string => r.messages!.at(-1)!.content;
const caught = (f: () => unknown): DatasetError => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(DatasetError);
    return err as DatasetError;
  }
  throw new Error('expected a DatasetError');
};

describe('sharegpt (vllm/benchmarks/datasets/sharegpt.py)', () => {
  it('first turns of the shipped sample, seeded: same seed same requests, another seed another order', () => {
    const a = loadDataset({ name: 'sharegpt', path: SAMPLE, numPrompts: 8, seed: 0 });
    expect(a.requests).toHaveLength(8);
    const firsts = new Set(readShareGpt(SAMPLE).map((c) => c.turns[0].content));
    for (const r of a.requests) {
      expect(r.messages).toHaveLength(1);
      expect(firsts.has(userText(r))).toBe(true);
      expect(r.maxTokens).toBeGreaterThanOrEqual(4);
    }
    expect(loadDataset({ name: 'sharegpt', path: SAMPLE, numPrompts: 8, seed: 0 }).requests).toEqual(a.requests);
    expect(loadDataset({ name: 'sharegpt', path: SAMPLE, numPrompts: 8, seed: 1 }).requests).not.toEqual(a.requests);
  });

  it("drops pairs vLLM's is_valid_sequence rejects, and oversamples to --num-prompts", () => {
    const d = loadDataset({ name: 'sharegpt', path: SAMPLE, numPrompts: 50, seed: 3 });
    expect(d.requests).toHaveLength(50);
    expect(d.requests.some((r) => userText(r) === 'hi')).toBe(false);
    expect(d.info).toMatchObject({ dataset: 'sharegpt', conversations: 21, dropped: 1 });
    const fixed = loadDataset({ name: 'sharegpt', path: SAMPLE, numPrompts: 5, outputLen: 2, ignoreEos: true });
    expect(fixed.requests.every((r) => r.maxTokens === 2 && r.fixedOutput === true)).toBe(true);
  });

  it('multi-turn: one request per user turn, carrying the earlier turns as history', () => {
    const conv = readShareGpt(SAMPLE).find((c) => c.turns.length === 6)!;
    const turns = conversationRequests(conv);
    expect(turns.map((t) => t.tag)).toEqual(['turn-1', 'turn-2', 'turn-3']);
    expect(turns[2].history).toEqual(conv.turns.slice(0, 4));
    expect(turns[0].history).toBeUndefined();
  });

  it('a malformed file names the file and the line of the syntax error', () => {
    const f = file(
      'broken.json',
      '[\n {"id": "a", "conversations": [\n  {"from": "human", "value": "x"}\n  {"from": "gpt", "value": "y"}]}\n]\n',
    );
    const e = caught(() => loadDataset({ name: 'sharegpt', path: f, numPrompts: 1 }));
    expect(e.message).toContain(`${f} line 4: not valid JSON`);
    expect(e.message).toContain('a ShareGPT file is a JSON array of');
  });

  it('a wrong shape names the entry, its line and the fix', () => {
    const f = file(
      'shape.json',
      '[\n {"id": "a", "conversations": []},\n {"id": "b",\n  "conversations": [{"from": "human", "value": 3}]}\n]',
    );
    expect(caught(() => readShareGpt(f)).message).toBe(
      `${f} line 3: entry 1 (id b) turn 0: needs a string "value", got {"from":"human","value":3}`,
    );
    const g = file('role.json', '[{"conversations": [{"from": "robot", "value": "x"}]}]');
    expect(caught(() => readShareGpt(g)).message).toContain(
      'line 1: entry 0 (id #0) turn 0: unknown "from" "robot"; use human, gpt or system',
    );
    expect(caught(() => readShareGpt(file('obj.json', '{"a": 1}'))).message).toContain('expected a JSON array at the top');
    expect(caught(() => readShareGpt(join(tmp, 'missing.json'))).message).toContain('(no such file); check --dataset-path');
  });
});

describe('custom JSONL (vllm/benchmarks/datasets/custom.py)', () => {
  const good = file(
    'p.jsonl',
    '{"prompt": "什么是 KV cache？", "output_len": 32}\n\n{"prompt": "What is TTFT?"}\n{"prompt": "解释分页注意力"}\n',
  );
  it('per-line output_len, else --custom-output-len (default 256); seeded shuffle and oversampling', () => {
    const d = loadDataset({ name: 'jsonl', path: good, numPrompts: 6, seed: 2 });
    expect(d.name).toBe('custom');
    expect(d.requests).toHaveLength(6);
    for (const r of d.requests) expect(r.maxTokens).toBe(userText(r).startsWith('什么') ? 32 : 256);
    expect(new Set(d.requests.slice(0, 3).map(userText)).size).toBe(3);
    expect(loadDataset({ name: 'custom', path: good, numPrompts: 6, seed: 2 }).requests).toEqual(d.requests);
    expect(loadDataset({ name: 'custom', path: good, numPrompts: 1, outputLen: 7, seed: 5 }).requests[0].maxTokens).toBeOneOf([
      32, 7,
    ]);
  });

  it('a malformed line is named with the fix', () => {
    const bad = file('bad.jsonl', '{"prompt": "a"}\n{"prompt": "b",}\n');
    const e = caught(() => loadDataset({ name: 'custom', path: bad, numPrompts: 1 }));
    expect(e.message).toMatch(
      new RegExp(`^${bad} line 2: not valid JSON \\(.*\\); each line must be one JSON object like \\{"prompt"`),
    );
    const noPrompt = file('np.jsonl', '{"prompt": "a"}\n{"text": "b"}\n');
    expect(caught(() => loadDataset({ name: 'custom', path: noPrompt, numPrompts: 1 })).message).toContain(
      `${noPrompt} line 2: "prompt" must be a non-empty string`,
    );
    const badLen = file('bl.jsonl', '{"prompt": "a", "output_len": 0}\n');
    expect(caught(() => loadDataset({ name: 'custom', path: badLen, numPrompts: 1 })).message).toContain(
      'line 1: "output_len" must be an integer ≥ 1',
    );
    expect(caught(() => loadDataset({ name: 'custom', path: file('e.jsonl', '\n\n'), numPrompts: 1 })).message).toContain(
      'is empty',
    );
  });
});

describe('random (vllm/benchmarks/datasets/random.py)', () => {
  it("lengths within vLLM's range-ratio bounds; seeded; distinct prompt starts", () => {
    const d = loadDataset({ name: 'random', numPrompts: 40, inputLen: 100, outputLen: 20, rangeRatio: 0.5, seed: 7 });
    const outs = d.requests.map((r) => r.maxTokens!);
    expect(Math.min(...outs)).toBeGreaterThanOrEqual(10);
    expect(Math.max(...outs)).toBeLessThanOrEqual(30);
    expect(new Set(outs).size).toBeGreaterThan(5);
    expect(new Set(d.requests.map((r) => userText(r).slice(0, 4))).size).toBe(40);
    expect(loadDataset({ name: 'random', numPrompts: 40, inputLen: 100, outputLen: 20, rangeRatio: 0.5, seed: 7 })).toEqual(d);
    const fixed = loadDataset({ name: 'random', numPrompts: 3 });
    expect(fixed.requests.map((r) => r.maxTokens)).toEqual([128, 128, 128]);
    expect(fixed.info.estimatedPromptTokens).toBe(3 * 1024);
  });

  it('uniformAround is vLLM get_sampling_params: [floor(L(1−r)), ceil(L(1+r))]', () => {
    expect(uniformAround(100, 0.25)).toEqual({ kind: 'uniform', min: 75, max: 125 });
    expect(uniformAround(3, 0.9)).toEqual({ kind: 'uniform', min: 1, max: 6 });
    expect(uniformAround(5, 0)).toEqual({ kind: 'fixed', value: 5 });
    expect(() => uniformAround(5, 1)).toThrow("range ratio must be in [0, 1) (vLLM's --random-range-ratio)");
  });

  it('normal and lognormal lengths have about the asked mean (2000 seeded draws)', () => {
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const n = drawLengths(seededRng(1), { kind: 'normal', mean: 300, std: 50 }, 2000);
    const ln = drawLengths(seededRng(1), { kind: 'lognormal', mean: 300, std: 150 }, 2000);
    expect(Math.abs(mean(n) - 300)).toBeLessThan(10);
    expect(Math.abs(mean(ln) - 300)).toBeLessThan(15);
    expect(Math.min(...ln)).toBeGreaterThanOrEqual(1);
    expect(() => drawLengths(seededRng(1), { kind: 'normal', mean: 0, std: 1 }, 1)).toThrow('length.mean must be a number > 0');
  });

  it("prompt lengths against Qwen2.5's BPE (the simulator's tokenizer): the measured rate holds", async () => {
    const tok = await loadTokenizer();
    expect(tok.encodePrompt(SOURCE_TEXT).length / SOURCE_TEXT.length).toBeCloseTo(SOURCE_TOKENS_PER_CHAR, 3);
    for (const [len, tolerance] of [
      [64, 0.15],
      [1024, 0.02],
    ] as const) {
      const ratios = sampleRandom({ numPrompts: 20, inputLen: len, seed: 1 }).map((s) => tok.encodePrompt(s.prompt).length / len);
      console.log(
        `random ${len} tokens: Qwen count / target from ${Math.min(...ratios).toFixed(3)} to ${Math.max(...ratios).toFixed(3)}`,
      );
      for (const r of ratios) expect(Math.abs(r - 1)).toBeLessThanOrEqual(tolerance);
    }
  });
});

describe('prefix_repetition (vllm/benchmarks/datasets/prefix_repetition.py)', () => {
  it('numPrefixes groups of floor(n/numPrefixes), each sharing exactly its prefix', () => {
    const s = samplePrefixRepetition({ numPrompts: 22, numPrefixes: 4, prefixLen: 60, suffixLen: 20, seed: 4 });
    expect(s).toHaveLength(20);
    const groups = new Map<string, string[]>();
    for (const x of s) groups.set(x.tag!, [...(groups.get(x.tag!) ?? []), x.prompt]);
    expect([...groups.values()].map((g) => g.length)).toEqual([5, 5, 5, 5]);
    const common = (a: string, b: string) => {
      let i = 0;
      while (i < a.length && a[i] === b[i]) i++;
      return i;
    };
    const [g0, g1] = [...groups.values()];
    const prefixChars = common(g0[0], g0[1]);
    expect(prefixChars).toBeGreaterThan(60); // ≈ 60 tokens of Chinese text
    for (const p of g0.slice(1)) expect(common(g0[0], p)).toBeLessThan(prefixChars + 2);
    expect(common(g0[0], g1[0])).toBeLessThan(3);
    expect(samplePrefixRepetition({ numPrompts: 22, numPrefixes: 4, prefixLen: 60, suffixLen: 20, seed: 4 })).toEqual(s);
  });

  it("the shared ratio, and vLLM's error when there are fewer prompts than prefixes", () => {
    const s = loadDataset({
      name: 'prefix-repetition',
      numPrompts: 4,
      prefix: { numPrefixes: 2, sharedRatio: 0.75, inputLen: 400 },
    });
    expect(s.info.estimatedPromptTokens).toBe(4 * 400);
    expect(caught(() => loadDataset({ name: 'prefix_repetition', numPrompts: 3 })).message).toContain(
      'num_requests (3) must be greater than or equal to num_prefixes (10); raise --num-prompts',
    );
  });
});

describe('trace', () => {
  const trace = file(
    't.jsonl',
    [
      '{"timestamp": 1000, "input_length": 50, "output_length": 8}',
      '{"timestamp": 1000, "input_length": 200, "output_length": 16}',
      '{"timestamp": 1500, "input_length": 20, "output_length": 4, "prompt": "自带的提示词"}',
      '{"timestamp": 3000, "input_length": 80, "output_length": 2}',
    ].join('\n'),
  );
  it('timestamps become send offsets from the first; lengths become requests', () => {
    const d = loadDataset({ name: 'trace', path: trace });
    expect(d.atMs).toEqual([0, 0, 500, 2000]);
    expect(d.requests.map((r) => r.maxTokens)).toEqual([8, 16, 4, 2]);
    expect(userText(d.requests[2])).toBe('自带的提示词');
    expect(loadDataset({ name: 'trace', path: trace, numPrompts: 2 }).atMs).toEqual([0, 0]);
    expect(caught(() => loadDataset({ name: 'trace', path: trace, numPrompts: 5 })).message).toContain(
      'a trace is replayed, not oversampled',
    );
  });

  it('bad lines are named', () => {
    const back = file(
      'back.jsonl',
      '{"timestamp": 5, "input_length": 1, "output_length": 1}\n{"timestamp": 4, "input_length": 1, "output_length": 1}',
    );
    expect(caught(() => loadDataset({ name: 'trace', path: back })).message).toContain(
      `${back} line 2: "timestamp" 4 is earlier than the line before (5); sort the trace`,
    );
    const frac = file('frac.jsonl', '{"timestamp": 0, "input_length": 1.5, "output_length": 1}');
    expect(caught(() => loadDataset({ name: 'trace', path: frac })).message).toContain(
      'line 1: "input_length" must be a number ≥ 1 (integer tokens), got 1.5',
    );
  });
});

describe('loadDataset options', () => {
  it('names the fix for a wrong kind, a missing or extra path and a missing count', () => {
    expect(caught(() => loadDataset({ name: 'sonnet' })).message).toBe(
      "unknown dataset 'sonnet'; use one of sharegpt, custom, random, prefix_repetition, trace",
    );
    expect(caught(() => loadDataset({ name: 'sharegpt', numPrompts: 1 })).message).toContain('needs a file: pass --dataset-path');
    expect(caught(() => loadDataset({ name: 'random', path: SAMPLE, numPrompts: 1 })).message).toContain(
      'reads no file; drop --dataset-path',
    );
    expect(caught(() => loadDataset({ name: 'random' })).message).toContain('(--num-prompts N)');
  });

  it('completions requests carry the prompt as text', () => {
    const d = loadDataset({ name: 'random', numPrompts: 2, inputLen: 20, api: 'completions' });
    expect(typeof d.requests[0].prompt).toBe('string');
    expect(d.requests[0].messages).toBeUndefined();
  });
});
