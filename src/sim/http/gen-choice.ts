/**
 * One choice of a generation: its engine request, its text so far and how much of it was sent;
 * stop strings cut it, as vLLM's detokenizer does (`vllm/v1/engine/detokenizer.py`).
 */
import { ApiError, type Reply } from './reply';
import type { GenRequest } from './requests';
import type { TextGen } from './tokens';
import type { EngineOutput } from '../engine/types';
import { seededRng } from '../../rng';
import { drawNaturalLength, type GenIdentity, type GenServer } from './gen-server';

/** One choice of a request: its own engine request (a child when n > 1), text and state. */
export interface Choice {
  index: number;
  engineId: string;
  naturalLength: number;
  gen: TextGen;
  /** Text so far (held-back characters included). */
  text: string;
  /** Characters of `text` already sent. */
  sent: number;
  /** Without stop strings: the text produced since the last output was made (`text.slice(sent)`, kept apart to avoid slicing). */
  unsent: string;
  /** The token ids so far; unless `whole`, only those not yet handed out in an output. */
  ids: number[];
  /** Tokens already handed out in outputs (vLLM's `RequestState.sent_tokens_offset`). */
  sentIds: number;
  /**
   * Keep the whole text and ids: a non-streamed answer, stop strings or logprobs need them. A streamed choice without
   * them keeps only what it has not sent yet, and the length of its text.
   */
  whole: boolean;
  /** Characters of the text so far (`text.length` when `whole`). */
  textLength: number;
  outputTokens: number;
  firstMs?: number;
  prevMs: number;
  reason?: string;
  stopReason: string | null;
}

/**
 * The `req.n` choices of a request, each seeded from the server's per-request seed source in
 * order; child engine ids are `<i>_<id>` when n > 1, as vLLM's `ParentRequest` names them.
 */
export function newChoices(s: GenServer, req: GenRequest, who: GenIdentity): Choice[] {
  const choices: Choice[] = [];
  for (let i = 0; i < req.n; i++) {
    const rng = seededRng(Math.floor(s.rng() * 2 ** 32));
    choices.push({
      index: i,
      engineId: req.n > 1 ? `${i}_${who.engineId}` : who.engineId,
      naturalLength: drawNaturalLength(rng),
      gen: s.tok.textGen(req.lang, rng),
      text: '',
      sent: 0,
      unsent: '',
      ids: [],
      sentIds: 0,
      whole: !req.stream || req.stop.length > 0 || req.logprobs !== undefined,
      textLength: 0,
      outputTokens: 0,
      prevMs: 0,
      stopReason: null,
    });
  }
  return choices;
}

/** Forgets every choice's queue times and aborts the engine requests of those not finished. */
export function abortChoices(s: GenServer, choices: Choice[]): void {
  for (const c of choices) {
    s.queue?.forget(c.engineId);
    if (!c.reason) s.engine.abort(c.engineId);
  }
}

/** The earliest stop string in `text` that ends after index `from` (text before it was checked already). */
function findStop(text: string, from: number, stop: string[]): { at: number; s: string } | undefined {
  let best: { at: number; s: string } | undefined;
  for (const s of stop) {
    const at = text.indexOf(s, Math.max(0, from - s.length + 1));
    if (at >= 0 && (!best || at < best.at)) best = { at, s };
  }
  return best;
}

/**
 * Appends one engine output to choice `c`: its text is cut at a stop string (whose engine
 * request is then aborted), as vLLM's detokenizer does (`vllm/v1/engine/detokenizer.py`).
 * Returns the finish reason, if this output finished the choice.
 */
export function advance(s: GenServer, req: GenRequest, c: Choice, out: EngineOutput): string | undefined {
  let reason: string | undefined = out.finishReason;
  const step = c.gen.next(out.newTokens, reason === 'stop' && !req.ignoreEos);
  const from = c.textLength;
  c.textLength += step.text.length;
  if (c.whole) c.text += step.text;
  if (req.stop.length === 0) c.unsent += step.text;
  const hit = out.outputTokens > req.minTokens && req.stop.length > 0 ? findStop(c.text, from, req.stop) : undefined;
  if (hit) {
    c.text = c.text.slice(0, hit.at);
    c.textLength = hit.at;
    c.stopReason = hit.s;
    if (!reason) s.engine.abort(c.engineId);
    reason = 'stop';
  }
  c.ids.push(...step.ids);
  c.outputTokens = out.outputTokens;
  return reason;
}

/**
 * Is an output made for this engine output? With `--stream-interval` N > 1 only when the choice
 * finished, nothing was sent yet (the first token), or N tokens gathered since the last one
 * (`RequestState.make_request_output`, `vllm/v1/engine/output_processor.py`); always when N = 1.
 */
export function outputDue(c: Choice, finished: boolean, streamInterval: number): boolean {
  return streamInterval <= 1 || finished || c.sentIds === 0 || unsentIds(c) >= streamInterval;
}

/** Token ids made but not yet handed out in an output. */
function unsentIds(c: Choice): number {
  return c.whole ? c.ids.length - c.sentIds : c.ids.length;
}

/** One choice's part of a streamed output: vLLM's `CompletionOutput` in DELTA mode. */
export interface ChoiceDelta {
  index: number;
  /** Text since the last output (held-back stop-string prefixes excluded). */
  text: string;
  /** Token ids since the last output. */
  ids: number[];
  /** Characters of the choice's text sent before this delta (completions logprobs' `text_offset` base). */
  offset: number;
  finishReason?: string;
  stopReason: string | null;
  /** The choice's output tokens so far (continuous usage's `completion_tokens`). */
  outputTokens: number;
}

/**
 * Makes the output of choice `c`: the text and ids since the last one. While unfinished, the last
 * (longest stop − 1) characters are held back, as vLLM's detokenizer does (`output_text_buffer_length`
 * in `get_next_output_text`), so `text` can be "".
 */
export function takeDelta(req: GenRequest, c: Choice, reason: string | undefined): ChoiceDelta {
  const offset = c.sent;
  let text: string;
  if (req.stop.length === 0) {
    // No stop strings: nothing is held back, so the new text is what was produced since (no slice of the growing text).
    text = c.unsent;
    c.unsent = '';
    c.sent = c.textLength;
  } else {
    const hold = reason ? 0 : Math.max(...req.stop.map((x) => x.length)) - 1;
    const upTo = Math.max(c.sent, c.text.length - hold);
    text = c.text.slice(c.sent, upTo);
    c.sent = upTo;
  }
  const ids = c.whole ? c.ids.slice(c.sentIds) : c.ids;
  c.sentIds += ids.length;
  if (!c.whole) c.ids = [];
  return { index: c.index, text, ids, offset, finishReason: reason, stopReason: c.stopReason, outputTokens: c.outputTokens };
}

/** Adds every choice's engine request; on an engine refusal answers vLLM's 400 and returns false. */
export function addChoices(
  s: GenServer,
  req: GenRequest,
  choices: Choice[],
  reply: Reply,
  onOutput: (c: Choice, out: EngineOutput) => void,
): boolean {
  try {
    for (const c of choices) {
      s.queue?.track(c.engineId, s.now());
      s.engine.add(
        {
          id: c.engineId,
          promptTokenIds: req.promptTokenIds.slice(),
          maxTokens: req.maxTokens,
          minTokens: req.minTokens,
          naturalLength: c.naturalLength,
          ignoreEos: req.ignoreEos,
          priority: req.priority,
        },
        (out) => onOutput(c, out),
      );
    }
    return true;
  } catch (err) {
    for (const c of choices) {
      s.queue?.forget(c.engineId);
      s.engine.abort(c.engineId);
    }
    // The engine only throws on requests it can never run (e.g. larger than the KV cache): vLLM answers those 400.
    const e = err instanceof ApiError ? err : new ApiError(400, err instanceof Error ? err.message : String(err));
    if (req.stream) {
      reply.streamError(e);
      reply.done();
    } else reply.error(e);
    return false;
  }
}
