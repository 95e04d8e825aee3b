/**
 * `loadlab doctor`, the max_model_len check: the longest request the lessons send (built by the
 * lessons' own builders), its prompt tokens counted with the chat template (the server's
 * `/tokenize`, else LoadLab's tokenizer) plus `max_tokens`, against the target's `max_model_len`.
 * Split out of `doctor-target.ts`, which re-exports these names. None throws.
 */
import { loadTokenizer, type ChatMessageIn } from '../sim/http/tokens';
import type { RequestSpec } from '../types';
import { longPlusShort, shortLongMix } from '../workload/workload';
import type { Check, TargetInfo } from './doctor-check';

/** `max_tokens` of lesson 04's 90/10 mix (notebooks/04-chunked-prefill.ipynb; a test checks the notebook still says so). */
export const LESSON04_MIX_MAX_TOKENS = 64;

/** The longest requests the lessons send (lesson 04's ≈4k-character long prompt), built by the lessons' own builders. */
export function longestLessonRequests(): { what: string; spec: RequestSpec }[] {
  const long = longPlusShort().requests!.find((r) => r.tag === 'long')!;
  const mix = shortLongMix(10, { maxTokens: LESSON04_MIX_MAX_TOKENS, fixedOutput: true }).find((r) => r.tag === 'long')!;
  return [
    { what: 'lesson 04 long prompt (longPlusShort)', spec: long },
    { what: 'lesson 04 90/10 mix, long request (shortLongMix)', spec: mix },
  ];
}
/** Prompt tokens of a chat request, chat template included: the server's `POST /tokenize` (messages form), else LoadLab's Qwen2.5 tokenizer. */
async function chatTokens(spec: RequestSpec, info: TargetInfo): Promise<{ count: number; how: string }> {
  if (info.baseUrl) {
    try {
      const res = await fetch(`${info.baseUrl}/tokenize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(info.apiKey ? { authorization: `Bearer ${info.apiKey}` } : {}) },
        // vLLM's chat form of /tokenize (vllm/entrypoints/serve/tokenize/protocol.py; vllm/entrypoints/openai/protocol.py in older releases).
        body: JSON.stringify({ model: info.model, messages: spec.messages, add_generation_prompt: true }),
        signal: AbortSignal.timeout(10_000),
      });
      const json = (await res.json()) as { count?: unknown };
      if (res.ok && typeof json.count === 'number') return { count: json.count, how: "the server's /tokenize" };
    } catch {
      /* fall back below */
    }
  }
  const tok = await loadTokenizer();
  return {
    count: tok.encodeChat(spec.messages as ChatMessageIn[], { addGenerationPrompt: true }).length,
    how: "LoadLab's Qwen2.5 tokenizer (/tokenize did not answer)",
  };
}

/** A `--max-model-len` that covers `tokens`: 8192, or the next power of two above it. */
export function recommendedMaxModelLen(tokens: number): number {
  return Math.max(8192, 2 ** Math.ceil(Math.log2(tokens)));
}

/** Whether the target's `max_model_len` covers the longest lesson request (prompt with chat template + max_tokens). */
export async function checkMaxModelLen(info: TargetInfo): Promise<Check> {
  const name = 'max_model_len';
  const sized = await Promise.all(longestLessonRequests().map(async (r) => ({ ...r, ...(await chatTokens(r.spec, info)) })));
  const longest = sized.reduce((a, b) => (b.count + (b.spec.maxTokens ?? 0) > a.count + (a.spec.maxTokens ?? 0) ? b : a));
  const need = longest.count + (longest.spec.maxTokens ?? 0);
  const what = `longest lesson request: ${longest.what}, ${longest.count.toLocaleString('en-US')} prompt tokens (chat template included, counted by ${longest.how}) + max_tokens ${longest.spec.maxTokens} = ${need.toLocaleString('en-US')}`;
  if (info.maxModelLen === undefined) {
    const fine = info.mode === 'launched';
    return {
      name,
      level: 'optional',
      ok: fine,
      detail: `${what}; the server's max_model_len is unknown${fine ? ' until LoadLab launches vLLM' : ''}`,
      ...(fine ? {} : { fix: `curl -s ${info.baseUrl}/v1/models  # look for max_model_len` }),
    };
  }
  const ok = info.maxModelLen >= need;
  return {
    name,
    level: 'required',
    ok,
    detail: `${what} ${ok ? '≤' : '>'} max_model_len ${info.maxModelLen.toLocaleString('en-US')}`,
    ...(ok ? {} : { fix: `vllm serve <model path> --port 8000 --max-model-len ${recommendedMaxModelLen(need)}  # restart vLLM` }),
  };
}
