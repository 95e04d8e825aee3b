/**
 * The simulated vLLM's HTTP surface on `node:http`: the OpenAI routes, `/v1/models`,
 * `/health`, `/version`, `/tokenize`, `/detokenize`, `/metrics`, with vLLM's shapes and
 * error bodies. Every response carries `x-loadlab-sim: 1`. All output goes through a
 * `Reply` (see reply.ts), the seam for fault injection.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Rng } from '../../rng';
import { runGeneration, type GenServer } from './generate';
import type { SimMetrics } from './metrics';
import { cutChars, readJson } from './body';
import { MethodNotAllowed } from './method-not-allowed';
import { OffLoopTokenizer, promptOf, requestedOutput } from './prompt-tokens';
import type { QueueTimes } from '../engine/queue-time';
import { ApiError, nodeReply, type Reply, type ReplyHooks, type RequestInfo } from './reply';
import { checkModel, parseGenRequest, validationError } from './requests';
import { checkMessages } from './chat-fields';
import { renderChat, type SimTokenizer } from './tokens';
import type { SimEngine } from '../engine/types';

/** The vLLM release whose HTTP surface the simulator emulates (`GET /version`). */
export const EMULATED_VLLM_VERSION = '0.19.0';

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
  /** Fault injection (src/sim/http/faults.ts); it also serves `/loadlab/faults`. */
  hooks?: ReplyHooks;
}

/** A running simulator HTTP server. */
export interface SimServer {
  server: Server;
  /** Listen; resolves to the bound port (pass 0 for an ephemeral one). */
  listen(port: number, host: string): Promise<number>;
  /** Stop accepting, drop open connections, resolve when closed. */
  close(): Promise<void>;
}

/** Creates the simulator's HTTP server (not yet listening). */
export function createSimServer(opts: SimServerOptions): SimServer {
  const now = opts.now ?? (() => performance.now());
  const model = opts.servedModelName;
  const rules = { servedModelName: model, maxModelLen: opts.engine.config.maxModelLen, forceIncludeUsage: opts.enableForceIncludeUsage };
  const gen: GenServer = {
    engine: opts.engine, tok: opts.tok, metrics: opts.metrics, queue: opts.queueTimes, model, now, rng: opts.rng,
    apiOverheadMs: opts.apiOverheadMs ?? 0, promptTokensDetails: opts.enablePromptTokensDetails ?? false,
  };
  const offLoop = new OffLoopTokenizer(opts.tok);
  const parseBig = (bytes: Buffer) => offLoop.parseJson(bytes);
  const parseBigPrompt = (bytes: Buffer) => offLoop.parseJson(bytes, rules.maxModelLen);
  let seq = 0;
  const startS = Math.floor(Date.now() / 1000);

  const modelsBody = () => ({
    object: 'list',
    data: [{
      id: model, object: 'model', created: Math.floor(Date.now() / 1000), owned_by: 'vllm', root: opts.modelPath ?? model, parent: null,
      max_model_len: rules.maxModelLen,
      permission: [{
        id: `modelperm-${randomBytes(16).toString('hex')}`, object: 'model_permission', created: startS, allow_create_engine: false,
        allow_sampling: true, allow_logprobs: true, allow_search_indices: false, allow_view: true, allow_fine_tuning: false,
        organization: '*', group: null, is_blocking: false,
      }],
      loadlab_sim: true,
    }],
  });

  /**
   * The tokenizer for one generation request, its prompt tokenized off the event loop
   * (prompt-tokens.ts); a prompt too long by its characters alone is refused first.
   */
  async function tokenizerFor(api: 'chat' | 'completions', body: Record<string, unknown>): Promise<SimTokenizer> {
    const maxOut = requestedOutput(api, body);
    offLoop.checkCut(cutChars(body), maxOut, rules.maxModelLen);
    const text = promptOf(api, body);
    if (text === undefined) return opts.tok; // the request validation answers it
    offLoop.checkLength(text, maxOut, rules.maxModelLen);
    return offLoop.knowing(text, await offLoop.encode(text, rules.maxModelLen - 1));
  }

  async function route(req: IncomingMessage, reply: Reply, info: RequestInfo, arrivalMs: number): Promise<void> {
    const { method, path } = info;
    const is = (m: string, p: string) => path === p && (method === m || (m === 'GET' && method === 'HEAD'));
    if (path === '/v1/chat/completions' || path === '/v1/completions') {
      if (method !== 'POST') throw new MethodNotAllowed(['POST']);
      const api = path === '/v1/chat/completions' ? 'chat' : 'completions';
      const body = await readJson(req, parseBigPrompt);
      checkModel(body, rules);
      const g = parseGenRequest(api, body, await tokenizerFor(api, body), rules);
      const header = req.headers['x-request-id'];
      const rid = (Array.isArray(header) ? header[0] : header) || (typeof body.request_id === 'string' && body.request_id) || randomBytes(8).toString('hex');
      const id = `${api === 'chat' ? 'chatcmpl' : 'cmpl'}-${rid}`;
      runGeneration(gen, g, reply, { id, engineId: `${id}#${++seq}`, arrivalMs });
    } else if (is('GET', '/v1/models')) {
      reply.json(200, modelsBody());
    } else if (is('GET', '/health')) {
      reply.text(200, '');
    } else if (is('GET', '/version')) {
      reply.json(200, { version: EMULATED_VLLM_VERSION, loadlab_sim: true, simulated: true });
    } else if (is('GET', '/metrics')) {
      reply.text(200, opts.metrics.render(opts.engine.stats()), 'text/plain; version=0.0.4; charset=utf-8');
    } else if (is('POST', '/tokenize')) {
      const body = await readJson(req, parseBig);
      checkModel(body, rules);
      let tokens: number[];
      if (body.messages !== undefined) {
        const messages = checkMessages(body.messages);
        tokens = await offLoop.encode(renderChat(messages, { addGenerationPrompt: body.add_generation_prompt !== false }), rules.maxModelLen - 1);
      } else if (typeof body.prompt === 'string') {
        tokens = await offLoop.encode(body.prompt, rules.maxModelLen - 1);
      } else throw validationError('prompt', 'Field required: send "prompt" (a string) or "messages"', 'prompt');
      reply.json(200, {
        count: tokens.length, max_model_len: rules.maxModelLen, tokens: tokens.slice(),
        token_strs: body.return_token_strs === true ? opts.tok.tokenStrs(tokens) : null,
      });
    } else if (is('POST', '/detokenize')) {
      const body = await readJson(req, parseBig);
      checkModel(body, rules);
      const ids = body.tokens;
      if (!Array.isArray(ids) || !ids.every((t) => Number.isInteger(t) && t >= 0)) throw validationError('tokens', 'Input should be a list of token ids', 'tokens');
      reply.json(200, { prompt: opts.tok.decode(ids as number[]) });
    } else if (['/v1/models', '/health', '/version', '/metrics'].includes(path)) {
      throw new MethodNotAllowed(['GET', 'HEAD']);
    } else if (path === '/tokenize' || path === '/detokenize') {
      throw new MethodNotAllowed(['POST']);
    } else {
      throw new ApiError(404, 'Not Found', 'Not Found');
    }
  }

  const server = createServer((req, res) => {
    const arrivalMs = now();
    const info: RequestInfo = {
      method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0], headers: req.headers,
      remoteAddress: req.socket.remoteAddress, readJson: () => readJson(req, parseBig),
    };
    let reply = nodeReply(res);
    if (opts.hooks?.wrap) reply = opts.hooks.wrap(reply, info);
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
      if (opts.hooks?.intercept && (await opts.hooks.intercept(reply, info))) return;
      await route(req, reply, info, arrivalMs);
    })().catch(fail);
  });
  server.keepAliveTimeout = 5000; // uvicorn's default keep-alive

  return {
    server,
    listen(port, host) {
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
        server.close(() => void offLoop.close().then(() => resolve()));
        server.closeAllConnections();
      });
    },
  };
}
