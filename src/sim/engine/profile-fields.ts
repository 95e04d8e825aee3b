/**
 * The vocabulary of a profile file (`profiles/*.json`): its format id, statuses, source tags, and per
 * section the numeric fields with their fixed units and plausible ranges. `profile-schema.ts` checks a
 * file against these tables.
 */
import type { ProfileStatus } from './profile-types';

/** The `format` every profile file carries. */
export const PROFILE_FORMAT = 'loadlab-sim-profile/1';

/** Allowed `status` values. */
export const PROFILE_STATUSES: readonly ProfileStatus[] = [
  'spec-derived, not calibrated',
  'calibrated',
  'made up, for calibration practice', // src/fit/hidden-profile.ts: an "unknown GPU" to recover
];

/**
 * Where a number comes from: `spec` vendor spec sheet, `config` the model's config.json, `code` read in
 * source code, `measured` someone's published measurement, `derived` computed from other entries (formula
 * in the note), `estimate` a judgement, `carried-over` another GPU's value reused, `fit` a calibration fit.
 */
export const SOURCE_TAGS = ['spec', 'config', 'code', 'measured', 'derived', 'estimate', 'carried-over', 'fit'] as const;

/** One of `SOURCE_TAGS`. */
export type SourceTag = (typeof SOURCE_TAGS)[number];

/** A number in a profile file. */
export interface SourcedNumber {
  value: number;
  unit: string;
  source: SourceTag;
  note: string;
}

/** What a calibration records (written by a future `loadlab calibrate`; checked loosely here). */
export interface ProfileCalibration {
  /** What it ran against: server version, flags, GPU, driver … */
  against: Record<string, unknown>;
  /** One entry per probe: what was measured, what the fitted model says. */
  residuals: Record<string, unknown>[];
  /** Per fitted `perf` field: its confidence interval, in the field's unit. */
  intervals: Record<string, { low: number; high: number; level?: number }>;
  /** Parameters the probes could not identify (kept at their previous value). */
  notIdentified?: string[];
}

/** A numeric field's unit and plausible range. */
export interface Kind {
  unit: string;
  min: number;
  max: number;
  integer?: boolean;
  /** True when `min` itself is excluded. */
  openMin?: boolean;
}

/** Units and ranges by kind. */
// biome-ignore format: one kind per row reads as a table
export const KINDS: Record<string, Kind> = {
  bandwidth: { unit: 'B/s', min: 1e8, max: 1e14 },
  flops: { unit: 'FLOP/s', min: 1e11, max: 1e17 },
  bytes: { unit: 'B', min: 1e6, max: 1e14 },
  ms: { unit: 'ms', min: 0, max: 1e4 },
  fraction: { unit: 'fraction', min: 0, max: 1, openMin: true },
  count: { unit: 'count', min: 1, max: 1e7, integer: true },
  tokens: { unit: 'tokens', min: 1, max: 1e8, integer: true },
  params: { unit: 'params', min: 1e6, max: 1e13 },
  elementBytes: { unit: 'B/element', min: 1, max: 4, integer: true },
};

/** The numeric fields of each section and their kind. */
// biome-ignore format: one section per row reads as a table
export const FIELDS: Record<'gpu' | 'model' | 'perf', Record<string, keyof typeof KINDS>> = {
  gpu: { memoryBandwidthBytesPerSec: 'bandwidth', tensorFlopsFp16Acc32: 'flops', deviceMemoryBytes: 'bytes', pcieBytesPerSec: 'bandwidth', pcieCopyOverheadMs: 'ms' },
  model: {
    numLayers: 'count', numQueryHeads: 'count', numKvHeads: 'count', headDim: 'count', hiddenSize: 'count', vocabSize: 'tokens',
    maxPositionEmbeddings: 'tokens', linearParams: 'params', linearWeightBytes: 'bytes', lmHeadBytes: 'bytes',
    weightsInVramBytes: 'bytes', activationReserveBytes: 'bytes', kvDtypeBytes: 'elementBytes',
  },
  perf: {
    etaWeights: 'fraction', etaLmHead: 'fraction', etaKv: 'fraction', gemmFlops: 'flops', marlinFlops: 'flops', attnFlops: 'flops',
    stepOverheadMs: 'ms', perSeqOverheadMs: 'ms', swapCopiesPerBlock: 'count', apiOverheadMs: 'ms',
  },
};

/** Text fields beside the numbers, per section. */
export const TEXT_FIELDS: Record<'gpu' | 'model' | 'perf', readonly string[]> = {
  gpu: ['name'],
  model: ['name', 'quantization'],
  perf: [],
};

/** Top-level fields of a profile file. */
export const TOP_FIELDS = ['format', 'id', 'status', 'description', 'gpu', 'model', 'perf', 'notes', 'calibration'];

/** Common wrong units → the factor that converts a value into the expected unit. */
// biome-ignore format: a lookup table
export const CONVERT: Record<string, Record<string, number>> = {
  'B/s': { 'GB/s': 1e9, 'TB/s': 1e12, 'MB/s': 1e6, 'GiB/s': 2 ** 30 },
  'FLOP/s': { TFLOPS: 1e12, 'TFLOP/s': 1e12, PFLOPS: 1e15, GFLOPS: 1e9 },
  B: { GB: 1e9, GiB: 2 ** 30, MB: 1e6, MiB: 2 ** 20, TB: 1e12 },
  ms: { s: 1e3, us: 1e-3, 'µs': 1e-3 },
  fraction: { '%': 1e-2 },
  params: { B: 1e9, M: 1e6 },
};
