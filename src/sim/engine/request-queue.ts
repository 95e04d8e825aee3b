/**
 * The scheduler's WAITING queue under each `--scheduling-policy`, as vLLM's
 * `vllm/v1/core/sched/request_queue.py`: FCFS is a deque (new requests at the back, preempted
 * ones prepended at the front); PRIORITY is a binary heap ordered as `Request.__lt__`
 * (`vllm/v1/request.py`): lower `priority` first, then earlier arrival, then request id. There
 * "prepend" is an ordinary insert, so a preempted request goes back to its place by (priority, arrival).
 */
import { Deque } from './deque';
import type { SimRequest } from './engine-request';

/** What the scheduler, the step loop and the stats read of WAITING. */
export interface RequestQueue {
  /** Requests waiting. */
  readonly size: number;
  /** `add_request`: a new request. */
  pushBack(r: SimRequest): void;
  /** `prepend_request`: a preempted request (FCFS: at the front; PRIORITY: by its order). */
  pushFront(r: SimRequest): void;
  /** The next request in policy order, or undefined when empty. */
  peekFront(): SimRequest | undefined;
  /**
   * The next request to admit at time `t`, ms: the first in policy order among those that arrived
   * by `t` (a request that arrived mid-step is not in vLLM's queue until the next `schedule()`).
   * FCFS: the front if it has arrived, else undefined.
   */
  peekReady(t: number): SimRequest | undefined;
  /** Remove `r` (the one `peekReady` returned, or any other); returns whether it was queued. */
  remove(r: SimRequest): boolean;
  /** Request `i` in policy order (0 = next); O(1) for FCFS, O(n log n) for PRIORITY (tests, introspection). */
  at(i: number): SimRequest | undefined;
}

/** FCFS: vLLM's `FCFSRequestQueue`, a deque. */
export class FcfsQueue extends Deque<SimRequest> implements RequestQueue {
  /** The front request if it arrived by `t`, ms. */
  peekReady(t: number): SimRequest | undefined {
    const r = this.peekFront();
    return r && r.arrivalMs <= t ? r : undefined;
  }

  /** O(1) for the front (the admitted request), O(size) elsewhere. */
  override remove(r: SimRequest): boolean {
    if (this.peekFront() !== r) return super.remove(r);
    this.popFront();
    return true;
  }
}

/** Request order of vLLM's `Request.__lt__`: priority, then arrival time, then id. */
export function requestBefore(a: SimRequest, b: SimRequest): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  if (a.arrivalMs !== b.arrivalMs) return a.arrivalMs < b.arrivalMs;
  return a.id < b.id;
}

/** PRIORITY: vLLM's `PriorityRequestQueue`, a binary min-heap on `requestBefore`. */
export class PriorityQueue implements RequestQueue {
  private readonly heap: SimRequest[] = [];

  get size(): number {
    return this.heap.length;
  }

  pushBack(r: SimRequest): void {
    this.heap.push(r);
    this.up(this.heap.length - 1);
  }

  /** No front in a heap: a preempted request is inserted by (priority, arrival), as `prepend_request` does. */
  pushFront(r: SimRequest): void {
    this.pushBack(r);
  }

  peekFront(): SimRequest | undefined {
    return this.heap[0];
  }

  /** The best request that arrived by `t`: the top, or (when the top arrived later) a scan of the rest. */
  peekReady(t: number): SimRequest | undefined {
    const h = this.heap;
    if (h.length === 0 || h[0].arrivalMs <= t) return h[0];
    let best: SimRequest | undefined;
    for (const r of h) if (r.arrivalMs <= t && (!best || requestBefore(r, best))) best = r;
    return best;
  }

  remove(r: SimRequest): boolean {
    const h = this.heap;
    const k = h.indexOf(r);
    if (k < 0) return false;
    const last = h.pop()!;
    if (k < h.length) {
      h[k] = last;
      this.up(k);
      this.down(k);
    }
    return true;
  }

  at(i: number): SimRequest | undefined {
    return [...this.heap].sort((a, b) => (requestBefore(a, b) ? -1 : requestBefore(b, a) ? 1 : 0))[i];
  }

  private up(k: number): void {
    const h = this.heap;
    while (k > 0) {
      const p = (k - 1) >> 1;
      if (!requestBefore(h[k], h[p])) break;
      [h[k], h[p]] = [h[p], h[k]];
      k = p;
    }
  }

  private down(k: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * k + 1;
      const r = l + 1;
      let m = k;
      if (l < h.length && requestBefore(h[l], h[m])) m = l;
      if (r < h.length && requestBefore(h[r], h[m])) m = r;
      if (m === k) return;
      [h[k], h[m]] = [h[m], h[k]];
      k = m;
    }
  }
}

/**
 * Index in RUNNING of the preemption victim: FCFS the last admitted (`self.running.pop()`); PRIORITY
 * `max(running, key=(priority, arrival_time))`, the first such on a tie as Python's `max`
 * (`vllm/v1/core/sched/scheduler.py` `schedule`). `running` must not be empty.
 */
export function victimIndex(running: readonly SimRequest[], policy: 'fcfs' | 'priority' = 'fcfs'): number {
  if (policy !== 'priority') return running.length - 1;
  let k = 0;
  for (let j = 1; j < running.length; j++) {
    const a = running[j];
    const b = running[k];
    if (a.priority > b.priority || (a.priority === b.priority && a.arrivalMs > b.arrivalMs)) k = j;
  }
  return k;
}

/** The WAITING queue for `policy` (default fcfs). */
export function createRequestQueue(policy: 'fcfs' | 'priority' = 'fcfs'): RequestQueue {
  return policy === 'priority' ? new PriorityQueue() : new FcfsQueue();
}
