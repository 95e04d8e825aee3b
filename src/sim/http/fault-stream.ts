/**
 * The mid-stream faults: a `Reply` wrapper that lets `afterChunks` SSE events through and
 * then strikes once: drops the connection (`reset`), sends vLLM's in-stream error event and
 * `[DONE]` (`stream_error`), sends half an event's JSON (`malformed`), or holds every write
 * for `stallS` (`stall`). At the stream's end it strikes then, if it has not yet.
 */
import type { FaultKind, FaultSettings } from '../../vllm/fault-settings';
import { setLongTimeout } from './long-timer';
import { ApiError, type Reply } from './reply';

/** vLLM's error for an exception inside the generator (HTTP 500 / in-stream event). */
export const INTERNAL = () => new ApiError(500, 'Internal server error', 'InternalServerError');

/** Wraps a streamed reply so `kind` strikes on the first write after `s.afterChunks` events; `hit` counts it. */
export function midStream(inner: Reply, kind: FaultKind, s: Required<FaultSettings>, hit: (kind: FaultKind) => void): Reply {
  let streaming = false;
  let sent = 0;
  let struck = false;
  let dead = false;
  let held: Array<() => void> | undefined;
  let last: string | undefined;
  const aborts: Array<() => void> = [];
  const through = (call: () => void, json?: string) => {
    if (dead) return;
    if (held) return void held.push(call);
    const atEnd = json === undefined; // done() or an error event: strike now if not yet struck
    if (!streaming || struck || inner.closed || (!atEnd && sent < s.afterChunks)) {
      if (!atEnd) {
        sent++;
        last = json;
      }
      return call();
    }
    struck = true;
    hit(kind);
    if (kind === 'reset') {
      dead = true;
      inner.destroy();
    } else if (kind === 'stream_error') {
      dead = true;
      inner.streamError(INTERNAL());
      inner.done();
      for (const fn of aborts.splice(0)) fn(); // the generator raised: vLLM aborts the request
    } else if (kind === 'malformed') {
      const j = json ?? last ?? '{"choices":[]}'; // at the end: a damaged copy of the last event
      inner.event(j.slice(0, Math.floor(j.length / 2))); // half an object is never valid JSON
      if (json === undefined) call();
    } else {
      held = [call];
      const t = setLongTimeout(() => {
        const calls = held ?? [];
        held = undefined;
        for (const c of calls) c();
      }, s.stallS * 1000);
      inner.onAbort(() => {
        t.clear();
        held = undefined;
      });
    }
  };
  return {
    get closed() {
      return dead || inner.closed;
    },
    onAbort(fn) {
      aborts.push(fn);
      inner.onAbort(fn);
    },
    json: (status, body) => inner.json(status, body),
    text: (status, body, type) => inner.text(status, body, type),
    error: (err) => inner.error(err),
    startStream() {
      streaming = true;
      inner.startStream();
    },
    event: (json) => through(() => inner.event(json), json),
    streamError: (err) => through(() => inner.streamError(err)),
    done: () => through(() => inner.done()),
    flush() {
      if (!dead && !held) inner.flush?.();
    },
    destroy() {
      dead = true;
      inner.destroy();
    },
    blocked: () => inner.blocked?.() ?? false,
    onDrain: (fn) => inner.onDrain?.(fn),
  };
}
