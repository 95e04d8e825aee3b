/**
 * `loadlab run`: send load to a server from the terminal and save the run folder.
 * Argument errors exit 2 with what to fix; an unusable target exits 1; Ctrl-C once stops
 * sending, cancels in-flight requests, writes the summary and exits 130; twice exits at once.
 */

import { resolveApiKey } from '../client/url';
import { CHALLENGES_PROMPT, promptOfTokens } from '../workload/prompts';
import { runLoad, type RunResult } from '../runner/runner';
import { describeShape } from '../schedule/shapes';
import { explainNoModels } from '../runner/target-diagnosis';
import { makeRequest } from '../workload/workload';
import type { Api } from '../types';
import type { CliIo } from './io';
import { formatRunReport } from './report';
import { int, parseRunArgs, RUN_HELP, seconds, UsageError, type Values } from './run-args';

export { RUN_HELP } from './run-args';

/** The prompt: `--prompt`, or one of `--prompt-tokens` tokens sized with the server's `/tokenize` (said when estimated). */
async function promptText(
  v: Values,
  promptTokens: number | undefined,
  apiKey: string | undefined,
  notes: string[],
  io: CliIo,
): Promise<string> {
  if (promptTokens === undefined) return v.prompt ?? CHALLENGES_PROMPT;
  const p = await promptOfTokens(promptTokens, { baseUrl: v['base-url'], model: v.model, ...(apiKey ? { apiKey } : {}) });
  notes.push(`prompt of ${p.tokens} tokens (${p.method}${p.note ? `: ${p.note}` : ''})`);
  if (p.estimated) io.stderr.write(`loadlab run: prompt length is estimated, not counted (${p.note})\n`);
  return p.text;
}

/** The report printed after a run; `loadLabel` describes the load (shape, requests, warm-up). */
function reportOf(result: RunResult, loadLabel: string): string {
  const t = result.manifest.target;
  const warnings = result.summary.health?.warnings ?? [];
  return formatRunReport({
    summary: result.summary,
    dir: result.dir,
    status: result.manifest.status,
    targetLabel: `${t.kind}${t.simulated ? ' (simulated)' : ''} ${t.baseUrl} model ${t.model}`,
    loadLabel,
    warnings,
  });
}

/** What to print for a failed run: the error's message, or why the server listed no models. */
async function failureMessage(err: unknown, v: Values): Promise<string> {
  let msg = err instanceof Error ? err.message : String(err);
  if (/did not list its models/.test(msg)) {
    const why = await explainNoModels(v['base-url']!, resolveApiKey(v['api-key']), '--api-key or LOADLAB_API_KEY');
    if (why) msg = why;
  }
  return msg;
}

/** `loadlab run …`; returns the exit code. */
export async function runCommand(
  argv: string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  let parsed: ReturnType<typeof parseRunArgs>;
  try {
    parsed = parseRunArgs(argv);
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    io.stderr.write(`loadlab run: ${msg}\n(loadlab run --help lists the flags)\n`);
    return 2;
  }
  if (parsed === 'help') {
    io.stdout.write(RUN_HELP);
    return 0;
  }
  const { v, shape, requests } = parsed;

  const stop = new AbortController();
  let sigints = 0;
  const onSigint = () => {
    sigints++;
    if (sigints > 1) process.exit(130);
    io.stderr.write(
      '\nloadlab run: stopping: no new requests, cancelling those in flight, writing the summary (Ctrl-C again to quit at once)\n',
    );
    stop.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    const api = (v.api ?? 'chat') as Api;
    const maxTokens = int('max-tokens', v['max-tokens']) ?? 128;
    const notes: string[] = [];
    const promptTokens = int('prompt-tokens', v['prompt-tokens']);
    const apiKey = resolveApiKey(v['api-key']); // the same key for /tokenize as for the run
    const text = await promptText(v, promptTokens, apiKey, notes, io);
    const spec = makeRequest(text, { api, maxTokens, fixedOutput: v['ignore-eos'] ?? false });
    const warmup = int('warmup', v.warmup, 0) ?? 0;
    const timeoutS = seconds('timeout-s', v['timeout-s']);
    const idleS = seconds('idle-timeout-s', v['idle-timeout-s']);
    const result = await runLoad({
      baseUrl: v['base-url']!,
      ...(v.model !== undefined ? { model: v.model } : {}),
      ...(apiKey !== undefined ? { apiKey } : {}),
      workload: [spec],
      requests,
      shape,
      warmup,
      out: v.out!,
      replace: v.replace ?? false,
      ...(timeoutS !== undefined ? { timeoutMs: timeoutS * 1000 } : {}),
      ...(idleS !== undefined ? { idleTimeoutMs: idleS * 1000 } : {}),
      signal: stop.signal,
      progress: !v.quiet,
      manifestExtra: {
        ...(notes.length > 0 ? { notes } : {}),
        workload: {
          prompt: promptTokens !== undefined ? `${promptTokens} tokens` : text.slice(0, 80),
          api,
          maxTokens,
          ignoreEos: v['ignore-eos'] ?? false,
          requests,
          warmup,
        },
      },
    });
    io.stdout.write(reportOf(result, `${describeShape(shape)}, ${requests} requests${warmup ? ` (+${warmup} warm-up)` : ''}`));
    if (result.manifest.status === 'interrupted') return 130;
    return result.summary.requests > 0 && result.summary.completed === 0 ? 1 : 0;
  } catch (err) {
    const msg = await failureMessage(err, v);
    io.stderr.write(`loadlab run: ${msg}\n`);
    return err instanceof TypeError || err instanceof UsageError ? 2 : 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
