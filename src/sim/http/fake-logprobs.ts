/**
 * Logprobs the simulator returns when a request asks for them. THEY ARE NOT REAL: there is
 * no model, so every sampled token gets the fixed value {@link SIM_LOGPROB}, and the
 * alternatives in `top_logprobs` are simply the next token ids of the vocabulary with
 * values SIM_LOGPROB − 1, − 2, … Only the shapes are vLLM's: chat `ChatCompletionLogProbs`
 * (`{"content":[{token, logprob, bytes, top_logprobs}]}`,
 * `vllm/entrypoints/openai/chat_completion/protocol.py`) and completions `CompletionLogProbs`
 * (`{text_offset, token_logprobs, tokens, top_logprobs}`, `completion/protocol.py`).
 */
import type { SimTokenizer } from './tokens';

/** The logprob every sampled token gets (natural log; a documented constant, not a measurement). */
export const SIM_LOGPROB = -0.5;

function entry(tok: SimTokenizer, id: number, lp: number) {
  const token = tok.decode([id]);
  return { token, logprob: lp, bytes: [...Buffer.from(token, 'utf8')] };
}

function alternatives(id: number, k: number): number[] {
  const out = [id];
  for (let j = 1; j < k; j++) out.push(id + j);
  return out;
}

/** Chat `logprobs` JSON for one chunk's token ids, with `top` alternatives per token (0..20). */
export function chatLogprobsJson(tok: SimTokenizer, ids: number[], top: number): string {
  const content = ids.map((id) => ({
    ...entry(tok, id, SIM_LOGPROB),
    top_logprobs: alternatives(id, top).map((a, j) => entry(tok, a, SIM_LOGPROB - j)),
  }));
  return JSON.stringify({ content });
}

/** Completions `logprobs` JSON for one chunk's token ids; `offset` is the text length before them. */
export function completionLogprobsJson(tok: SimTokenizer, ids: number[], top: number, offset: number): string {
  const tokens: string[] = [];
  const textOffset: number[] = [];
  const topLp: Array<Record<string, number>> = [];
  let at = offset;
  for (const id of ids) {
    const t = tok.decode([id]);
    tokens.push(t);
    textOffset.push(at);
    at += t.length;
    const alts: Record<string, number> = {};
    alternatives(id, Math.max(1, top)).forEach((a, j) => {
      const s = tok.decode([a]);
      if (!(s in alts)) alts[s] = SIM_LOGPROB - j;
    });
    topLp.push(alts);
  }
  return JSON.stringify({ text_offset: textOffset, token_logprobs: tokens.map(() => SIM_LOGPROB), tokens, top_logprobs: topLp });
}
