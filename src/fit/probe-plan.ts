/**
 * The calibration's probe plan: which fixed-output (`ignore_eos`) requests to send so that each
 * measured mean is the duration of steps of one known shape.
 * - `prefill` probes: one request at a time at several prompt lengths. Its prefill is a step of
 *   that one prompt (prefill time), and its decode a batch-1 step at that context (KV read).
 * - `decode` probes: a wave of B requests with a short prompt sent together, B at several sizes
 *   (decode step time vs batch); two waves with long outputs read a growing KV context.
 * Prompts stay ≤ 2000 tokens so that one prefill is one step under vLLM's default
 * `max_num_batched_tokens` 2048 (`vllm/config/scheduler.py`); waves stay ≤ 256, vLLM's default
 * `max_num_seqs`, and inside the KV capacity `vllm:cache_config_info` reports.
 */

/** One probe. */
export interface Probe {
  /** e.g. `prefill p=1024` or `decode B=64 n=128`. */
  name: string;
  kind: 'prefill' | 'decode';
  /** Requests in flight together (1 for prefill probes). */
  concurrency: number;
  /** Target prompt length, tokens (the server's `usage.prompt_tokens` is what the fit uses). */
  promptTokens: number;
  /** Output tokens of every request (`ignore_eos`, `min_tokens` = `max_tokens`). */
  outputTokens: number;
  /** Sequential requests (prefill) or waves (decode). */
  repeats: number;
}

/** Options of `probePlan`. */
export interface ProbePlanOptions {
  /** About half the requests and wall time; default false. */
  quick?: boolean;
  /** KV cache capacity, tokens (`num_gpu_blocks × block_size`); waves are shrunk to fill at most 80 % of it. */
  kvCapacityTokens?: number;
  /** The server's `max_model_len`; probes that do not fit under it are left out. */
  maxModelLen?: number;
}

const PREFILL_LENGTHS = { full: [16, 64, 256, 512, 1024, 2000], quick: [16, 256, 1024, 2000] };
const WAVE_SIZES = { full: [2, 4, 8, 16, 32, 64, 128, 256], quick: [4, 16, 64, 256] };
/** Short prompt of the decode waves, tokens. */
export const WAVE_PROMPT_TOKENS = 32;

/**
 * The probes, in the order they run. Under 3 minutes against an RTX 4090 with a 7B int4 model
 * (about 1 min full, 30 s quick, estimated from the default profile's step times).
 * @throws Error when `kvCapacityTokens` or `maxModelLen` leave no probe at all (names the fix).
 */
export function probePlan(opts: ProbePlanOptions = {}): Probe[] {
  const mode = opts.quick ? 'quick' : 'full';
  const out: Probe[] = [];
  const fits = (p: number, n: number) => opts.maxModelLen === undefined || p + n < opts.maxModelLen;
  const prefillOut = 32;
  for (const p of PREFILL_LENGTHS[mode]) {
    if (!fits(p, prefillOut)) continue;
    out.push({
      name: `prefill p=${p}`,
      kind: 'prefill',
      concurrency: 1,
      promptTokens: p,
      outputTokens: prefillOut,
      repeats: opts.quick ? 2 : 3,
    });
  }
  const short = opts.quick ? 64 : 128;
  const long = opts.quick ? 512 : 1024;
  const waves: [number, number][] = [...WAVE_SIZES[mode].map((b): [number, number] => [b, short]), [16, long], [64, long]];
  for (const [b0, n] of waves) {
    if (!fits(WAVE_PROMPT_TOKENS, n)) continue;
    const b = fitWave(b0, WAVE_PROMPT_TOKENS + n, opts.kvCapacityTokens);
    if (b < 1) continue;
    out.push({
      name: `decode B=${b} n=${n}`,
      kind: 'decode',
      concurrency: b,
      promptTokens: WAVE_PROMPT_TOKENS,
      outputTokens: n,
      repeats: 1,
    });
  }
  if (out.length === 0) {
    throw new Error(
      `no probe fits this server (max_model_len ${opts.maxModelLen}, KV capacity ${opts.kvCapacityTokens} tokens); ` +
        'serve with --max-model-len ≥ 2048 and more --gpu-memory-utilization',
    );
  }
  return dedupe(out);
}

/** The largest power-of-two fraction of `b` whose KV (16-token blocks, rounded up) fills ≤ 80 % of the capacity. */
function fitWave(b: number, tokensPerRequest: number, capacity: number | undefined): number {
  if (capacity === undefined) return b;
  const perRequest = Math.ceil(tokensPerRequest / 16) * 16;
  let n = b;
  while (n >= 1 && n * perRequest > 0.8 * capacity) n = Math.floor(n / 2);
  return n;
}

function dedupe(probes: Probe[]): Probe[] {
  const seen = new Set<string>();
  return probes.filter((p) => !seen.has(p.name) && seen.add(p.name) !== undefined);
}
