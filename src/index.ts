/**
 * LoadLab's public API. Notebooks import this file (`./src/index`; tslab cannot import folders).
 * workload → load shape → client → records (on disk as they finish) → stats → tables and plots.
 */
export * from './types';
export { seededRng, randExp, randGamma, randInt, type Rng } from './rng';
export { packageRoot, fromRoot } from './paths';

// client
export * from './client/index';

// load shapes, workloads, the runner
export * from './load/index';
export { measure, type MeasureOptions, type MeasureResult } from './load/measure';
export { calibrateClient, calibrationVerdict, modelledStepMs, type CalibrateOptions, type CalibrationPass, type ClientCalibration } from './load/calibrate';

// statistics
export { percentile, percentiles, summarizeLatency, describe, mean, type LatencySummary } from './stats/percentile';
export { summarizeRun, meetsSlo } from './stats/summary';
export { bootstrapPercentileCI, bootstrapDiffCI, type BootstrapCI, type BootstrapOptions } from './stats/bootstrap';

// run files
export { createRun, isRunComplete, abortOpenRuns, type RunWriter, type CreateRunOptions } from './run/store';
export { loadRun, listRuns, loadMetrics, type LoadedRun, type RunListing } from './run/loader';
export { recordsToDataFrame, recordRow, RECORD_COLUMNS, type RecordRow } from './view/frame';
export type { RunManifest, RunTarget, RunStatus } from './run/manifest';

// servers: targets, launcher, scraping
export { openTarget, checkVisibleFlags, type LessonTarget, type OpenTargetOptions, type TargetMode } from './server/lesson-target';
export { launchVllm, LaunchError, type LaunchVllmOptions, type LaunchedVllm } from './server/launcher';
export { recordEffectiveConfig, type EffectiveConfig, type ModelCard } from './server/effective-config';
export { parseServeArgs, toServeArgs, SERVE_FLAGS, DEFAULT_MODEL } from './server/flags';
export { parsePrometheus, pickValue, type MetricFamily } from './server/prometheus';
export { startMetricsSampler, type MetricsSampler } from './server/sampler';
export { startGpuSampler, type GpuSampler } from './server/gpu';
export { counterDeltas, counterRates, counterIncrease, prefixHitRates } from './server/counters';
export { toMetricsSample, cacheConfigInfo, summarizeCacheConfig } from './server/vllm-metrics';

// the simulator
export { startSim, type SimHandle, type StartSimOptions } from './sim/start';
export type { ServerFlags } from './sim/types';
export { DEFAULT_PROFILE, RTX4090_QWEN25_7B_GPTQ_INT4, kvBytesPerToken, type Profile } from './sim/profile';
export { resolveEngineConfig, kvCacheTokens, maxConcurrency } from './sim/config';
export { stepTimeMs, stepBreakdown } from './sim/cost';
export { faultArgs, FAULT_KINDS, type FaultSettings, type FaultKind } from './sim/faults';

// plots and tables
export * from './view/index';
