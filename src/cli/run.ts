/**
 * `loadlab run`: send load to a server from the terminal and save the run folder.
 * Argument errors exit 2 with what to fix; an unusable target exits 1; Ctrl-C once stops
 * sending, cancels in-flight requests, writes the summary and exits 130; twice exits at once.
 */

import { resolveApiKey, type TargetAuth } from '../client/url';
import { CHALLENGES_PROMPT, promptOfTokens } from '../workload/prompts';
import { type RunLoadOptions, type RunResult, runLoad } from '../runner/runner';
import { describeShape, type LoadShape, timeline } from '../schedule/shapes';
import { explainNoModels } from '../runner/target-diagnosis';
import { makeRequest } from '../workload/workload';
import { DatasetError, type LoadedDataset, loadDataset } from '../workload/datasets/index';
import type { Api, RequestSpec } from '../types';
import type { CliIo } from './io';
import { isSessions, sessionsDataset } from './run-sessions';
import { writeVllmResult } from '../exchange/vllm-result';
import type { VllmMetric } from '../exchange/vllm-result-file';
import { resultJsonFlag } from './run-dataset-args';
import { int, parseRunArgs, RUN_HELP, type RunArgs, seconds, UsageError, type Values } from './run-args';
import { runReport } from './run-report';

export { RUN_HELP } from './run-args';

/** The prompt: `--prompt`, or one of `--prompt-tokens` tokens sized with the server's `/tokenize` (said when estimated). */
async function promptText(
  v: Values,
  promptTokens: number | undefined,
  auth: TargetAuth,
  notes: string[],
  io: CliIo,
): Promise<string> {
  if (promptTokens === undefined) return v.prompt ?? CHALLENGES_PROMPT;
  const p = await promptOfTokens(promptTokens, { baseUrl: v['base-url'], model: v.model, ...auth });
  notes.push(`prompt of ${p.tokens} tokens (${p.method}${p.note ? `: ${p.note}` : ''})`);
  if (p.estimated) io.stderr.write(`loadlab run: prompt length is estimated, not counted (${p.note})\n`);
  return p.text;
}

/** The dataset of `--dataset-name`, loaded with the run's count, seed, API and --ignore-eos; throws DatasetError. */
function datasetOf(a: RunArgs): LoadedDataset | undefined {
  if (!a.dataset) return undefined;
  if (a.v['multi-turn']) return sessionsDataset(a);
  const seed = int('seed', a.v.seed, 0);
  return loadDataset({
    ...a.dataset,
    ...(a.numPrompts !== undefined ? { numPrompts: a.numPrompts } : {}),
    ...(seed !== undefined ? { seed } : {}),
    api: (a.v.api ?? 'chat') as Api,
    ignoreEos: a.v['ignore-eos'] ?? false,
  });
}

/** Parsed flags and the loaded dataset, or the exit code 0 (help) / 2 (a mistake, said on stderr). */
function parseAll(argv: string[], io: CliIo): number | { args: RunArgs; ds: LoadedDataset | undefined } {
  try {
    const args = parseRunArgs(argv);
    if (args === 'help') {
      io.stdout.write(RUN_HELP);
      return 0;
    }
    resultJsonFlag(args.v); // a bad --result-json fails before any request
    return { args, ds: datasetOf(args) };
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    const hint = err instanceof DatasetError ? '' : '\n(loadlab run --help lists the flags)';
    io.stderr.write(`loadlab run: ${msg}${hint}\n`);
    return 2;
  }
}

/** What to send and how: the dataset's requests (a trace brings its own timeline), else the one prompt. */
function loadPlan(
  args: RunArgs,
  ds: LoadedDataset | undefined,
  single: RequestSpec | undefined,
): { workload?: RequestSpec[]; requests: number; shape: LoadShape } {
  const extra = args.request.extraBody;
  const withBody = (s: RequestSpec): RequestSpec => (extra ? { ...s, extraBody: { ...s.extraBody, ...extra } } : s);
  if (!ds) return { workload: [withBody(single!)], requests: args.numPrompts!, shape: args.shape! };
  if (isSessions(ds)) return { requests: ds.requests.length, shape: ds.sessions };
  const specs = ds.requests.map(withBody);
  if (ds.atMs) {
    const at = ds.atMs;
    return { workload: specs, requests: specs.length, shape: timeline(specs.map((request, i) => ({ atMs: at[i], request }))) };
  }
  return { workload: specs, requests: specs.length, shape: args.shape! };
}

/** `runLoad`'s options from the flags and the plan (everything but the workload description). */
function loadOptions(args: RunArgs, plan: ReturnType<typeof loadPlan>, apiKey: string | undefined): RunLoadOptions {
  const v = args.v;
  const timeoutS = seconds('timeout-s', v['timeout-s']);
  const idleS = seconds('idle-timeout-s', v['idle-timeout-s']);
  return {
    baseUrl: v['base-url']!,
    ...(v.model !== undefined ? { model: v.model } : {}),
    ...(apiKey !== undefined ? { apiKey } : {}),
    ...(args.request.headers ? { headers: args.request.headers } : {}),
    ...(plan.workload ? { workload: plan.workload } : {}),
    requests: plan.requests,
    ...(args.slo ? { slo: args.slo } : {}),
    shape: plan.shape,
    warmup: int('num-warmups', v['num-warmups'], 0) ?? 0,
    out: v.out!,
    replace: v.replace ?? false,
    ...(timeoutS !== undefined ? { timeoutMs: timeoutS * 1000 } : {}),
    ...(idleS !== undefined ? { idleTimeoutMs: idleS * 1000 } : {}),
    ...(args.durationS !== undefined ? { durationMs: args.durationS * 1000 } : {}),
    ...(args.metricsIntervalMs !== undefined ? { sampleMetrics: args.metricsIntervalMs } : {}),
    ...(args.workers !== undefined ? { workers: args.workers } : {}),
    ...(args.stamp !== undefined ? { stamp: args.stamp } : {}),
    progress: !v.quiet,
  };
}

/** What to print for a failed run: the error's message, or why the server listed no models. */
async function failureMessage(err: unknown, args: RunArgs): Promise<string> {
  let msg = err instanceof Error ? err.message : String(err);
  if (/did not list its models/.test(msg)) {
    const hint = '--api-key or LOADLAB_API_KEY, or the header a gateway wants with --header KEY=VALUE';
    const why = await explainNoModels(args.v['base-url']!, resolveApiKey(args.v['api-key']), hint, args.request.headers);
    if (why) msg = why;
  }
  return msg;
}

/**
 * `--result-json vllm[:FILE]`: write the run as `vllm bench serve`'s result file; the line to print, or ''.
 * vLLM's client-queue metrics are left out of the file: LoadLab's queue is counted from the intended
 * send time, vLLM's from its arrival loop (see percentile-table.ts), so the keys would not mean the same.
 */
function vllmResultLine(result: RunResult, args: RunArgs): string {
  const rj = resultJsonFlag(args.v);
  const p = args.percentiles;
  const metrics = p?.metrics?.filter((m): m is VllmMetric => m === 'ttft' || m === 'tpot' || m === 'itl' || m === 'e2el');
  const choice = {
    ...(metrics ? { metrics } : {}),
    ...(p?.percentiles ? { percentiles: p.percentiles } : {}),
    ...(args.slo ? { slo: args.slo } : {}),
  };
  return rj ? `vllm bench serve result: ${writeVllmResult(result, rj.file, choice)}\n` : '';
}

/** `loadlab run …`; returns the exit code. */
export async function runCommand(
  argv: string[],
  io: CliIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const parsed = parseAll(argv, io);
  if (typeof parsed === 'number') return parsed;
  const { args, ds } = parsed;
  const v = args.v;

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
    const apiKey = resolveApiKey(v['api-key']); // the same key and headers for /tokenize as for the run
    const auth = { ...(apiKey ? { apiKey } : {}), ...(args.request.headers ? { headers: args.request.headers } : {}) };
    const text = ds ? undefined : await promptText(v, promptTokens, auth, notes, io);
    const single = text === undefined ? undefined : makeRequest(text, { api, maxTokens, fixedOutput: v['ignore-eos'] ?? false });
    const plan = loadPlan(args, ds, single);
    const { requests, shape } = plan;
    if (ds && !isSessions(ds) && args.numPrompts !== undefined && requests !== args.numPrompts) {
      notes.push(`the ${ds.name} dataset gave ${requests} requests for --num-prompts ${args.numPrompts}`);
    }
    const warmup = int('num-warmups', v['num-warmups'], 0) ?? 0;
    const result = await runLoad({
      ...loadOptions(args, plan, apiKey),
      signal: stop.signal,
      manifestExtra: {
        ...(notes.length > 0 ? { notes } : {}),
        workload: {
          ...(ds ? ds.info : { prompt: promptTokens !== undefined ? `${promptTokens} tokens` : text!.slice(0, 80), maxTokens }),
          api,
          ignoreEos: v['ignore-eos'] ?? false,
          requests,
          warmup,
          ...(args.percentiles
            ? { percentileMetrics: args.percentiles.metrics, metricPercentiles: args.percentiles.percentiles }
            : {}),
          ...args.request.info,
        },
      },
    });
    const from = ds ? `, dataset ${ds.name}` : '';
    const count = args.durationS === undefined ? `${requests} requests` : `${args.durationS} s, at most ${requests} requests`;
    io.stdout.write(runReport(result, `${describeShape(shape)}, ${count}${from}${warmup ? ` (+${warmup} warm-up)` : ''}`, args));
    io.stdout.write(vllmResultLine(result, args));
    if (result.manifest.status === 'interrupted') return 130;
    return result.summary.requests > 0 && result.summary.completed === 0 ? 1 : 0;
  } catch (err) {
    const msg = await failureMessage(err, args);
    io.stderr.write(`loadlab run: ${msg}\n`);
    return err instanceof TypeError || err instanceof UsageError ? 2 : 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
