/**
 * The small helpers every lesson notebook used to define for itself (issue #11): `say` (prose
 * computed from a run), `f0`/`f1` (numbers for that prose), `lesson(name).chartFile` (where a
 * chart's standalone HTML goes) and `makeUseFlags` (restart the lesson's server with other flags),
 * plus `engineNote` / `swapPlan` (what this server's engine will show, from `engine-note.ts`).
 * A notebook imports them from this file: `import { say, f0, f1, lesson } from './src/lesson/helpers'`.
 */
import { join } from 'node:path';
import { fromRoot } from '../paths';
import type { ServerFlags } from '../vllm/flag-types';
import { toServeArgs } from '../vllm/flags';
import type { LessonTarget } from './open-target';

export {
  engineNote,
  swapPlan,
  type EngineNote,
  type EngineNoteTarget,
  type EngineTopic,
  type SwapPlan,
} from './engine-note';

/**
 * The Markdown `say` shows: a string as it is; an array of sentences as a bullet list
 * (one `- ` item per sentence). Pure.
 */
export function sayMarkdown(text: string | readonly string[]): string {
  return typeof text === 'string' ? text : text.map((l) => `- ${l}`).join('\n');
}

/** tslab's `display.markdown` inside a kernel cell, else undefined. tslab hooks `require('tslab')` in code it compiles. */
function kernelMarkdown(): ((s: string) => void) | undefined {
  if ((globalThis as { __tslab__?: unknown }).__tslab__ === undefined || typeof require !== 'function') return undefined;
  try {
    const { display } = require('tslab') as { display: { markdown(s: string): void } };
    return (s) => display.markdown(s);
  } catch {
    return undefined;
  }
}

/**
 * Show sentences computed from a run as Markdown in the notebook: a string as it is, an array as
 * a bullet list (see `sayMarkdown`). Outside a kernel (a script, a test) the Markdown goes to
 * stdout. Returns nothing, so a cell that ends with `say(…)` shows the text once.
 */
export function say(text: string | readonly string[]): void {
  const md = sayMarkdown(text);
  const show = kernelMarkdown();
  if (show) {
    try {
      show(md);
      return;
    } catch {
      // tslab's "Not ready": the kernel process, but outside a cell; fall through to stdout.
    }
  }
  process.stdout.write(`${md}\n`);
}

/** `x` with no decimals, e.g. `f0(12.6)` → `'13'`; `'—'` when `x` is not a finite number (NaN, ±Infinity). */
export function f0(x: number): string {
  return Number.isFinite(x) ? x.toFixed(0) : '—';
}

/** `x` with one decimal, e.g. `f1(12.66)` → `'12.7'`; `'—'` when `x` is not a finite number (NaN, ±Infinity). */
export function f1(x: number): string {
  return Number.isFinite(x) ? x.toFixed(1) : '—';
}

/** What `lesson(name)` returns. */
export interface LessonPaths {
  /** The lesson's data folder: `<package>/data/<name>` (its runs, and `charts/`). */
  dir: string;
  /** Where chart `chart` is saved as standalone HTML: `<dir>/charts/<chart>.html` (pass it to `show(fig, { saveTo })`). */
  chartFile(chart: string): string;
}

/**
 * The paths of lesson `name` (the notebook's file name without `.ipynb`, e.g. `'02-concurrency'`).
 * `dataDir` defaults to `<package>/data`. Throws, naming the fix, on an empty name or one with a
 * path separator. Nothing is created on disk.
 */
export function lesson(name: string, opts: { dataDir?: string } = {}): LessonPaths {
  if (!name || /[\\/]/.test(name))
    throw new TypeError(`lesson name must be a plain folder name such as '02-concurrency', got ${JSON.stringify(name)}`);
  const dir = join(opts.dataDir ?? fromRoot('data'), name);
  return { dir, chartFile: (chart) => join(dir, 'charts', `${chart}.html`) };
}

/** What a `useFlags` call returns: the cell's output telling the reader what happened. */
export interface UseFlagsResult {
  /** The target's mode (`sim`, `launched` or `external`). */
  mode: LessonTarget['mode'];
  /** The `vllm serve` command line these flags correspond to (real-vLLM flags only). */
  command: string;
  /** For an `external` server: the target's notes (how to restart it yourself); else `[restartedNote]`. */
  notes: string[];
}

/**
 * `useFlags(flags)` for a lesson's `target`: restarts the server with `flags` (for an external vLLM,
 * `target.notes` say how to restart it by hand) and returns the `vllm serve` command line they
 * mean (with V0's `--swap-space` / `--preemption-mode` when `target.config.engine` is `V0`). `restartedNote` (default `'restarted with these flags'`) is the note shown after a restart.
 * Usage: `const useFlags = makeUseFlags(target); await useFlags({ enableChunkedPrefill: false })`.
 */
export function makeUseFlags(
  target: Pick<LessonTarget, 'mode' | 'model' | 'notes' | 'restart'> & { config?: Pick<LessonTarget['config'], 'engine'> },
  opts: { restartedNote?: string } = {},
): (flags: ServerFlags) => Promise<UseFlagsResult> {
  const restarted = opts.restartedNote ?? 'restarted with these flags';
  return async (flags) => {
    await target.restart(flags);
    return {
      mode: target.mode,
      command: `vllm serve ${target.model} ${toServeArgs(flags, { target: target.config?.engine === 'V0' ? 'vllm-v0' : 'vllm' }).join(' ')}`,
      notes: target.mode === 'external' ? target.notes : [restarted],
    };
  };
}

// Verdicts that respect noise (issue #13): every "A > B" a notebook prints goes through these.
export {
  compareMetric,
  compareValues,
  verdictSentence,
  metricValues,
  fmtNumber,
  fmtInterval,
  type Comparison,
  type CompareOptions,
  type VerdictMetric,
  type VerdictRun,
  type VerdictSample,
} from './verdict';
export {
  tableReading,
  tradeoffVerdict,
  trendVerdict,
  type TableReading,
  type TradeoffVerdict,
  type TrendVerdict,
} from './verdict-reading';
export { queueVerdict, type QueueVerdict } from './verdict-queue';
export { circularityNote, type CircularityTarget } from './circularity';
export {
  closedLoopPrediction,
  comparePools,
  healthVerdict,
  loadtestRow,
  loadtestTable,
  type ClosedLoopPrediction,
  type HealthVerdict,
  type LoadtestRow,
  type PoolComparison,
  type Story02Run,
} from './story-02';
export {
  capacitySentences,
  gradientSentences,
  type CapacityRow,
  type GradientContext,
  type GradientPoint,
} from './story-02b';
export {
  NO_STATIC_IN_VLLM,
  queueStory,
  staticBatchStory,
  tagged,
  type QueueStoryInput,
  type StaticBatchStory,
  type StoryRun,
} from './story-03';
export {
  caseStory,
  mixItlStory,
  mixTtftStory,
  pairedMedianChange,
  pairedSentence,
  type CaseStoryInput,
  type MixItlInput,
  type MixTtftStory,
} from './story-04';
export {
  naiveTpotValues,
  pitfallRows,
  pitfallSentences,
  rooflineSentences,
  warmupSentences,
  type PitfallPoint,
  type PitfallRow,
  type RooflineInput,
  type WarmupInput,
} from './story-01';
export {
  gpuWatchNote,
  kvPredictionSentences,
  kvVerdictSentences,
  recoverySentences,
  type GpuWatchInput,
  type KvPoint,
  type KvPredictionInput,
  type KvVerdictInput,
  type RecoveryInput,
} from './story-05';
export {
  prefixVerdictSentences,
  type PrefixPoint,
  type PrefixVerdictInput,
} from './story-06';
export { calibrationSentences } from './story-00';
export {
  CALIBRATED_LABEL,
  ERROR_METRICS,
  HIDDEN_TARGET_LABEL,
  errorRows,
  errorSentences,
  fitRows,
  recovery,
  relativeErrorPct,
  targetLabelOf,
  whatIfSentence,
  type CalibratedDocLike,
  type ErrorRow,
  type FitRow,
  type Recovery,
  type SummaryLike,
  type TargetLike,
  type WhatIfInput,
} from './story-08';
