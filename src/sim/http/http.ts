/**
 * The simulated vLLM's HTTP surface on `node:http`: the OpenAI routes, `/v1/models`,
 * `/health`, `/version`, `/tokenize`, `/detokenize`, `/metrics` (in `routes.ts`), with vLLM's
 * shapes and error bodies. Every response carries `x-loadlab-sim: 1`. All output goes through a
 * `Reply` (see reply.ts), the seam for fault injection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Rng } from '../../rng';
import type { SimMetrics } from './metrics';
import { readJson } from './body';
import { MethodNotAllowed } from './method-not-allowed';
import { OffLoopTokenizer } from './prompt-tokens';
import type { QueueTimes } from '../engine/queue-time';
import { ApiError, nodeReply, type ReplyHooks, type RequestInfo } from './reply';
import { DEFAULT_GENERATION, type Generation } from './generation';
import { route, type RouteContext, type SimProfileLabel } from './routes';
import { wireShape } from './wire-shapes';
import type { SimTokenizer } from './tokens';
import type { SimEngine } from '../engine/types';
import { SendLog } from './send-log';

export { EMULATED_VLLM_VERSION } from './routes';

/** Options of `createSimServer`. */
export interface SimServerOptions {
  engine: SimEngine;
  tok: SimTokenizer;
  metrics: SimMetrics;
  /** Feeds `vllm:request_queue_time_seconds`; optional. */
  queueTimes?: QueueTimes;
  /** Served model name (what clients send as `model`). */
  servedModelName: string;
  /** Model path (`root` of the model card). Default: the served name. */
  modelPath?: string;
  /** The vLLM generation emulated (`--vllm-version`); default the newest (src/sim/http/generation.ts). */
  generation?: Generation;
  /** Monotonic ms clock (the engine's); default `performance.now`. */
  now?: () => number;
  /** Seeded source of per-request seeds. */
  rng: Rng;
  /** Non-engine latency per request, ms (profile `apiOverheadMs`); default 0. */
  apiOverheadMs?: number;
  /** `--enable-prompt-tokens-details`; default false. */
  enablePromptTokensDetails?: boolean;
  /** `--enable-force-include-usage`; default false. */
  enableForceIncludeUsage?: boolean;
  /** `--stream-interval`: tokens per streamed output after the first, integer ≥ 1; default 1 (`vllm/config/scheduler.py`). */
  streamInterval?: number;
  /** Fault injection (src/sim/http/faults.ts); it also serves `/loadlab/faults`. */
  hooks?: ReplyHooks;
  /** The simulator profile, reported by `GET /version` as `loadlab_profile` (LoadLab only); default none. */
  profile?: SimProfileLabel;
  /** The CPU the engine thread is pinned to (src/proc/cpu-split.ts), reported by `GET /version` as `loadlab_engine_cpu`. */
  engineCpu?: number;
}

/** A running simulator HTTP server. */
export interface SimServer {
  server: Server;
  /** Listen; resolves to the bound port (pass 0 for an ephemeral one). */
  listen(port: number, host: string): Promise<number>;
  /** Stop accepting, drop open connections, resolve when closed. */
  close(): Promise<void>;
}

/** Answer one request: the hooks first (faults), then the routes; a throw becomes vLLM's error reply. */
function handle(
  ctx: RouteContext,
  hooks: ReplyHooks | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  arrivalMs: number,
): void {
  const info: RequestInfo = {
    method: req.method ?? 'GET',
    path: (req.url ?? '/').split('?')[0],
    headers: req.headers,
    remoteAddress: req.socket.remoteAddress,
    readJson: () => readJson(req, (bytes) => ctx.offLoop.parseJson(bytes)),
  };
  let reply = nodeReply(res, ctx.generation.id);
  if (hooks?.wrap) reply = hooks.wrap(reply, info);
  const fail = (err: unknown) => {
    const e = err instanceof ApiError ? err : new ApiError(500, 'Internal server error', 'InternalServerError');
    if (!(err instanceof ApiError)) console.error('[loadlab-sim] internal error:', err);
    if (e instanceof MethodNotAllowed && !res.headersSent) res.setHeader('Allow', e.allow);
    if (res.headersSent) {
      reply.streamError(e);
      reply.done();
    } else reply.error(e);
  };
  (async () => {
    if (hooks?.intercept && (await hooks.intercept(reply, info))) return;
    await route(ctx, req, reply, info, arrivalMs);
  })().catch(fail);
}

/** Creates the simulator's HTTP server (not yet listening). */
export function createSimServer(opts: SimServerOptions): SimServer {
  const now = opts.now ?? (() => performance.now());
  const model = opts.servedModelName;
  const streamInterval = opts.streamInterval ?? 1;
  if (!Number.isInteger(streamInterval) || streamInterval < 1)
    throw new Error(
      `streamInterval (--stream-interval) must be an integer ≥ 1, got ${streamInterval}; use 1 to stream every token`,
    );
  const generation = opts.generation ?? DEFAULT_GENERATION;
  const ctx: RouteContext = {
    gen: {
      engine: opts.engine,
      tok: opts.tok,
      metrics: opts.metrics,
      queue: opts.queueTimes,
      model,
      now,
      rng: opts.rng,
      apiOverheadMs: opts.apiOverheadMs ?? 0,
      promptTokensDetails: opts.enablePromptTokensDetails ?? false,
      streamInterval,
      sendLog: new SendLog(),
    },
    rules: {
      servedModelName: model,
      maxModelLen: opts.engine.config.maxModelLen,
      forceIncludeUsage: opts.enableForceIncludeUsage,
      includeUsageDefault: wireShape(generation).includeUsageDefault,
    },
    offLoop: new OffLoopTokenizer(opts.tok),
    modelPath: opts.modelPath ?? model,
    generation,
    ...(opts.profile ? { profile: opts.profile } : {}),
    ...(opts.engineCpu !== undefined ? { engineCpu: opts.engineCpu } : {}),
    startS: Math.floor(Date.now() / 1000),
    seq: 0,
  };
  const server = createServer((req, res) => {
    const arrivalMs = now();
    opts.engine.runDue(); // a step due now ends before this arrival's work (engine-loop.ts runDue)
    handle(ctx, opts.hooks, req, res, arrivalMs);
  });
  server.keepAliveTimeout = 5000; // uvicorn's default keep-alive

  return {
    server,
    async listen(port, host) {
      await ctx.offLoop.booted(); // the tokenizer thread's boot on the engine's CPU ends before any request can come
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve((server.address() as AddressInfo).port);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => void ctx.offLoop.close().then(() => resolve()));
        server.closeAllConnections();
      });
    },
  };
}
