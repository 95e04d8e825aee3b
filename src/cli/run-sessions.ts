/**
 * `loadlab run --dataset-name sharegpt --dataset-path F --multi-turn [--think-time-ms MS]`: the
 * ShareGPT conversations as a `sessions` load shape (src/schedule/sessions.ts). `--num-prompts`
 * counts conversations (drawn with `--seed`, never oversampled), `--max-concurrency` is how many
 * are live at once (default 1, as vLLM's multi-turn benchmark's `--num-clients`), each turn asks
 * for its dataset answer's estimated length (`--sharegpt-output-len` overrides; vLLM's
 * `--limit-max-tokens` default takes the answer's tokenizer count), and `--ignore-eos` forces it.
 */

import { sessions, type SessionsShape, turnSpec } from '../schedule/sessions';
import { DatasetError, type LoadedDataset } from '../workload/datasets/index';
import { readShareGpt, sessionScripts } from '../workload/datasets/sharegpt';
import { int, type RunArgs } from './run-args';
import { multiTurnFlags } from './run-dataset-args';

/** A loaded dataset whose requests go as conversations: `requests` are the turns with the dataset's answers (estimates only). */
export type SessionsDataset = LoadedDataset & { sessions: SessionsShape };

/** Is `ds` a multi-turn dataset? */
export function isSessions(ds: LoadedDataset | undefined): ds is SessionsDataset {
  return ds !== undefined && 'sessions' in ds;
}

/** The conversations of `--multi-turn` as a sessions shape; throws UsageError / DatasetError naming the fix. */
export function sessionsDataset(a: RunArgs): SessionsDataset {
  const { thinkTimeMs } = multiTurnFlags(a.v as Record<string, unknown>)!;
  const path = a.dataset?.path;
  if (!path) throw new DatasetError('the sharegpt dataset needs a file: pass --dataset-path (path)');
  const seed = int('seed', a.v.seed, 0) ?? 0;
  const wanted = a.numPrompts!;
  const convs = readShareGpt(path);
  const { scripts, dropped } = sessionScripts(convs, {
    numConversations: wanted,
    seed,
    ...(a.dataset?.outputLen !== undefined ? { outputLen: a.dataset.outputLen } : {}),
    ignoreEos: a.v['ignore-eos'] ?? false,
  });
  if (scripts.length === 0) {
    throw new DatasetError('no usable conversation: each needs a user turn followed by an answer, alternating user/assistant', {
      file: path,
    });
  }
  const maxConcurrency = int('max-concurrency', a.v['max-concurrency']) ?? 1;
  const shape = sessions(scripts, { maxConcurrency, thinkTimeMs });
  const requests = scripts.flatMap((s) => s.turns.map((_, k) => turnSpec(s, k, s.datasetAnswers ?? [])));
  const info: Record<string, unknown> = {
    dataset: 'sharegpt',
    path,
    seed,
    multiTurn: true,
    conversations: scripts.length,
    ...(scripts.length < wanted ? { conversationsAsked: wanted } : {}),
    dropped,
    turns: requests.length,
    thinkTimeMs,
    history: 'the answers received live (as vLLM benchmarks/multi_turn)',
    outputLen: a.dataset?.outputLen ?? 'each turn: its dataset answer, estimated tokens',
  };
  return { name: 'sharegpt', requests, info, sessions: shape };
}
