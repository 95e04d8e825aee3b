/**
 * A request's state inside the engine (vLLM's `Request`): token counts, progress, KV blocks,
 * and the stop rule. Counts only; the engine never sees text.
 */
import type { KvSeq } from './kv';
import type { EngineOutput, EngineRequestInput, FinishReason } from './types';

/** Where a request is: vLLM's WAITING / RUNNING / PREEMPTED (here 'swapped' in swap mode) / FINISHED. */
export type RequestStatus = 'waiting' | 'running' | 'swapped' | 'finished';

/** Engine-side request. Fields are mutated by the scheduler; read them, don't write them. */
export interface SimRequest extends KvSeq {
  readonly id: string;
  readonly input: EngineRequestInput;
  readonly promptTokens: number;
  /** Engine clock time the request was added, ms. */
  readonly arrivalMs: number;
  /** `priority` of the request (lower = earlier under `--scheduling-policy priority`), default 0. */
  readonly priority: number;
  readonly onOutput: (out: EngineOutput) => void;
  status: RequestStatus;
  /** Generated tokens so far (EOS included). */
  outputTokens: number;
  /** Tokens whose KV is computed (vLLM's num_computed_tokens), prefix-cache hits included. */
  computed: number;
  /** Tokens scheduled for this request by the latest `schedule()` that included it. */
  scheduled: number;
  /** Tokens its steps in flight will sample, not yet appended (vLLM's `num_output_placeholders`; async scheduling). */
  placeholders: number;
  numPreemptions: number;
  /** Prompt tokens served from the prefix cache at first admission; −1 until then. */
  cachedTokens: number;
  /** Engine clock time of the step that first scheduled it, ms; −1 until then. */
  firstScheduledMs: number;
  /** Whether the prompt has been counted in promptTokens (first prefill completion). */
  promptCounted: boolean;
}

/** Build the engine state for `input`; `salt` makes its generated-token hashes unique. */
export function newSimRequest(
  input: EngineRequestInput,
  arrivalMs: number,
  salt: number,
  onOutput: (out: EngineOutput) => void,
): SimRequest {
  return {
    id: input.id,
    input,
    promptTokenIds: input.promptTokenIds,
    promptTokens: input.promptTokenIds.length,
    arrivalMs,
    priority: input.priority ?? 0,
    onOutput,
    salt,
    status: 'waiting',
    outputTokens: 0,
    computed: 0,
    scheduled: 0,
    placeholders: 0,
    numPreemptions: 0,
    cachedTokens: -1,
    firstScheduledMs: -1,
    promptCounted: false,
    blocks: [],
    hashes: [],
    registered: 0,
    cpuBlocks: 0,
  };
}

/** vLLM's `num_tokens`: prompt + generated. */
export function numTokens(r: SimRequest): number {
  return r.promptTokens + r.outputTokens;
}

/**
 * The stop rule after a token is appended (`check_stop`): EOS is masked until `minTokens`;
 * then EOS (the `naturalLength`-th output token, unless `ignoreEos`) → 'stop'; output ≥
 * `maxTokens` or prompt + output ≥ `maxModelLen` → 'length'. `naturalLength` counts the
 * final EOS token, so a 'stop' request reports naturalLength completion tokens.
 */
export function stopReason(r: SimRequest, maxModelLen: number): FinishReason | undefined {
  const o = r.outputTokens;
  const inp = r.input;
  if (!inp.ignoreEos && o >= inp.minTokens && o >= Math.max(1, inp.naturalLength)) return 'stop';
  if (o >= inp.maxTokens || r.promptTokens + o >= maxModelLen) return 'length';
  return undefined;
}
