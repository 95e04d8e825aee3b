/**
 * Unit tests of individual V1 scheduler and KV rules, driving `Scheduler` step by step
 * (no clock, no cost model).
 */
import { describe, expect, it } from 'vitest';
import { newSimRequest, type SimRequest } from '../src/sim/engine/engine-request';
import { KvBlockPool, type KvSeq } from '../src/sim/engine/kv';
import { Scheduler } from '../src/sim/engine/scheduler';
import type { EngineConfig, EngineOutput } from '../src/sim/engine/types';

function cfg(over: Partial<EngineConfig> = {}): EngineConfig {
  return {
    maxModelLen: 4096,
    maxNumSeqs: 256,
    maxNumBatchedTokens: 64,
    enableChunkedPrefill: true,
    longPrefillTokenThreshold: 0,
    enablePrefixCaching: true,
    blockSize: 16,
    numGpuBlocks: 1000,
    preemptionMode: 'recompute',
    numCpuBlocks: 0,
    reserveFullIsl: true,
    asyncScheduling: false,
    ...over,
  };
}

let salt = 0;
function req(
  id: string,
  promptLen: number,
  maxTokens = 1000,
  tokenBase = 1000 * (salt + 1),
): SimRequest & { outs: EngineOutput[] } {
  const prompt = Array.from({ length: promptLen }, (_, i) => tokenBase + i);
  const outs: EngineOutput[] = [];
  const r = newSimRequest(
    { id, promptTokenIds: prompt, maxTokens, minTokens: 0, naturalLength: maxTokens, ignoreEos: true },
    0,
    ++salt,
    (o) => outs.push(o),
  );
  return Object.assign(r, { outs });
}

/** schedule + update; returns [id, tokens] in scheduling order. */
function step(s: Scheduler): { plan: [string, number][]; preemptions: number; outputs: string[] } {
  const p = s.schedule();
  const plan = p.scheduled.map((r) => [r.id, r.scheduled] as [string, number]);
  const preemptions = p.preemptions;
  const reqs: SimRequest[] = [];
  const outs: EngineOutput[] = [];
  s.update(0, reqs, outs);
  return { plan, preemptions, outputs: reqs.map((r) => r.id) };
}

describe('V1 schedule(): order and budget', () => {
  it('decodes first (running in list order), then admissions fill the remaining budget', () => {
    const s = new Scheduler(cfg());
    const a = req('a', 10);
    s.add(a);
    expect(step(s)).toMatchObject({ plan: [['a', 10]], outputs: ['a'] });
    s.add(req('b', 100));
    expect(step(s).plan).toEqual([
      ['a', 1],
      ['b', 63],
    ]);
  });

  it('a running partial prefill takes its next chunk ahead of any waiting request', () => {
    const s = new Scheduler(cfg());
    s.add(req('long', 200));
    expect(step(s)).toMatchObject({ plan: [['long', 64]], outputs: [] }); // partial chunk: no output
    s.add(req('short', 10));
    expect(step(s).plan).toEqual([['long', 64]]);
    expect(step(s).plan).toEqual([['long', 64]]);
    expect(step(s)).toMatchObject({
      plan: [
        ['long', 8],
        ['short', 10],
      ],
      outputs: ['long', 'short'],
    });
  });

  it('long_prefill_token_threshold caps running and newly admitted chunks', () => {
    const s = new Scheduler(cfg({ maxNumBatchedTokens: 256, longPrefillTokenThreshold: 32 }));
    s.add(req('a', 100));
    s.add(req('b', 100));
    expect(step(s).plan).toEqual([
      ['a', 32],
      ['b', 32],
    ]);
    s.add(req('c', 10));
    expect(step(s).plan).toEqual([
      ['a', 32],
      ['b', 32],
      ['c', 10],
    ]);
  });

  it('chunked prefill off: a prompt larger than the remaining budget stops admission (break)', () => {
    const off = new Scheduler(cfg({ enableChunkedPrefill: false, maxModelLen: 256, maxNumBatchedTokens: 256 }));
    off.add(req('a', 10));
    off.add(req('b', 10));
    step(off);
    off.add(req('big', 255));
    off.add(req('small', 10));
    expect(step(off).plan).toEqual([
      ['a', 1],
      ['b', 1],
    ]); // 255 > 256 − 2: break; small waits behind it
    expect(off.waiting.size).toBe(2);
    const on = new Scheduler(cfg({ maxModelLen: 256, maxNumBatchedTokens: 256 }));
    on.add(req('a', 10));
    on.add(req('b', 10));
    step(on);
    on.add(req('big', 255));
    on.add(req('small', 10));
    expect(step(on).plan).toEqual([
      ['a', 1],
      ['b', 1],
      ['big', 254],
    ]);
  });

  it('max_num_seqs caps the running set', () => {
    const s = new Scheduler(cfg({ maxNumSeqs: 2 }));
    for (const id of ['a', 'b', 'c']) s.add(req(id, 5));
    expect(step(s).plan.map((x) => x[0])).toEqual(['a', 'b']);
  });
});

describe('preemption (recompute)', () => {
  function fullPool(aMaxTokens = 1000) {
    // 4 usable blocks; a and b each hold 2 blocks once they have 17..32 tokens.
    const s = new Scheduler(cfg({ numGpuBlocks: 5 }));
    const a = req('a', 16, aMaxTokens);
    const b = req('b', 16);
    s.add(a);
    s.add(b);
    step(s); // prefill 16 each → 1 block each, 17 tokens
    step(s); // decode token 17 → second block each: pool full
    expect(s.kv.numFree).toBe(0);
    return { s, a, b };
  }

  it('preempts the newest running request, puts it at the FRONT of waiting, admits nothing that step', () => {
    const { s, a, b } = fullPool();
    const c = req('c', 8);
    s.add(c);
    for (let i = 0; i < 15; i++) step(s); // decodes fill blocks 2 up to 32 tokens; c cannot be admitted (no free block)
    expect(a.computed).toBe(32);
    const r = step(s); // a needs a third block → b (newest) is preempted; its 2 blocks are freed
    expect(r.preemptions).toBe(1);
    expect(r.plan).toEqual([['a', 1]]); // c would fit now, but no admission in a preempting step
    expect(s.running).toEqual([a]);
    expect(s.waiting.peekFront()).toBe(b);
    expect(s.waiting.at(1)).toBe(c);
    expect(b.computed).toBe(0);
    expect(b.numPreemptions).toBe(1);
    expect(s.numPreemptions).toBe(1);
  });

  it('a resumed request re-prefills prompt + generated tokens and can hit its own freed blocks', () => {
    const { s, a, b } = fullPool(18);
    for (let i = 0; i < 16; i++) step(s); // the 16th step preempts b; a then finishes (18 tokens)
    expect(b.status).toBe('waiting');
    expect(a.status).toBe('finished');
    expect(b.outputTokens).toBe(17);
    const q = s.kv.prefixQueries;
    const hits = s.kv.prefixHits;
    // b re-prefills 16 prompt + 17 generated = 33 tokens. Its first block is still cached (16 hit);
    // its second was reused by a's growth, so 17 tokens are recomputed.
    const r = step(s);
    expect(r.plan).toEqual([['b', 17]]);
    expect(b.outputTokens).toBe(18); // the re-prefill completed and sampled the next token
    expect([s.kv.prefixQueries, s.kv.prefixHits]).toEqual([q, hits]); // preempted lookups are not counted
    expect(b.cachedTokens).toBe(0); // cached_tokens reports the first admission
  });

  it('a request that cannot fit even alone preempts itself', () => {
    const s = new Scheduler(cfg({ numGpuBlocks: 3 }));
    const a = req('a', 32);
    s.add(a);
    step(s); // 2 blocks, 33 tokens
    const r = step(s);
    expect(r.preemptions).toBe(1);
    expect(r.plan).toEqual([]);
    expect(s.waiting.peekFront()).toBe(a);
  });
});

describe('KV admission and growth', () => {
  it('allocates incrementally: chunk tokens at admission, one block per 16-token boundary, nothing for max_tokens', () => {
    const s = new Scheduler(cfg());
    const a = req('a', 20, 500);
    s.add(a);
    step(s);
    expect(a.blocks.length).toBe(2);
    for (let i = 0; i < 12; i++) step(s); // computes tokens 21..32
    expect(a.computed).toBe(32);
    expect(a.blocks.length).toBe(2);
    step(s); // token 33
    expect(a.blocks.length).toBe(3);
  });

  it('reserve_full_isl: the whole uncached prompt must fit before the first chunk is admitted', () => {
    const s = new Scheduler(cfg({ numGpuBlocks: 6, maxNumBatchedTokens: 16 })); // 5 usable
    s.add(req('big', 100)); // 7 blocks
    expect(step(s).plan).toEqual([]);
    const s2 = new Scheduler(cfg({ numGpuBlocks: 6, maxNumBatchedTokens: 16, reserveFullIsl: false }));
    s2.add(req('big', 100));
    expect(step(s2).plan).toEqual([['big', 16]]);
  });

  it('kv usage = 1 − free/(numGpuBlocks − 1)', () => {
    const pool = new KvBlockPool({ numGpuBlocks: 11, blockSize: 16, enablePrefixCaching: true, numCpuBlocks: 0 });
    const seq: KvSeq = {
      promptTokenIds: Array.from({ length: 48 }, (_, i) => i),
      salt: 1,
      blocks: [],
      hashes: [],
      registered: 0,
      cpuBlocks: 0,
    };
    expect(pool.usage()).toBe(0);
    expect(pool.allocate(seq, 0, 48)).toBe(true);
    expect(pool.usage()).toBeCloseTo(0.3, 12);
    pool.free(seq);
    expect(pool.usage()).toBe(0); // cached blocks with refcount 0 count as free
    expect(seq.blocks).toEqual([]);
  });
});

describe('prefix cache', () => {
  const pool = () => new KvBlockPool({ numGpuBlocks: 100, blockSize: 16, enablePrefixCaching: true, numCpuBlocks: 0 });
  const seq = (tokens: number[], s = 1): KvSeq => ({
    promptTokenIds: tokens,
    salt: s,
    blocks: [],
    hashes: [],
    registered: 0,
    cpuBlocks: 0,
  });
  const range = (n: number, base = 0) => Array.from({ length: n }, (_, i) => base + i);

  it('hits whole blocks only, capped at num_tokens − 1, and counts tokens', () => {
    const p = pool();
    const first = seq(range(40));
    const out: number[] = [];
    expect(p.findCached(first, 40, true, out)).toBe(0);
    p.allocate(first, 0, 40, out, 40);
    expect(p.findCached(seq(range(32)), 32, true, out)).toBe(16); // full hit capped at 31 → 1 block
    expect(p.findCached(seq(range(33)), 33, true, out)).toBe(32);
    expect(p.findCached(seq([...range(35), 999, 998]), 37, true, out)).toBe(32); // block 3 is not full in the cache
    expect(p.findCached(seq([7, ...range(39)]), 40, true, out)).toBe(0); // chained: a different first block misses all
    expect(p.findCached(seq(range(33)), 33, false, out)).toBe(32); // not counted
    expect(p.prefixQueries).toBe(40 + 32 + 33 + 37 + 40);
    expect(p.prefixHits).toBe(16 + 32 + 32);
  });

  it('freed blocks stay hittable until LRU reuse evicts them (head of the free queue first)', () => {
    const p = new KvBlockPool({ numGpuBlocks: 5, blockSize: 16, enablePrefixCaching: true, numCpuBlocks: 0 });
    const a = seq(range(33));
    p.allocate(a, 0, 33);
    p.free(a);
    const out: number[] = [];
    expect(p.findCached(seq(range(33)), 33, false, out)).toBe(32);
    const b = seq(range(16, 5000), 2);
    p.allocate(b, 0, 16); // takes the LRU head: the 4th, never-used block
    expect(p.findCached(seq(range(33)), 33, false, out)).toBe(32);
    const c = seq(range(16, 6000), 3);
    p.allocate(c, 0, 16); // next head: a's last block (freed first) — not a full block, no hash
    p.allocate(seq(range(16, 7000), 4), 0, 16); // then a's block 1 → evicts its hash
    expect(p.findCached(seq(range(33)), 33, false, out)).toBe(16);
  });

  it('a hit on a block still in use shares it (refcount 2); evictable hits need free room', () => {
    const p = pool();
    const a = seq(range(40));
    p.allocate(a, 0, 40);
    const b = seq(range(40));
    const hits: number[] = [];
    const hit = p.findCached(b, 40, true, hits);
    expect(p.allocate(b, hit, 40 - hit, hits, 40)).toBe(true);
    expect(p.refs(b.blocks[0])).toBe(2);
    expect(p.refs(b.blocks[1])).toBe(2);
    expect(b.blocks[2]).not.toBe(a.blocks[2]);
  });

  it('a waiting request that fails allocation is looked up (and counted) again next step', () => {
    const s = new Scheduler(cfg({ numGpuBlocks: 4 })); // 3 usable
    s.add(req('a', 40)); // 3 blocks
    step(s);
    s.add(req('b', 20));
    step(s);
    step(s);
    expect(s.kv.prefixQueries).toBe(40 + 20 + 20);
  });
});

describe('stop rule and abort', () => {
  function run(input: { maxTokens: number; minTokens: number; naturalLength: number; ignoreEos: boolean }, maxModelLen = 4096) {
    const s = new Scheduler(cfg({ maxModelLen }));
    const outs: EngineOutput[] = [];
    const r = newSimRequest({ id: 'x', promptTokenIds: [1, 2, 3, 4], ...input }, 0, 1, (o) => outs.push(o));
    s.add(r);
    const reqs: SimRequest[] = [];
    for (let i = 0; i < 100 && r.status !== 'finished'; i++) {
      s.schedule();
      s.update(i, reqs, outs);
    }
    return outs;
  }

  it('EOS at naturalLength → stop; masked until minTokens; ignoreEos/maxTokens/max_model_len → length', () => {
    let o = run({ maxTokens: 10, minTokens: 0, naturalLength: 3, ignoreEos: false });
    expect(o.length).toBe(3);
    expect(o[2]).toMatchObject({ outputTokens: 3, finishReason: 'stop' });
    expect(o[0].cachedTokens).toBe(0);
    expect(o[1].cachedTokens).toBeUndefined();
    o = run({ maxTokens: 10, minTokens: 5, naturalLength: 3, ignoreEos: false });
    expect(o.at(-1)).toMatchObject({ outputTokens: 5, finishReason: 'stop' });
    o = run({ maxTokens: 10, minTokens: 0, naturalLength: 3, ignoreEos: true });
    expect(o.at(-1)).toMatchObject({ outputTokens: 10, finishReason: 'length' });
    o = run({ maxTokens: 10, minTokens: 0, naturalLength: 30, ignoreEos: false });
    expect(o.at(-1)).toMatchObject({ outputTokens: 10, finishReason: 'length' });
    o = run({ maxTokens: 100, minTokens: 0, naturalLength: 100, ignoreEos: true }, 10);
    expect(o.at(-1)).toMatchObject({ outputTokens: 6, finishReason: 'length' });
    expect(o.every((x, i) => x.newTokens === 1 && x.outputTokens === i + 1)).toBe(true);
  });

  it('abort frees blocks and drops the request from any queue, even mid-step', () => {
    const s = new Scheduler(cfg({ maxNumBatchedTokens: 256 }));
    const a = req('a', 40);
    const b = req('b', 40);
    s.add(a);
    s.add(b);
    s.schedule(); // both scheduled
    s.abort(a);
    const reqs: SimRequest[] = [];
    s.update(0, reqs, []);
    expect(reqs).toEqual([b]);
    expect(s.running).toEqual([b]);
    s.abort(b);
    expect(s.kv.usage()).toBe(0);
    const c = req('c', 10);
    s.add(c);
    s.abort(c);
    expect(s.waiting.size).toBe(0);
  });
});
