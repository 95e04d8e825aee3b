/**
 * A fast path for the commonest SSE event of a stream: a chat token chunk in exactly the bytes
 * vLLM writes (`vllm/entrypoints/openai/chat_completion/serving.py` dumping
 * `ChatCompletionStreamResponse` of `chat_completion/protocol.py`: compact JSON, this key order;
 * src/wire/chunks.ts `chunkJson` writes the same), one choice, `finish_reason: null`, with or
 * without continuous `usage`. It reads the few fields the stream timer needs with one anchored
 * regular expression instead of `JSON.parse`, so no object tree is allocated per event.
 *
 * Exact by construction: the pattern only accepts text that is valid JSON of that one shape
 * (strings with JSON's escapes and no raw control characters, integers without leading zeros,
 * no whitespace, no other keys), and for it returns what `JSON.parse` would give for those
 * fields. Anything else (role chunk, finishing chunk, usage chunk, error event, logprobs, other
 * servers' key order or spacing) returns undefined and takes the `JSON.parse` path. A JSON
 * string's value is empty exactly when its raw text between the quotes is empty, so `hasText`
 * needs no unescaping. The only non-vLLM key accepted is LoadLab's null server's trailing send
 * time `"t"` (src/calibrate/null-streams.ts), a number.
 */

const STR = String.raw`"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"`;
const INT = String.raw`(?:0|[1-9][0-9]*)`;
const NUM = String.raw`-?${INT}(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`;
const TOKEN_CHUNK = new RegExp(
  String.raw`^\{"id":${STR},"object":"chat\.completion\.chunk","created":${INT},"model":${STR},` +
    String.raw`"choices":\[\{"index":${INT},"delta":\{"content":(${STR})\},"logprobs":null,"finish_reason":null(?:,"token_ids":null)?\}\]` +
    String.raw`(?:,"usage":\{"prompt_tokens":(${INT}),"total_tokens":${INT},"completion_tokens":(${INT})` +
    String.raw`(?:,"prompt_tokens_details":(?:null|\{"cached_tokens":(${INT})\}))?\})?(?:,"t":${NUM})?\}$`,
);

/** What the stream timer reads from a token chunk (see {@link readTokenChunk}). */
export interface TokenChunkFields {
  /** `choices[0].delta.content` is a non-empty string. */
  hasText: boolean;
  /** `usage.prompt_tokens`, when the chunk carries usage. */
  promptTokens?: number;
  /** `usage.completion_tokens`, when the chunk carries usage. */
  completionTokens?: number;
  /** `usage.prompt_tokens_details.cached_tokens`, when present and not null. */
  cachedTokens?: number;
}

/**
 * The fields of `data` when it is a chat token chunk of the exact vLLM shape, else undefined
 * (the caller then parses it with `JSON.parse`). Allocates the regex match and one small object.
 */
export function readTokenChunk(data: string): TokenChunkFields | undefined {
  if (data.charCodeAt(0) !== 123 /* { */) return undefined;
  const m = TOKEN_CHUNK.exec(data);
  if (m === null) return undefined;
  const out: TokenChunkFields = { hasText: m[1].length > 2 };
  if (m[2] !== undefined) {
    out.promptTokens = Number(m[2]);
    out.completionTokens = Number(m[3]);
    if (m[4] !== undefined) out.cachedTokens = Number(m[4]);
  }
  return out;
}

/**
 * The fields of `text` when it is exactly one SSE event `data: <token chunk>\n\n` (one line, then
 * a blank line), else undefined. Fed to an eventsource-parser that buffers nothing, such text
 * yields one event whose data is the line after `data: `; so this is exact when the caller's
 * parser is at an event boundary.
 */
export function tokenChunkEvent(text: string): TokenChunkFields | undefined {
  const n = text.length;
  if (n < 9 || text.charCodeAt(n - 1) !== 10 || text.indexOf('\n') !== n - 2 || !text.startsWith('data: ')) return undefined;
  return readTokenChunk(text.slice(6, n - 2));
}
