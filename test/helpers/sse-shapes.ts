/**
 * vLLM's exact stream and error JSON, as strings (vLLM fact sheet §1.1–1.5). Normal chunks are
 * compact like pydantic's `model_dump_json`; error events are spaced like Python's `json.dumps`.
 * A thin adapter over src/wire/chunks.ts, the one writer of these shapes.
 */
import {
  chunkHead,
  chunkJson as wireChunk,
  ERROR_TYPES,
  errorBody as wireErrorBody,
  errorEventJson as wireErrorEvent,
  usageChunkJson,
  usageJson as wireUsage,
} from '../../src/wire/chunks';

/** Per-response constants of a stream. */
export interface StreamShape {
  api: 'chat' | 'completions';
  /** Suffix of `chatcmpl-<id>` / `cmpl-<id>` (vLLM uses the x-request-id). */
  id: string;
  /** Unix seconds, the same on every chunk. */
  created: number;
  model: string;
  promptTokens: number;
  cachedTokens?: number;
  /** Completions: `"usage":null` on chunks without usage. */
  usageNull: boolean;
}

/** One chunk's contents. */
export interface ChunkParts {
  /** Chat role-only chunk (`delta: {role: "assistant", content: ""}`). */
  role?: boolean;
  text?: string;
  finishReason?: string;
  /** Running completion_tokens, with continuous usage; undefined without it. */
  usageCount?: number;
}

function head(s: StreamShape): string {
  return chunkHead({ api: s.api, id: `${s.api === 'chat' ? 'chatcmpl' : 'cmpl'}-${s.id}`, created: s.created, model: s.model });
}

function usage(s: StreamShape, completion: number): string {
  return wireUsage({ promptTokens: s.promptTokens, completionTokens: completion, cachedTokens: s.cachedTokens });
}

/** A chunk with one choice, as vLLM writes it (no `data: ` prefix); built by src/wire/chunks.ts. */
export function chunkJson(s: StreamShape, p: ChunkParts): string {
  const u = p.usageCount !== undefined ? usage(s, p.usageCount) : undefined;
  return wireChunk(
    s.api,
    head(s),
    { role: p.role, text: p.text, finishReason: p.finishReason },
    { usage: u, usageNull: s.usageNull },
  );
}

/** The final usage chunk: `choices: []` and the totals. */
export function usageJson(s: StreamShape, completion: number): string {
  return usageChunkJson(head(s), usage(s, completion));
}

/** vLLM's mid-stream error event (json.dumps spacing). */
export function errorEventJson(message: string, code: number): string {
  return wireErrorEvent({ message, type: code >= 500 ? 'InternalServerError' : 'BadRequestError', param: null, code });
}

/** A non-streamed error body: 'new' `{"error":{...}}` (vLLM ≥ 0.10.1) or 'old' `{"object":"error",...}`. */
export function errorBody(status: number, message: string, shape: 'new' | 'old'): unknown {
  return wireErrorBody({ message, type: ERROR_TYPES[status] ?? 'InternalServerError', param: null, code: status }, shape);
}
