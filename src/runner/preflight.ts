/**
 * Before any load: would a request of this workload be rejected for its length? vLLM answers
 * 400 when prompt tokens + max_tokens > max_model_len, so a run of 50 such requests would be 50
 * identical failures. Each distinct prompt (the longest first, at most `maxChecks`) is counted
 * with the server's own tokenizer (`POST /tokenize`, chat form for chat requests, so the chat
 * template is included) and checked against `max_model_len` from `/v1/models`.
 * A server without `/tokenize` is not checked (the caller notes that); nothing here sends load.
 */
import { fetchText } from '../client/fetch-text';
import { resolveApiKey, type TargetAuth, targetHeaders } from '../client/url';
import type { RequestSpec } from '../types';

/** What the preflight did. */
export interface PreflightReport {
  /** Distinct prompts counted with `/tokenize`. */
  checked: number;
  /** Longest prompt seen, tokens. */
  maxPromptTokens?: number;
  /** Why it could not check, when it could not (e.g. no `/tokenize`). */
  skipped?: string;
}

function specKey(s: RequestSpec): string {
  return JSON.stringify([s.api ?? 'chat', s.messages ?? null, s.prompt ?? null, s.maxTokens ?? null]);
}

function specChars(s: RequestSpec): number {
  if (typeof s.prompt === 'string') return s.prompt.length;
  if (Array.isArray(s.prompt)) return s.prompt.length;
  return (s.messages ?? []).reduce((n, m) => n + m.content.length, 0);
}

/** Token count, or the HTTP status when `/tokenize` did not give one. */
async function countTokens(
  rootUrl: string,
  model: string,
  spec: RequestSpec,
  auth: TargetAuth,
): Promise<number | { status: number }> {
  if (Array.isArray(spec.prompt)) return spec.prompt.length;
  const chat = (spec.api ?? 'chat') === 'chat';
  const body = chat
    ? { model, messages: spec.messages ?? [{ role: 'user', content: String(spec.prompt ?? '') }], add_generation_prompt: true }
    : { model, prompt: spec.prompt ?? '' };
  const res = await fetchText(`${rootUrl}/tokenize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...targetHeaders(auth) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  if (res.status !== 200) return { status: res.status };
  const count = (JSON.parse(res.text) as { count?: unknown }).count;
  return typeof count === 'number' ? count : { status: res.status };
}

/**
 * Throw, naming the fix, if any distinct prompt of `specs` plus its `maxTokens` exceeds
 * `maxModelLen`. Resolves with what was checked; never throws for an unreachable `/tokenize`.
 */
export async function checkPromptLengths(
  rootUrl: string,
  model: string,
  specs: RequestSpec[],
  maxModelLen: number,
  opts: {
    /** Default `$LOADLAB_API_KEY`, else `$OPENAI_API_KEY`. */ apiKey?: string;
    /** Extra headers (`--header`), sent on every `/tokenize` call. */ headers?: Record<string, string>;
    maxChecks?: number;
  } = {},
): Promise<PreflightReport> {
  const distinct = new Map<string, RequestSpec>();
  for (const s of specs) distinct.set(specKey(s), s);
  const longest = [...distinct.values()].sort((a, b) => specChars(b) - specChars(a)).slice(0, opts.maxChecks ?? 16);
  let checked = 0;
  let maxPromptTokens: number | undefined;
  const apiKey = resolveApiKey(opts.apiKey);
  for (const spec of longest) {
    let n: number | { status: number };
    try {
      n = await countTokens(rootUrl, model, spec, { apiKey, headers: opts.headers });
    } catch (err) {
      return { checked, skipped: `POST /tokenize failed (${(err as Error).message}); prompt lengths were not checked` };
    }
    if (typeof n !== 'number') {
      const auth = n.status === 401 || n.status === 403;
      const why = auth
        ? `POST /tokenize answered ${n.status} (${apiKey ? 'the API key was refused' : 'it wants an API key: pass apiKey (--api-key) or set LOADLAB_API_KEY'})`
        : `the server has no usable POST /tokenize (HTTP ${n.status})`;
      return { checked, skipped: `${why}; prompt lengths were not checked` };
    }
    checked++;
    maxPromptTokens = Math.max(maxPromptTokens ?? 0, n);
    const out = spec.maxTokens ?? 0;
    if (n + out > maxModelLen) {
      const what = spec.tag ? `A '${spec.tag}' request` : 'A request';
      throw new Error(
        `${what} has a prompt of ${n} tokens${out ? ` and max_tokens ${out}` : ''}, ${n + out - maxModelLen} more than the server's ` +
          `max_model_len ${maxModelLen}; vLLM would reject every such request with HTTP 400. Shorten the prompt, lower ` +
          'max_tokens, or start the server with a larger --max-model-len.',
      );
    }
  }
  return { checked, ...(maxPromptTokens !== undefined ? { maxPromptTokens } : {}) };
}
