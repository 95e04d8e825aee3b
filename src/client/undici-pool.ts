/**
 * undici's `Pool` as the streaming client's dispatcher (`https:` targets, `LOADLAB_HTTP_CLIENT=undici`), loaded
 * only when first used. Loading undici costs about 50 ms of CPU (bench/README.md §23), and every worker thread
 * that runs a load would pay it again; an `http:` target never needs it (./h1-pool.ts).
 */
import type { Dispatcher } from 'undici';
import type { StreamDispatcher, StreamDispatchOptions } from './h1-pool';

/** A `Pool` for `origin` created at the first dispatch; requests wait for the import meanwhile, in order. */
export function lazyUndiciPool(origin: string, connections: number): StreamDispatcher {
  let pool: Promise<StreamDispatcher> | undefined;
  const load = () =>
    // Our own timeouts replace undici's header/body timeouts (0 = off).
    (pool ??= import('./undici').then(
      ({ Pool }) => new Pool(origin, { connections, pipelining: 1, headersTimeout: 0, bodyTimeout: 0 }),
    ));
  return {
    dispatch(opts: StreamDispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      load().then(
        (p) => p.dispatch(opts, handler),
        (err: Error) => handler.onResponseError?.(undefined as never, err), // no controller: it never started
      );
      return true;
    },
    async close(): Promise<void> {
      if (pool) await (await pool).close();
    },
    async destroy(): Promise<void> {
      if (pool) await (await pool).destroy();
    },
  };
}
