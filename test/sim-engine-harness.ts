/**
 * Test harness for the simulated engine on a virtual clock: submit requests at scripted
 * times, record engine-side output times, and compute TTFT/ITL from them.
 * TTFT = first output time − arrival; ITL = gaps between consecutive outputs.
 */
import { virtualClock, type VirtualClock } from '../src/sim/engine/clock';
import { resolveEngineConfig } from '../src/sim/engine/config';
import { createEngine, type SimEngineHandle } from '../src/sim/engine/engine';
import type { Profile } from '../src/sim/engine/profile';
import type { EngineConfig, FinishReason, ServerFlags, StepInfo } from '../src/sim/engine/types';
import { randInt, seededRng, type Rng } from '../src/rng';

export interface Rec {
  id: string;
  promptTokens: number;
  arrivalMs: number;
  outTimes: number[];
  outputTokens: number;
  finish?: FinishReason;
  cachedTokens?: number;
}

export interface Harness {
  clock: VirtualClock;
  engine: SimEngineHandle;
  config: EngineConfig;
  recs: Rec[];
  steps: StepInfo[];
}

export function makeHarness(flags: ServerFlags = {}, config?: EngineConfig, profile?: Profile): Harness {
  const clock = virtualClock();
  const cfg = config ?? resolveEngineConfig(flags, profile);
  const engine = createEngine({ config: cfg, clock, seed: 1, profile });
  const steps: StepInfo[] = [];
  engine.onStep((s) => steps.push({ ...s }));
  return { clock, engine, config: cfg, recs: [], steps };
}

export interface SubmitOpts {
  maxTokens: number;
  naturalLength?: number;
  ignoreEos?: boolean;
  minTokens?: number;
  onDone?: (rec: Rec) => void;
}

let nextId = 0;

/** Add a request with `prompt` at virtual time `atMs`. */
export function submit(h: Harness, atMs: number, prompt: number[], o: SubmitOpts): Rec {
  const rec: Rec = { id: `r${nextId++}`, promptTokens: prompt.length, arrivalMs: NaN, outTimes: [], outputTokens: 0 };
  h.recs.push(rec);
  h.clock.at(atMs, () => {
    rec.arrivalMs = h.clock.now();
    h.engine.add(
      {
        id: rec.id,
        promptTokenIds: prompt,
        maxTokens: o.maxTokens,
        minTokens: o.minTokens ?? 0,
        naturalLength: o.naturalLength ?? o.maxTokens,
        ignoreEos: o.ignoreEos ?? true,
      },
      (out) => {
        rec.outTimes.push(out.timeMs);
        rec.outputTokens = out.outputTokens;
        if (out.cachedTokens !== undefined) rec.cachedTokens = out.cachedTokens;
        if (out.finishReason) {
          rec.finish = out.finishReason;
          o.onDone?.(rec);
        }
      },
    );
  });
  return rec;
}

/** `n` random token ids (distinct prompts do not share blocks). */
export function randomPrompt(rng: Rng, n: number): number[] {
  const p = new Array<number>(n);
  for (let i = 0; i < n; i++) p[i] = randInt(rng, 0, 151_000);
  return p;
}

export function ttft(r: Rec): number {
  return r.outTimes[0] - r.arrivalMs;
}

export function itls(r: Rec): number[] {
  const out: number[] = [];
  for (let i = 1; i < r.outTimes.length; i++) out.push(r.outTimes[i] - r.outTimes[i - 1]);
  return out;
}

/** Percentile with linear interpolation at (n−1)·q (numpy default). */
export function pct(values: number[], q: number): number {
  const v = [...values].sort((a, b) => a - b);
  const pos = (v.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

export function median(values: number[]): number {
  return pct(values, 0.5);
}

/**
 * Closed loop: `concurrency` clients each resubmit as soon as their request finishes.
 * Returns output tokens/s measured over [warmupMs, warmupMs + windowMs].
 */
export function closedLoopThroughput(
  concurrency: number,
  promptTokens: number,
  outputTokens: [number, number],
  warmupMs: number,
  windowMs: number,
  seed = 7,
): { tokensPerSec: number; h: Harness } {
  const h = makeHarness();
  const rng = seededRng(seed);
  const end = warmupMs + windowMs;
  const client = (atMs: number) => {
    if (atMs >= end) return;
    submit(h, atMs, randomPrompt(rng, promptTokens), {
      maxTokens: randInt(rng, outputTokens[0], outputTokens[1]),
      onDone: () => client(h.clock.now()),
    });
  };
  for (let c = 0; c < concurrency; c++) client(0);
  h.clock.advance(end);
  h.engine.close();
  let tokens = 0;
  for (const r of h.recs) for (const t of r.outTimes) if (t > warmupMs && t <= end) tokens++;
  return { tokensPerSec: tokens / (windowMs / 1000), h };
}
