/**
 * What a profile predicts, on the simulator's own engine and a virtual clock (no real time, so
 * machine load never enters): closed-loop throughput at a concurrency, and TTFT under a seeded
 * Poisson mix of short and long requests. Used to check a calibration against the profile it
 * should have recovered, and to answer what-if questions with a calibrated profile.
 */
import { randExp, seededRng } from '../rng';
import { virtualClock } from '../sim/engine/clock';
import { resolveEngineConfig } from '../sim/engine/config';
import { createEngine } from '../sim/engine/engine';
import type { Profile } from '../sim/engine/profile';
import type { ServerFlags } from '../sim/engine/types';

/** Engine-side timing of one request: arrival → first output (TTFT, no API overhead), and its outputs. */
interface Done {
  ttftMs: number;
  outputTokens: number;
  endMs: number;
}

function engineFor(profile: Profile, flags: ServerFlags) {
  const clock = virtualClock();
  const engine = createEngine({ config: resolveEngineConfig(flags, profile), clock, profile, seed: 1 });
  let id = 0;
  function send(promptTokens: number, outputTokens: number, onDone: (d: Done) => void): void {
    const arrival = clock.now();
    let first: number | undefined;
    // Distinct first tokens per request: no prefix-cache hits between requests.
    const tokens = Array.from({ length: promptTokens }, (_, k) => 1 + ((id * 131 + k * 17) % 100_000));
    engine.add(
      {
        id: `p${id++}`,
        promptTokenIds: tokens,
        maxTokens: outputTokens,
        minTokens: outputTokens,
        naturalLength: outputTokens,
        ignoreEos: true,
      },
      (out) => {
        first ??= out.timeMs;
        if (out.finishReason) onDone({ ttftMs: first - arrival, outputTokens: out.outputTokens, endMs: out.timeMs });
      },
    );
  }
  return { clock, engine, send };
}

/** Options of `predictClosedLoop`. */
export interface ClosedLoopOptions {
  /** Prompt tokens per request; default 256. */
  promptTokens?: number;
  /** Output tokens per request (fixed); default 128. */
  outputTokens?: number;
  /** Requests to finish after warm-up; default 8 × concurrency, at least 32. */
  requests?: number;
  /** `vllm serve` flags of the predicted server; default none. */
  flags?: ServerFlags;
}

/**
 * Output tokens/s of a closed loop of `concurrency` clients on `profile`, measured between the first and the
 * last counted completion (the first `concurrency` completions are warm-up).
 */
export function predictClosedLoop(profile: Profile, concurrency: number, opts: ClosedLoopOptions = {}): number {
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new Error(`concurrency must be an integer ≥ 1, got ${concurrency}`);
  const p = opts.promptTokens ?? 256;
  const n = opts.outputTokens ?? 128;
  const target = opts.requests ?? Math.max(32, 8 * concurrency);
  const { clock, engine, send } = engineFor(profile, opts.flags ?? {});
  let finished = 0;
  let tokens = 0;
  let t0 = NaN;
  let t1 = NaN;
  const loop = () =>
    send(p, n, (d) => {
      finished++;
      if (finished === concurrency) t0 = d.endMs;
      else if (finished > concurrency && finished <= concurrency + target) {
        tokens += d.outputTokens;
        t1 = d.endMs;
      }
      if (finished < concurrency + target) loop();
    });
  for (let k = 0; k < concurrency; k++) loop();
  clock.runUntilIdle(10_000_000);
  engine.close();
  return (1e3 * tokens) / (t1 - t0);
}

/** Options of `predictTtftMix`. */
export interface MixOptions {
  /** Requests; default 400. */
  requests?: number;
  /** Poisson arrival rate, requests/s; default 4. */
  ratePerSec?: number;
  /** Share of long requests; default 0.1 (a 90/10 mix). */
  longShare?: number;
  /** Short requests: prompt, output tokens; default 256, 128. */
  short?: [number, number];
  /** Long requests: prompt, output tokens; default 4000, 128. */
  long?: [number, number];
  /** Seed of arrivals and the mix; default 14. */
  seed?: number;
  flags?: ServerFlags;
}

/** Engine-side TTFT p50 (arrival → first output, ms; the API overhead is not included) of a seeded Poisson short/long mix. */
export function predictTtftMix(profile: Profile, opts: MixOptions = {}): number {
  const rng = seededRng(opts.seed ?? 14);
  const { clock, engine, send } = engineFor(profile, opts.flags ?? {});
  const ttfts: number[] = [];
  const [sp, sn] = opts.short ?? [256, 128];
  const [lp, ln] = opts.long ?? [4000, 128];
  let t = 0;
  for (let k = 0; k < (opts.requests ?? 400); k++) {
    t += randExp(rng, 1000 / (opts.ratePerSec ?? 4));
    const long = rng() < (opts.longShare ?? 0.1);
    clock.at(t, () => send(long ? lp : sp, long ? ln : sn, (d) => ttfts.push(d.ttftMs)));
  }
  clock.runUntilIdle(10_000_000);
  engine.close();
  ttfts.sort((a, b) => a - b);
  return ttfts[Math.floor(ttfts.length / 2)];
}
