/// <reference path="./undici-lib.d.ts" />
/**
 * The part of undici LoadLab uses, `Pool`, loaded without undici's index (and only for `https:` targets or with
 * `LOADLAB_HTTP_CLIENT=undici`: ./undici-pool.ts).
 * The index evaluates every API undici offers (fetch, WebSocket, cookies, mocks, caches,
 * interceptors) for about 48 ms of CPU at every start of `loadlab run` and of each worker thread,
 * and LoadLab calls none of them. LoadLab uses only the pool's `dispatch`, so not even the request API is loaded.
 *
 * undici parses HTTP with llhttp compiled to WebAssembly, at the first connection of each thread. V8 compiles it
 * with Liftoff, its baseline compiler, then, within the first request, recompiles the parser's 33 KB state machine
 * with TurboFan on a background thread: 85–164 ms of CPU and about 29 MB of compiler memory, in every `loadlab`
 * process and again in every worker thread (each lesson's `measure()` starts one), while the measurement runs.
 * The TurboFan parser is faster, but a fresh process's first pass of 76,800 token events cost about 2.2 µs per event
 * more with it (bench/README.md §13). So LoadLab keeps llhttp on Liftoff: `--liftoff-only`, set before the first
 * connection. V8's flags are the process's, so this holds for every thread and for any other WebAssembly in it.
 * LOADLAB_WASM_TURBOFAN=1 keeps V8's default.
 */
import { setFlagsFromString } from 'node:v8';
import type { Pool as PoolType } from 'undici';
import PoolClass from 'undici/lib/dispatcher/pool';

if (process.env.LOADLAB_WASM_TURBOFAN !== '1') setFlagsFromString('--liftoff-only');

/** undici's `Pool`. */
export const Pool = PoolClass;
export type Pool = PoolType;
