/**
 * A step's socket writes, serialised first and written back to back. The engine hands a decode step's outputs to
 * every stream in one callback; each stream serialises its chunk and queues the frame here, and the queue is written
 * in order in a microtask once that callback returns, before the event loop polls again. The kernel's send path
 * costs less per call when the writes come back to back than when each comes between a few µs of JavaScript
 * (bench/README.md §16). Side by side at 128 streams the simulator's CPU per token was 0.926×, 0.977× and 0.956×
 * without the batch's (three runs of eight rounds; bench/README.md §27).
 *
 * vLLM too processes a whole slice of a step's outputs (up to `VLLM_V1_OUTPUT_PROC_CHUNK_SIZE`, 128 by default,
 * `vllm/envs.py`) into the requests' collectors before any request task runs (`output_handler` in
 * `vllm/v1/engine/async_llm.py`); then each task serialises its chunk and writes it in turn
 * (`vllm/entrypoints/openai/chat_completion/serving.py`). Deviation: here every stream serialises first and the
 * writes follow, so a stream's bytes also wait for the later streams' serialising. At 128 streams the first frame of
 * a step waited 0.5–0.8 ms (p50 of 2 s windows; p99 0.6–3 ms) from its queueing to the write. A stream keeps its
 * place in a step's order while the running batch is unchanged, so its ITL keeps the same offset.
 */

/** Something whose queued frames the batch writes back: `writeNow` sends one frame to its socket. */
export interface BatchedWriter {
  writeNow(frame: string): void;
}

/** Pairs of (writer, frame) or (null, a call to run in order). */
const queue: Array<BatchedWriter | string | (() => void) | null> = [];

/** Queues `frame` for `w`; everything queued is written in order once the current callback has returned. */
export function queueWrite(w: BatchedWriter, frame: string): void {
  if (queue.length === 0) queueMicrotask(drain);
  queue.push(w, frame);
}

/** Runs `fn` after the writes queued so far (at once if none are): ending or dropping a response after its frames. */
export function afterQueued(fn: () => void): void {
  if (queue.length === 0) fn();
  else queue.push(null, fn);
}

/** Writes and runs everything queued, in order. One that throws does not hold back the rest; the first error is rethrown after. */
function drain(): void {
  let failed = false;
  let error: unknown;
  for (let i = 0; i < queue.length; i += 2) {
    const w = queue[i] as BatchedWriter | null;
    const x = queue[i + 1];
    try {
      if (w === null) (x as () => void)();
      else w.writeNow(x as string);
    } catch (e) {
      if (!failed) error = e;
      failed = true;
    }
  }
  queue.length = 0;
  if (failed) throw error;
}
