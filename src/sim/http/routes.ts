/**
 * The simulated vLLM's routes (served by `http.ts`): the OpenAI completions, `/v1/models`,
 * `/health`, `/version`, `/metrics`, `/tokenize`, `/detokenize`, with vLLM's shapes and error
 * bodies; a known path with another method is a 405 naming the allowed ones, anything else FastAPI's 404.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { cutChars, readJson } from './body';
import { checkMessages } from './chat-fields';
import { runGeneration, type GenServer } from './generate';
import { MethodNotAllowed } from './method-not-allowed';
import { type OffLoopTokenizer, promptOf, requestedOutput } from './prompt-tokens';
import type { Reply, RequestInfo } from './reply';
import { checkModel, parseGenRequest, type RequestRules, validationError } from './requests';
import { renderChat, type SimTokenizer } from './tokens';
import { DEFAULT_GENERATION, type Generation } from './generation';
import { uuidOf, wireShape } from './wire-shapes';
import { SIM_SEND_LOG_CLOCK, SIM_SEND_LOG_PATH } from '../../wire/sim-series';
import { bootId } from '../../proc/cpu-split';

/** The vLLM release the simulator emulates by default (`GET /version`; `--vllm-version` picks another). */
export const EMULATED_VLLM_VERSION = DEFAULT_GENERATION.version;

/** Which simulator profile answers (`GET /version` → `loadlab_profile`; a LoadLab-only field). */
export interface SimProfileLabel {
  /** Profile id, the file stem under `profiles/`. */
  id: string;
  /** e.g. `spec-derived, not calibrated`. */
  status: string;
  /** GPU and model the profile models. */
  gpu: string;
  model: string;
}

/** What the routes share: the generation server, request rules, the off-loop tokenizer. */
export interface RouteContext {
  gen: GenServer;
  rules: RequestRules;
  offLoop: OffLoopTokenizer;
  /** Model path (`root` of the model card). */
  modelPath: string;
  /** The vLLM generation emulated (`--vllm-version`). */
  generation: Generation;
  /** The simulator profile, when known. */
  profile?: SimProfileLabel;
  /** The CPU the engine thread is pinned to, when it is (`GET /version` → `loadlab_engine_cpu`; LoadLab only). */
  engineCpu?: number;
  /** Server start, epoch s (`created` of the model permission). */
  startS: number;
  /** Requests generated so far (numbers the engine ids). */
  seq: number;
}

const parseBig = (ctx: RouteContext) => (bytes: Buffer) => ctx.offLoop.parseJson(bytes);

function modelsBody(ctx: RouteContext) {
  const model = ctx.gen.model;
  return {
    object: 'list',
    data: [
      {
        id: model,
        object: 'model',
        created: Math.floor(Date.now() / 1000),
        owned_by: 'vllm',
        root: ctx.modelPath,
        parent: null,
        max_model_len: ctx.rules.maxModelLen,
        permission: [
          {
            id: `modelperm-${uuidOf(ctx.generation.id, randomBytes(16).toString('hex'))}`,
            object: 'model_permission',
            created: ctx.startS,
            allow_create_engine: false,
            allow_sampling: true,
            allow_logprobs: true,
            allow_search_indices: false,
            allow_view: true,
            allow_fine_tuning: false,
            organization: '*',
            group: null,
            is_blocking: false,
          },
        ],
        loadlab_sim: true,
      },
    ],
  };
}

/**
 * The tokenizer for one generation request, its prompt tokenized off the event loop
 * (prompt-tokens.ts); a prompt too long by its characters alone is refused first.
 */
async function tokenizerFor(
  ctx: RouteContext,
  api: 'chat' | 'completions',
  body: Record<string, unknown>,
): Promise<SimTokenizer> {
  const { offLoop, rules } = ctx;
  const maxOut = requestedOutput(api, body);
  offLoop.checkCut(cutChars(body), maxOut, rules.maxModelLen);
  const text = promptOf(api, body);
  if (text === undefined) return ctx.gen.tok; // the request validation answers it
  offLoop.checkLength(text, maxOut, rules.maxModelLen);
  return offLoop.knowing(text, await offLoop.encode(text, rules.maxModelLen - 1));
}

/** `POST /v1/chat/completions` and `/v1/completions`. */
async function generate(ctx: RouteContext, req: IncomingMessage, reply: Reply, path: string, arrivalMs: number): Promise<void> {
  const { rules } = ctx;
  const api = path === '/v1/chat/completions' ? 'chat' : 'completions';
  const body = await readJson(req, (bytes) => ctx.offLoop.parseJson(bytes, rules.maxModelLen));
  ctx.gen.engine.runDue(); // before each slice of this request's work, a step due now ends first
  checkModel(body, rules);
  const tok = await tokenizerFor(ctx, api, body);
  ctx.gen.engine.runDue();
  const g = parseGenRequest(api, body, tok, rules);
  const header = req.headers['x-request-id'];
  const requestId = (Array.isArray(header) ? header[0] : header) || undefined;
  const rid =
    requestId ||
    (typeof body.request_id === 'string' && body.request_id) ||
    uuidOf(ctx.generation.id, randomBytes(16).toString('hex'));
  const id = `${api === 'chat' ? 'chatcmpl' : 'cmpl'}-${rid}`;
  const wire = wireShape(ctx.generation);
  runGeneration(ctx.gen, g, reply, { id, engineId: `${id}#${++ctx.seq}`, arrivalMs, wire, requestId });
}

/** `POST /tokenize`: a prompt or chat messages to token ids. */
async function tokenize(ctx: RouteContext, req: IncomingMessage, reply: Reply): Promise<void> {
  const { offLoop, rules } = ctx;
  const body = await readJson(req, parseBig(ctx));
  checkModel(body, rules);
  let tokens: number[];
  if (body.messages !== undefined) {
    const messages = checkMessages(body.messages);
    tokens = await offLoop.encode(
      renderChat(messages, { addGenerationPrompt: body.add_generation_prompt !== false }),
      rules.maxModelLen - 1,
    );
  } else if (typeof body.prompt === 'string') {
    tokens = await offLoop.encode(body.prompt, rules.maxModelLen - 1);
  } else throw validationError('prompt', 'Field required: send "prompt" (a string) or "messages"', 'prompt');
  reply.json(200, {
    count: tokens.length,
    max_model_len: rules.maxModelLen,
    tokens: tokens.slice(),
    token_strs: body.return_token_strs === true ? ctx.gen.tok.tokenStrs(tokens) : null,
  });
}

/** `POST /detokenize`: token ids to text. */
async function detokenize(ctx: RouteContext, req: IncomingMessage, reply: Reply): Promise<void> {
  const body = await readJson(req, parseBig(ctx));
  checkModel(body, ctx.rules);
  const ids = body.tokens;
  if (!Array.isArray(ids) || !ids.every((t) => Number.isInteger(t) && t >= 0))
    throw validationError('tokens', 'Input should be a list of token ids', 'tokens');
  reply.json(200, { prompt: ctx.gen.tok.decode(ids as number[]) });
}

/** `POST /loadlab/send-log` (LoadLab only): when the token chunks of the streams asked for were written (send-log.ts). */
async function sendLog(ctx: RouteContext, req: IncomingMessage, reply: Reply): Promise<void> {
  const body = await readJson(req, parseBig(ctx));
  const ids = body.request_ids;
  if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'string'))
    throw validationError('request_ids', 'Input should be a list of x-request-id strings', 'request_ids');
  const log = ctx.gen.sendLog;
  // Copying and serialising a long run's log (≈ 1 MB) waits for the gap after a step, as /metrics does.
  ctx.gen.engine.betweenSteps(() => reply.json(200, log ? log.take(ids as string[]) : { clock: SIM_SEND_LOG_CLOCK, sends: {} }));
}

/** Answer one request (errors are thrown as `ApiError`s for the server to reply with). */
export async function route(
  ctx: RouteContext,
  req: IncomingMessage,
  reply: Reply,
  info: RequestInfo,
  arrivalMs: number,
): Promise<void> {
  const { method, path } = info;
  const is = (m: string, p: string) => path === p && (method === m || (m === 'GET' && method === 'HEAD'));
  if (path === '/v1/chat/completions' || path === '/v1/completions') {
    if (method !== 'POST') throw new MethodNotAllowed(['POST']);
    await generate(ctx, req, reply, path, arrivalMs);
  } else if (is('GET', '/v1/models')) {
    reply.json(200, modelsBody(ctx));
  } else if (is('GET', '/health')) {
    reply.text(200, '');
  } else if (is('GET', '/version')) {
    const profile = ctx.profile ? { loadlab_profile: ctx.profile } : {};
    // Where the engine thread is pinned, and on which machine's boot (src/proc/cpu-split.ts).
    // Its process, so a client on the same machine can tell it from other programs (src/proc/cpu-users.ts).
    const cpu = ctx.engineCpu !== undefined ? { loadlab_engine_cpu: ctx.engineCpu } : {};
    const boot = bootId();
    const here = boot !== undefined ? { loadlab_boot_id: boot, loadlab_pid: process.pid } : {};
    reply.json(200, { version: ctx.generation.version, loadlab_sim: true, simulated: true, ...profile, ...cpu, ...here });
  } else if (is('GET', '/metrics')) {
    // Rendering (~56 KB, ≈0.6 ms) waits for the gap after a step, so a scrape never makes a step late.
    const { engine, metrics } = ctx.gen;
    engine.betweenSteps(() => reply.text(200, metrics.render(engine.stats()), 'text/plain; version=0.0.4; charset=utf-8'));
  } else if (is('POST', SIM_SEND_LOG_PATH)) {
    await sendLog(ctx, req, reply);
  } else if (is('POST', '/tokenize')) {
    await tokenize(ctx, req, reply);
  } else if (is('POST', '/detokenize')) {
    await detokenize(ctx, req, reply);
  } else if (['/v1/models', '/health', '/version', '/metrics'].includes(path)) {
    throw new MethodNotAllowed(['GET', 'HEAD']);
  } else if (path === '/tokenize' || path === '/detokenize' || path === SIM_SEND_LOG_PATH) {
    throw new MethodNotAllowed(['POST']);
  } else {
    // Starlette's router raises its own HTTPException(404); vLLM's handler is registered for FastAPI's
    // subclass (`from fastapi import HTTPException`, vllm/entrypoints/openai/server_utils.py), so FastAPI's
    // default handler answers (`fastapi/exception_handlers.py` http_exception_handler): {"detail":"Not Found"}.
    reply.json(404, { detail: 'Not Found' });
  }
}
