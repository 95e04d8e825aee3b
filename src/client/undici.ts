/// <reference path="./undici-lib.d.ts" />
/**
 * The parts of undici LoadLab uses, `Pool` and the request API, loaded without undici's index.
 * The index evaluates every API undici offers (fetch, WebSocket, cookies, mocks, caches,
 * interceptors) for about 48 ms of CPU at every start of `loadlab run` and of each worker thread,
 * and LoadLab calls none of them. These are the same classes: the request API goes onto the
 * Dispatcher prototype as the index puts it there (`Object.assign(Dispatcher.prototype, api)`).
 */
import type { Dispatcher as DispatcherType, Pool as PoolType } from 'undici';
import api from 'undici/lib/api';
import Dispatcher from 'undici/lib/dispatcher/dispatcher';
import PoolClass from 'undici/lib/dispatcher/pool';
import { getGlobalDispatcher } from 'undici/lib/global';

Object.assign(Dispatcher.prototype, api);

/** undici's `Pool`. */
export const Pool = PoolClass;
export type Pool = PoolType;

/** Options of {@link request}: undici's request options without `origin` and `path` (taken from the URL). */
export type RequestOptions = Omit<DispatcherType.RequestOptions, 'origin' | 'path'> & {
  /** Default: undici's global dispatcher, as undici's own `request(url)`. */
  dispatcher?: DispatcherType;
};

/** undici's `request(url, opts)`: the same call on `opts.dispatcher` or the global dispatcher. */
export function request(url: string, opts: RequestOptions): Promise<DispatcherType.ResponseData> {
  const u = new URL(url);
  const { dispatcher = getGlobalDispatcher(), ...rest } = opts;
  return dispatcher.request({ ...rest, origin: u.origin, path: `${u.pathname}${u.search}` });
}
