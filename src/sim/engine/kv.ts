/**
 * Paged KV block pool as vLLM V1's `BlockPool` + `KVCacheManager` (vllm-surface.md §4–5):
 * - `numGpuBlocks` blocks of `blockSize` tokens; block 0 is the reserved null block, so
 *   usage = 1 − free/(numGpuBlocks − 1).
 * - Incremental allocation: a step allocates only the blocks its scheduled tokens need.
 * - Prefix caching: FULL blocks are keyed by a chained hash h(parent, token ids of the block),
 *   registered as soon as they are allocated for computation. Freed blocks keep their hash and go
 *   to the tail of an LRU free queue; allocation takes from the head and evicts that hash.
 * - Swap (V0's swap preemption, used for n > 1 or `--preemption-mode swap`): a victim's blocks move to a CPU pool and come back later.
 * Every operation is O(blocks touched): the free queue is an intrusive doubly linked list.
 */
import { chainBlockHash, type HashedSeq } from './block-hash';

/** The KV state the pool keeps on each request. */
export interface KvSeq extends HashedSeq {
  /** GPU block ids in token order. */
  blocks: number[];
  /** Chained hashes of the sequence's full blocks, computed lazily. */
  hashes: number[];
  /** Leading blocks of `blocks` already registered in the prefix cache. */
  registered: number;
  /** Blocks held in the CPU swap pool (swap mode). */
  cpuBlocks: number;
}

/** Sizes and switches of a pool. */
export interface KvPoolOptions {
  numGpuBlocks: number;
  /** Tokens per block (vLLM default 16). */
  blockSize: number;
  enablePrefixCaching: boolean;
  /** CPU swap blocks (0 = no swap). */
  numCpuBlocks: number;
}

const TWO30 = 1073741824;

/** The GPU block pool, its prefix cache and the CPU swap pool. */
export class KvBlockPool {
  readonly numGpuBlocks: number;
  readonly blockSize: number;
  readonly enablePrefixCaching: boolean;
  readonly numCpuBlocks: number;
  /** Blocks in the free queue (cached blocks with refcount 0 included). */
  numFree: number;
  cpuFree: number;
  /** Prompt tokens looked up in the prefix cache (never-preempted requests only), tokens. */
  prefixQueries = 0;
  /** Tokens found in the prefix cache for those lookups. */
  prefixHits = 0;
  swapOutBlocks = 0;
  swapInBlocks = 0;

  private readonly refCount: Int32Array;
  private readonly blockHash: Float64Array;
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  /** Sentinel of the free queue: next[S] is the head (LRU), prev[S] the tail. */
  private readonly S: number;
  /**
   * Cached full blocks by the low 30 bits of their hash (small-integer keys keep the Map
   * fast); `blockHash` holds the full 53-bit hash and is checked on every hit.
   */
  private readonly cached = new Map<number, number>();

  constructor(opts: KvPoolOptions) {
    const n = opts.numGpuBlocks;
    if (!Number.isInteger(n) || n < 2) throw new Error(`numGpuBlocks must be an integer ≥ 2 (one is the null block), got ${n}`);
    this.numGpuBlocks = n;
    this.blockSize = opts.blockSize;
    this.enablePrefixCaching = opts.enablePrefixCaching;
    this.numCpuBlocks = opts.numCpuBlocks;
    this.cpuFree = opts.numCpuBlocks;
    this.refCount = new Int32Array(n);
    this.blockHash = new Float64Array(n).fill(-1);
    this.next = new Int32Array(n + 1);
    this.prev = new Int32Array(n + 1);
    this.S = n;
    this.next[this.S] = this.prev[this.S] = this.S;
    this.numFree = 0;
    for (let b = 1; b < n; b++) this.pushFree(b);
  }

  /** `vllm:kv_cache_usage_perc`: 1 − free/(numGpuBlocks − 1), 0..1. */
  usage(): number {
    return 1 - this.numFree / (this.numGpuBlocks - 1);
  }

  /** Reference count of block `b` (for tests). */
  refs(b: number): number {
    return this.refCount[b];
  }

  /** Hash of full block `i` of `seq`, computing the chain up to it if needed. */
  hashOf(seq: KvSeq, i: number): number {
    const h = seq.hashes;
    for (let j = h.length; j <= i; j++) h.push(chainBlockHash(j === 0 ? 0 : h[j - 1], seq, j * this.blockSize, this.blockSize));
    return h[i];
  }

  /**
   * Prefix-cache lookup for a sequence of `numTokens` tokens: whole blocks only, at most
   * numTokens − 1 tokens (the last token is always recomputed to get logits). Hit block ids
   * are written to `out`; returns the hit length in tokens. With `count`, adds numTokens to
   * queries and the hit to hits (vLLM counts only never-preempted requests).
   */
  findCached(seq: KvSeq, numTokens: number, count: boolean, out: number[]): number {
    out.length = 0;
    if (!this.enablePrefixCaching) return 0;
    const maxBlocks = Math.floor((numTokens - 1) / this.blockSize);
    for (let i = 0; i < maxBlocks; i++) {
      const h = this.hashOf(seq, i);
      const b = this.cached.get(h % TWO30);
      if (b === undefined || this.blockHash[b] !== h) break;
      out.push(b);
    }
    const hit = out.length * this.blockSize;
    if (count) {
      this.prefixQueries += numTokens;
      this.prefixHits += hit;
    }
    return hit;
  }

  /**
   * Give `seq` slots for `numNew` more tokens on top of `numComputed` (which already counts
   * the hit blocks in `hits`, not yet attached). With `mustFitTokens` > 0 the free pool must
   * also hold blocks for that many tokens (vLLM's scheduler_reserve_full_isl). Returns false,
   * changing nothing, if the blocks are not free.
   */
  allocate(seq: KvSeq, numComputed: number, numNew: number, hits: readonly number[] = [], mustFitTokens = 0): boolean {
    const bs = this.blockSize;
    const total = numComputed + numNew;
    if (hits.length === 0 && mustFitTokens === 0 && total <= seq.blocks.length * bs) {
      // Fast path: most decode steps stay inside the last block.
      if (this.enablePrefixCaching && total >= (seq.registered + 1) * bs) this.register(seq, Math.floor(total / bs));
      return true;
    }
    const have = seq.blocks.length + hits.length;
    const need = Math.max(0, Math.ceil(total / bs) - have);
    const check = mustFitTokens > 0 ? Math.max(need, Math.ceil(mustFitTokens / bs) - have) : need;
    let evictableHits = 0;
    for (let i = 0; i < hits.length; i++) if (this.refCount[hits[i]] === 0) evictableHits++;
    if (check > this.numFree - evictableHits) return false;
    for (let i = 0; i < hits.length; i++) {
      const b = hits[i];
      if (this.refCount[b] === 0) this.unlinkFree(b);
      this.refCount[b]++;
      seq.blocks.push(b);
    }
    if (hits.length > 0) seq.registered = seq.blocks.length;
    for (let i = 0; i < need; i++) seq.blocks.push(this.takeFree());
    if (this.enablePrefixCaching) this.register(seq, Math.floor(total / bs));
    return true;
  }

  /** Release all of `seq`'s GPU blocks, last block first (so its tail is evicted first); hashes stay cached. */
  free(seq: KvSeq): void {
    const blocks = seq.blocks;
    for (let i = blocks.length - 1; i >= 0; i--) {
      const b = blocks[i];
      if (--this.refCount[b] === 0) this.pushFree(b);
    }
    blocks.length = 0;
    seq.registered = 0;
  }

  /** Move `seq`'s GPU blocks to the CPU pool. False (nothing moved) if the CPU pool is too small. */
  swapOut(seq: KvSeq): boolean {
    const nb = seq.blocks.length;
    if (nb > this.cpuFree) return false;
    this.free(seq);
    this.cpuFree -= nb;
    seq.cpuBlocks = nb;
    this.swapOutBlocks += nb;
    return true;
  }

  /**
   * Bring `seq`'s swapped blocks back into fresh GPU blocks, if there is also room for
   * `numNew` more tokens on top of `numComputed` (the caller then `allocate`s those).
   */
  swapIn(seq: KvSeq, numComputed: number, numNew: number): boolean {
    const nb = seq.cpuBlocks;
    if (Math.max(nb, Math.ceil((numComputed + numNew) / this.blockSize)) > this.numFree) return false;
    for (let i = 0; i < nb; i++) seq.blocks.push(this.takeFree());
    seq.registered = 0;
    this.cpuFree += nb;
    seq.cpuBlocks = 0;
    this.swapInBlocks += nb;
    return true;
  }

  /** Return a swapped sequence's CPU blocks (it was aborted while swapped). */
  dropSwapped(seq: KvSeq): void {
    this.cpuFree += seq.cpuBlocks;
    seq.cpuBlocks = 0;
  }

  private register(seq: KvSeq, fullBlocks: number): void {
    for (let i = seq.registered; i < fullBlocks; i++) {
      const h = this.hashOf(seq, i);
      const b = seq.blocks[i];
      if (!this.cached.has(h % TWO30)) {
        this.cached.set(h % TWO30, b);
        this.blockHash[b] = h;
      }
    }
    if (fullBlocks > seq.registered) seq.registered = fullBlocks;
  }

  /** Pop the LRU head, evicting its cached hash. */
  private takeFree(): number {
    const b = this.next[this.S];
    this.unlinkFree(b);
    const h = this.blockHash[b];
    if (h >= 0) {
      if (this.cached.get(h % TWO30) === b) this.cached.delete(h % TWO30);
      this.blockHash[b] = -1;
    }
    this.refCount[b] = 1;
    return b;
  }

  private pushFree(b: number): void {
    const tail = this.prev[this.S];
    this.next[tail] = b;
    this.prev[b] = tail;
    this.next[b] = this.S;
    this.prev[this.S] = b;
    this.numFree++;
  }

  private unlinkFree(b: number): void {
    const p = this.prev[b];
    const n = this.next[b];
    this.next[p] = n;
    this.prev[n] = p;
    this.numFree--;
  }
}
