/**
 * Where a streamed request's outputs wait for the HTTP writer: vLLM's `RequestOutputCollector`
 * (`vllm/v1/engine/output_processor.py`). There the engine's output handler `put`s each step's
 * output into a one-slot mailbox and the request's `generate()` task (`vllm/v1/engine/async_llm.py`,
 * `out = q.get_nowait() or await q.get()`) takes it, serialises it and writes it. While that task
 * is busy (its write awaits the socket's drain because a slow client does not read), new outputs
 * are merged into the waiting one (`RequestOutput.add(aggregate=True)`, `vllm/outputs.py`): text
 * concatenated, token ids and logprobs extended, finish and stop reason of the later output; an
 * output of another choice (`n` > 1) is appended. The next write then carries several tokens in
 * one chunk per choice.
 *
 * The simulator's analogue of "busy": the reply is blocked (its socket's buffers are full). While it is,
 * outputs wait here, merged, and go out together on `drain`. Deviation: vLLM's consumer also lags
 * when its event loop is merely busy (many streams on one API-server process); the simulator's
 * writes are never late for that reason, so only a slow reader merges here.
 */
import type { Reply } from './reply';
import type { ChoiceDelta } from './gen-choice';

/** Merges `d` into `pending` as `RequestOutput.add(next, aggregate=True)` does (same choice index: extend; else append). */
export function mergeDelta(pending: ChoiceDelta[], d: ChoiceDelta): void {
  const same = pending.find((p) => p.index === d.index);
  if (!same) {
    pending.push({ ...d, ids: d.ids.slice() });
    return;
  }
  same.text += d.text;
  same.ids.push(...d.ids);
  same.finishReason = d.finishReason;
  same.stopReason = d.stopReason;
  same.outputTokens = d.outputTokens;
}

/** One request's output mailbox (all its choices share it, as vLLM's collector is per parent request). */
export class OutputCollector {
  private pending: ChoiceDelta[] | undefined;

  /**
   * @param reply where the chunks go; without `blocked`/`onDrain` every output is written at once.
   * @param write serialises and writes one taken output (one chunk per choice delta, in order).
   */
  constructor(
    private readonly reply: Reply,
    private readonly write: (deltas: ChoiceDelta[]) => void,
  ) {}

  /** An output for the writer: written now if the writer is free, else kept (merged) until the socket drains. */
  put(d: ChoiceDelta): void {
    if (this.pending) {
      mergeDelta(this.pending, d);
      return;
    }
    if (this.reply.onDrain && this.reply.blocked?.()) {
      this.pending = [{ ...d, ids: d.ids.slice() }];
      this.reply.onDrain(() => this.take());
      return;
    }
    this.write([d]);
  }

  private take(): void {
    const p = this.pending;
    this.pending = undefined;
    if (p && !this.reply.closed) this.write(p);
  }
}
