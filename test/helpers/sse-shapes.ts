/**
 * vLLM's exact stream and error JSON, as strings (vLLM fact sheet §1.1–1.5). Normal chunks are
 * compact like pydantic's `model_dump_json`; error events are spaced like Python's `json.dumps`.
 */

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

function usage(s: StreamShape, completion: number): string {
  const details = s.cachedTokens !== undefined ? `,"prompt_tokens_details":{"cached_tokens":${s.cachedTokens}}` : '';
  return `{"prompt_tokens":${s.promptTokens},"total_tokens":${s.promptTokens + completion},"completion_tokens":${completion}${details}}`;
}

function head(s: StreamShape): string {
  return s.api === 'chat'
    ? `{"id":"chatcmpl-${s.id}","object":"chat.completion.chunk","created":${s.created},"model":${JSON.stringify(s.model)}`
    : `{"id":"cmpl-${s.id}","object":"text_completion","created":${s.created},"model":${JSON.stringify(s.model)}`;
}

/** A chunk with one choice, as vLLM writes it (no `data: ` prefix). */
export function chunkJson(s: StreamShape, p: ChunkParts): string {
  const fr = p.finishReason !== undefined ? JSON.stringify(p.finishReason) : 'null';
  const u = p.usageCount !== undefined ? usage(s, p.usageCount) : undefined;
  if (s.api === 'completions') {
    const choice = `{"index":0,"text":${JSON.stringify(p.text ?? '')},"logprobs":null,"finish_reason":${fr},"stop_reason":null,"prompt_token_ids":null,"token_ids":null}`;
    const tail = u !== undefined ? `,"usage":${u}` : s.usageNull ? ',"usage":null' : '';
    return `${head(s)},"choices":[${choice}]${tail}}`;
  }
  const tail = u !== undefined ? `,"usage":${u}` : '';
  if (p.role) {
    return `${head(s)},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null${tail}}`;
  }
  const stop = p.finishReason !== undefined ? ',"stop_reason":null' : '';
  return `${head(s)},"choices":[{"index":0,"delta":{"content":${JSON.stringify(p.text ?? '')}},"logprobs":null,"finish_reason":${fr}${stop},"token_ids":null}]${tail}}`;
}

/** The final usage chunk: `choices: []` and the totals. */
export function usageJson(s: StreamShape, completion: number): string {
  return `${head(s)},"choices":[],"usage":${usage(s, completion)}}`;
}

/** vLLM's mid-stream error event (json.dumps spacing). */
export function errorEventJson(message: string, code: number): string {
  const type = code >= 500 ? 'InternalServerError' : 'BadRequestError';
  return `{"error": {"message": ${JSON.stringify(message)}, "type": "${type}", "param": null, "code": ${code}}}`;
}

const TYPES: Record<number, string> = {
  400: 'BadRequestError',
  401: 'Unauthorized',
  404: 'NotFoundError',
  429: 'Too Many Requests',
  500: 'InternalServerError',
  501: 'NotImplementedError',
  503: 'Service Unavailable',
};

/** A non-streamed error body: 'new' `{"error":{...}}` (vLLM ≥ 0.10.1) or 'old' `{"object":"error",...}`. */
export function errorBody(status: number, message: string, shape: 'new' | 'old'): unknown {
  const info = { message, type: TYPES[status] ?? 'InternalServerError', param: null, code: status };
  return shape === 'new' ? { error: info } : { object: 'error', ...info };
}
