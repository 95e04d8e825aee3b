/**
 * Lessons 05 and 06's narrative builders (src/lesson/story-05.ts, story-06.ts) on synthetic
 * samples: every comparison of two runs carries the interval of its difference, the simulator
 * gets "nothing to watch" instead of a GPU reading, and the sentences follow the data.
 */
import { describe, expect, it } from 'vitest';
import { gpuWatchNote, kvPredictionSentences, kvVerdictSentences, recoverySentences, type KvPoint } from '../src/lesson/story-05';
import { prefixVerdictSentences, type PrefixPoint } from '../src/lesson/story-06';

/** `n` evenly spread values from `from`, step `step`. */
const spread = (n: number, from: number, step = 1) => Array.from({ length: n }, (_, i) => from + i * step);

const kv = (label: string, preemptions: number, ttftFrom: number, itlFrom: number): KvPoint => ({
  label,
  preemptions,
  maxKv: preemptions ? 0.99 : 0.35,
  maxRunning: preemptions ? 33 : 60,
  stalls: preemptions ? 2 : 0,
  courseTpot: spread(60, 40, 0.3),
  benchTpot: spread(60, 30, 0.2),
  itl: spread(600, itlFrom, 0.05),
  ttft: spread(60, ttftFrom, 50),
});

describe('story-05: KV pressure', () => {
  const fits = kv('fits', 0, 100, 10);
  const tight = kv('tight', 3, 100, 10);
  const input = {
    fits,
    recompute: tight,
    all: [fits, tight],
    fitUtil: 0.95,
    tightBlocks: 3271,
    peakFit: 30,
    promptsThatFit: 34,
    stallMs: 417,
    drainMs: 9000,
    fullStepMs: 208,
    outputTokens: 200,
  };

  it('reads the two points, the course rule and queueing, each comparison with its interval', () => {
    const s = kvVerdictSentences(input);
    expect(s).toHaveLength(4);
    expect(s[0]).toContain('抢占 0 次');
    expect(s[0]).toContain('与计算器的预测一致');
    expect(s[1]).toContain('预测的抢占发生了');
    expect(s[2]).toContain('没有一次超过 200 ms');
    expect(s[2]).toContain('1 个测量点');
    expect(s[2]).toContain('95% 区间');
    // Identical samples: no meaningful change within the stated ±25 %.
    expect(s[3]).toContain('没有实质变化');
    expect(s[3]).toContain('95% 区间');
  });

  it('says when the course rule holds', () => {
    const slow = { ...tight, courseTpot: spread(60, 150, 5) };
    expect(kvVerdictSentences({ ...input, recompute: slow, all: [fits, slow] })[2]).toContain('规则在 tight 上成立');
  });

  it('on the simulator there is nothing to watch; on a GPU, the columns and the samples', () => {
    expect(gpuWatchNote({ simulated: true, gpuSamples: 0 }).join('')).toContain('没有可看的');
    const real = gpuWatchNote({ simulated: false, gpuSamples: 120 }).join('');
    expect(real).toContain('rxpci');
    expect(real).toContain('120 个');
    expect(real).toContain('docs/autodl.md');
    expect(gpuWatchNote({ simulated: false, gpuSamples: 0 }).join('')).toContain('不会编造');
  });
});

describe('story-05: predictions and recovery', () => {
  it('predicts preemption only when more prompts fit than requests fit at their peak', () => {
    const x = {
      n: 60,
      fitUtil: 0.95,
      fitTokens: 270_000,
      demandTokens: 104_000,
      weightsGiB: 5.3,
      tightBlocks: 3271,
      peakFit: 30,
      blocksPerRequest: 109,
      blockSize: 16,
      promptBlocks: 96,
      outputTokens: 200,
      promptsThatFit: 34,
      admitSteps: 26,
      util04Blocks: 1500,
      minUtil: 0.33,
      maxModelLen: 4096,
    };
    expect(kvPredictionSentences(x)[1]).toContain('一定会有请求被抢占');
    expect(kvPredictionSentences({ ...x, promptsThatFit: 30 })[1]).toContain('预测不会抢占');
  });

  it('recompute alone without a swap point; with one, an ITL verdict with its interval', () => {
    const rec = { ...kv('recompute', 3, 100, 10), itl: [...spread(599, 10, 0.05), 1800] };
    const base = { recompute: rec, recomputeMs: 150, swapRoundTripMs: 8.2, swapBlocks: {} };
    const alone = recoverySentences(base);
    expect(alone.join('')).toContain('没有测 swap');
    const swap = { ...kv('swap', 3, 100, 10), itl: [...spread(599, 10, 0.05), 1700] };
    const both = recoverySentences({ ...base, swap, swapHow: 'simulated', swapBlocks: { out: 400, in: 400 } });
    expect(both[0]).toContain('换出 400 块');
    expect(both[1]).toContain('95% 区间');
    expect(both[2]).toContain('模拟器');
  });
});

describe('story-06: prefix caching', () => {
  const point = (label: string, from: number, hits: number): PrefixPoint => ({
    label,
    ttftAfterFirst: spread(23, from, 2),
    firstTtftMs: 220,
    queriedTokens: 48_000,
    hitTokens: hits,
  });
  const input = {
    unique: point('unique', 200, 0),
    shared: point('shared', 20, 45_000),
    nocache: point('nocache', 202, 0),
    sharedHitRateAfterFirst: 0.985,
    predictedHitTokens: 2016,
    promptTokens: 2040,
    predHitMs: 18,
    predMissMs: 210,
  };

  it('hit rate against the prediction, TTFT with intervals, the control within ±30 %', () => {
    const s = prefixVerdictSentences(input);
    expect(s).toHaveLength(4);
    expect(s[0]).toContain('与预测一致');
    expect(s[1]).toContain('TTFT p50：shared 比 unique 低');
    expect(s[1]).toContain('95% 区间');
    expect(s[2]).toContain('没有实质变化');
    expect(s[3]).toContain('命中 0 token');
  });

  it('without the token counters it says so instead of a hit rate', () => {
    expect(prefixVerdictSentences({ ...input, sharedHitRateAfterFirst: Number.NaN })[0]).toContain('读不出命中率');
  });
});
