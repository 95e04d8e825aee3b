/**
 * A lesson's context check, before its first point: does the server's `max_model_len` hold the
 * lesson's longest request (prompt tokens with the chat template + `max_tokens`)? vLLM rejects a
 * longer one with HTTP 400 (`_validate_input` in `vllm/entrypoints/openai/serving_engine.py`:
 * "This model's maximum context length is … tokens and your request has … input tokens"), so a
 * lesson that only found out at its long-prompt point (after several vLLM restarts) would waste
 * the learner's time. `runLoad` checks each point again (`preflight.ts`); this checks all of a
 * lesson's requests at once and names the `vllm serve` flag that fixes it. Sends no load: prompts
 * are counted with the server's own tokenizer (`POST /tokenize`).
 */
import { serveLine } from '../vllm/flag-check';
import type { ServerFlags } from '../vllm/flag-types';
import type { RequestSpec } from '../types';
import { checkPromptLengths, type PreflightReport } from '../runner/preflight';
import { resolveTarget } from '../runner/target';
import { resolveApiKey } from '../client/url';

/** What `checkLessonFits` needs of a target (a `LessonTarget` fits). */
export interface FitTarget {
  baseUrl: string;
  model: string;
  /** Flags the lesson asked for, used in the `vllm serve` line of the message. */
  flags?: ServerFlags;
}

/** What `checkLessonFits` found. */
export interface LessonFit extends PreflightReport {
  /** The server's `max_model_len`, tokens (undefined: it did not say, nothing was checked). */
  maxModelLen?: number;
}

/**
 * Throw, naming the `vllm serve` line with a large enough `--max-model-len`, when any of the
 * lesson's `requests` (prompt + `maxTokens`) exceeds the server's `max_model_len`.
 * Resolves with what was checked; a server without `max_model_len` or `/tokenize` is not checked
 * (`skipped` says why). Throws, naming the fix, when the server does not answer or does not serve `model`.
 * @param opts.maxChecks distinct prompts counted, longest first; default 64.
 */
export async function checkLessonFits(
  target: FitTarget,
  requests: readonly RequestSpec[],
  opts: { apiKey?: string; maxChecks?: number } = {},
): Promise<LessonFit> {
  const apiKey = resolveApiKey(opts.apiKey);
  const resolved = await resolveTarget(target.baseUrl, {
    ...(target.model ? { model: target.model } : {}),
    ...(apiKey ? { apiKey } : {}),
  });
  const maxModelLen = resolved.probe.maxModelLen;
  if (maxModelLen === undefined) {
    return { checked: 0, skipped: 'the server did not report max_model_len (GET /v1/models); request lengths were not checked' };
  }
  const model = resolved.model;
  try {
    const report = await checkPromptLengths(resolved.rootUrl, model, [...requests], maxModelLen, {
      ...(apiKey ? { apiKey } : {}),
      maxChecks: opts.maxChecks ?? 64,
    });
    return { ...report, maxModelLen };
  } catch (err) {
    const longest = /prompt of (\d+) tokens(?: and max_tokens (\d+))?/.exec((err as Error).message);
    const need = longest ? Number(longest[1]) + Number(longest[2] ?? 0) : undefined;
    // A round size at or above what this lesson needs: a suggested flag value, not a measurement.
    const suggest = need !== undefined ? Math.ceil(need / 1024) * 1024 : undefined;
    const flags = { ...(target.flags ?? {}), ...(suggest ? { maxModelLen: suggest } : {}) };
    throw new Error(
      `This lesson needs more context than the server holds (max_model_len ${maxModelLen}). ${(err as Error).message}\n` +
        `Start the server with a larger context before this lesson sends load:\n  ${serveLine(model, flags)}`,
    );
  }
}
