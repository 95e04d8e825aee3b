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
      // No controller for a request that never started; a throw (a closed pool, a bad header) must reach the handler,
      // not become an unhandled rejection.
      const fail = (err: unknown) => handler.onResponseError?.(undefined as never, err as Error);
      load().then((p) => {
        try {
          p.dispatch(opts, handler);
        } catch (err) {
          fail(err);
        }
      }, fail);
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
