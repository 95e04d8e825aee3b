/**
 * `loadlab run`: send load to a server from the terminal and save the run folder.
 * Argument errors exit 2 with what to fix; an unusable target exits 1; Ctrl-C once stops
 * sending, cancels in-flight requests, writes the summary and exits 130; twice exits at once.
 */

import { parseArgs } from 'node:util';
import { resolveApiKey } from '../client/url';
import { CHALLENGES_PROMPT, promptOfTokens } from '../workload/prompts';
import { runLoad } from '../runner/runner';
import { burst, closedLoop, describeShape, openLoop, type LoadShape } from '../schedule/shapes';
import { explainNoModels } from '../runner/target-diagnosis';
import { makeRequest } from '../workload/workload';
import { checkRunDir } from '../run/folder';
import type { Api } from '../types';
import type { CliIo } from './io';
import { formatRunReport } from './report';

/** Usage of `loadlab run`. */
export const RUN_HELP = `Usage: loadlab run --base-url URL --out DIR <load> [options]

Load (pick one):
  --concurrency C --requests N      closed loop: C requests in flight, N in all
  --burst N                         N requests at once
  --rate R --requests N             open loop at R req/s (Poisson by default)
      [--burstiness K]              gamma shape of the gaps (1 Poisson, <1 burstier, inf constant)
      [--seed S]                    arrival seed (default 0)
      [--max-concurrency M]         cap in-flight requests (late ones wait, shown as queueMs)

Request:
  --model M                         default: the server's first model (GET /v1/models)
  --api chat|completions            default chat
  --prompt TEXT                     default the course prompt "${CHALLENGES_PROMPT}"
  --prompt-tokens P                 a prompt of P tokens (counted by the server's /tokenize)
  --max-tokens T                    output cap (default 128)
  --ignore-eos                      force exactly --max-tokens output tokens

Run:
  --out DIR                         run folder (required)
  --replace                         overwrite a complete run in DIR (only its run files)
  --warmup W                        warm-up requests first, not measured (default 0)
  --timeout-s S                     whole-request timeout (default 600)
  --idle-timeout-s S                no-bytes timeout (default 60)
  --api-key KEY                     default $LOADLAB_API_KEY or $OPENAI_API_KEY
  --quiet                           no progress line
`;

/** A command-line mistake; the message says what to fix. */
class UsageError extends Error {}

function int(name: string, v: string | undefined, min = 1): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer ≥ ${min}, got '${v}'`);
  return n;
}

function pos(name: string, v: string | undefined, allowInf = false): number | undefined {
  if (v === undefined) return undefined;
  const n = allowInf && /^inf(inity)?$/i.test(v) ? Infinity : Number(v);
  if (!(n > 0)) throw new UsageError(`--${name} must be a number > 0, got '${v}'`);
  return n;
}

/** Longest timer Node can arm: 2^31−1 ms (a longer one fires after 1 ms, with a warning), in s. */
const MAX_TIMER_S = Math.floor((2 ** 31 - 1) / 1000);

function seconds(name: string, v: string | undefined): number | undefined {
  const n = pos(name, v);
  if (n !== undefined && n > MAX_TIMER_S) {
    throw new UsageError(`--${name} must be at most ${MAX_TIMER_S} s (about 24 days, the longest timer Node allows), got '${v}'`);
  }
  return n;
}

const OPTIONS = {
  'base-url': { type: 'string' },
  model: { type: 'string' },
  api: { type: 'string' },
  concurrency: { type: 'string' },
  requests: { type: 'string' },
  burst: { type: 'string' },
  rate: { type: 'string' },
  burstiness: { type: 'string' },
  seed: { type: 'string' },
  'max-concurrency': { type: 'string' },
  prompt: { type: 'string' },
  'prompt-tokens': { type: 'string' },
  'max-tokens': { type: 'string' },
  'ignore-eos': { type: 'boolean' },
  warmup: { type: 'string' },
  'timeout-s': { type: 'string' },
  'idle-timeout-s': { type: 'string' },
  out: { type: 'string' },
  replace: { type: 'boolean' },
  'api-key': { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

/** The load shape and request count from the flags. */
function shapeFrom(v: Values): { shape: LoadShape; requests: number } {
  const given = (['concurrency', 'burst', 'rate'] as const).filter((k) => v[k] !== undefined);
  if (given.length === 0) {
    throw new UsageError('choose the load: --concurrency C --requests N, --burst N, or --rate R --requests N');
  }
  if (given.length > 1) {
    throw new UsageError(
      `--${given[0]} and --${given[1]} exclude each other; pick one load (to cap an open loop use --rate with --max-concurrency)`,
    );
  }
  const openOnly = (['burstiness', 'seed', 'max-concurrency'] as const).filter((k) => v[k] !== undefined);
  if (given[0] !== 'rate' && openOnly.length > 0) throw new UsageError(`--${openOnly[0]} only applies with --rate`);
  if (given[0] === 'burst') {
    if (v.requests !== undefined) throw new UsageError('--burst N already sets the request count; drop --requests');
    const n = int('burst', v.burst)!;
    return { shape: burst(n), requests: n };
  }
  const requests = int('requests', v.requests);
  if (requests === undefined) throw new UsageError(`--${given[0]} needs --requests N (how many requests in all)`);
  if (given[0] === 'concurrency') return { shape: closedLoop(int('concurrency', v.concurrency)!), requests };
  const o: { burstiness?: number; seed?: number; maxConcurrency?: number } = {};
  const b = pos('burstiness', v.burstiness, true);
  if (b !== undefined) o.burstiness = b;
  const seed = int('seed', v.seed, 0);
  if (seed !== undefined) o.seed = seed;
  const mc = int('max-concurrency', v['max-concurrency']);
  if (mc !== undefined) o.maxConcurrency = mc;
  return { shape: openLoop(pos('rate', v.rate, true)!, o), requests };
}

/** The prompt: `--prompt`, or one of `--prompt-tokens` tokens sized with the server's `/tokenize` (said when estimated). */
async function promptText(v: Values, promptTokens: number | undefined, apiKey: string | undefined, notes: string[], io: CliIo): Promise<string> {
  if (promptTokens === undefined) return v.prompt ?? CHALLENGES_PROMPT;
  const p = await promptOfTokens(promptTokens, { baseUrl: v['base-url'], model: v.model, ...(apiKey ? { apiKey } : {}) });
  notes.push(`prompt of ${p.tokens} tokens (${p.method}${p.note ? `: ${p.note}` : ''})`);
  if (p.estimated) io.stderr.write(`loadlab run: prompt length is estimated, not counted (${p.note})\n`);
  return p.text;
}

/** The checked flags, or `'help'`. Throws UsageError (or checkRunDir's Error) naming the fix. */
function parseRunArgs(argv: string[]): 'help' | { v: Values; shape: LoadShape; requests: number } {
  const v = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }).values;
  if (v.help) return 'help';
  if (!v['base-url']) throw new UsageError('--base-url is required, e.g. --base-url http://127.0.0.1:8000');
  if (!v.out) throw new UsageError('--out DIR is required: the folder where the run is saved, e.g. --out data/runs/c8');
  if (v.api !== undefined && v.api !== 'chat' && v.api !== 'completions') {
    throw new UsageError(`--api must be chat or completions, got '${v.api}'`);
  }
  if (v.prompt !== undefined && v['prompt-tokens'] !== undefined) {
    throw new UsageError('--prompt and --prompt-tokens exclude each other; give the text or its length');
  }
  const { shape, requests } = shapeFrom(v);
  seconds('timeout-s', v['timeout-s']);
  seconds('idle-timeout-s', v['idle-timeout-s']);
  checkRunDir(v.out, v.replace ?? false, '--replace'); // before any request: a bad --out fails first
  return { v, shape, requests };
}

/** `loadlab run …`; returns the exit code. */
export async function runCommand(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
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
    io.stderr.write('\nloadlab run: stopping: no new requests, cancelling those in flight, writing the summary (Ctrl-C again to quit at once)\n');
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
      progress: v.quiet ? false : true,
      manifestExtra: {
        ...(notes.length > 0 ? { notes } : {}),
        workload: { prompt: promptTokens !== undefined ? `${promptTokens} tokens` : text.slice(0, 80), api, maxTokens, ignoreEos: v['ignore-eos'] ?? false, requests, warmup },
      },
    });
    const t = result.manifest.target;
    const warnings = result.summary.health?.warnings ?? [];
    io.stdout.write(
      formatRunReport({
        summary: result.summary,
        dir: result.dir,
        status: result.manifest.status,
        targetLabel: `${t.kind}${t.simulated ? ' (simulated)' : ''} ${t.baseUrl} model ${t.model}`,
        loadLabel: `${describeShape(shape)}, ${requests} requests${warmup ? ` (+${warmup} warm-up)` : ''}`,
        warnings,
      }),
    );
    if (result.manifest.status === 'interrupted') return 130;
    return result.summary.requests > 0 && result.summary.completed === 0 ? 1 : 0;
  } catch (err) {
    let msg = err instanceof Error ? err.message : String(err);
    if (/did not list its models/.test(msg)) {
      const why = await explainNoModels(v['base-url']!, resolveApiKey(v['api-key']), '--api-key or LOADLAB_API_KEY');
      if (why) msg = why;
    }
    io.stderr.write(`loadlab run: ${msg}\n`);
    return err instanceof TypeError || err instanceof UsageError ? 2 : 1;
  } finally {
    process.off('SIGINT', onSigint);
  }
}
