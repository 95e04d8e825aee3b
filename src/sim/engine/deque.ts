/**
 * A FIFO with O(1) push/pop at both ends (ring buffer), used for the scheduler's waiting
 * and swapped queues: vLLM prepends preempted requests and pops admissions from the front.
 */
export class Deque<T> {
  private buf: (T | undefined)[] = new Array(16);
  private head = 0;
  private len = 0;

  /** Number of items. */
  get size(): number {
    return this.len;
  }

  /** Append at the back (new arrivals). */
  pushBack(item: T): void {
    if (this.len === this.buf.length) this.grow();
    this.buf[(this.head + this.len) % this.buf.length] = item;
    this.len++;
  }

  /** Insert at the front (preempted requests go first). */
  pushFront(item: T): void {
    if (this.len === this.buf.length) this.grow();
    this.head = (this.head - 1 + this.buf.length) % this.buf.length;
    this.buf[this.head] = item;
    this.len++;
  }

  /** The front item, or undefined when empty. */
  peekFront(): T | undefined {
    return this.len === 0 ? undefined : this.buf[this.head];
  }

  /** Remove and return the front item. */
  popFront(): T | undefined {
    if (this.len === 0) return undefined;
    const item = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) % this.buf.length;
    this.len--;
    return item;
  }

  /** Item `i` from the front (0-based). */
  at(i: number): T | undefined {
    return i < 0 || i >= this.len ? undefined : this.buf[(this.head + i) % this.buf.length];
  }

  /** Remove `item` wherever it is; O(size). Returns whether it was found. */
  remove(item: T): boolean {
    let i = 0;
    while (i < this.len && this.at(i) !== item) i++;
    if (i === this.len) return false;
    for (let j = i; j < this.len - 1; j++) {
      this.buf[(this.head + j) % this.buf.length] = this.buf[(this.head + j + 1) % this.buf.length];
    }
    this.buf[(this.head + this.len - 1) % this.buf.length] = undefined;
    this.len--;
    return true;
  }

  private grow(): void {
    const next: (T | undefined)[] = new Array(this.buf.length * 2);
    for (let i = 0; i < this.len; i++) next[i] = this.buf[(this.head + i) % this.buf.length];
    this.buf = next;
    this.head = 0;
  }
}
