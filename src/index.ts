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
export * from './runner/index';
export { measure, type MeasureOptions, type MeasureResult } from './lesson/measure';
export { calibrateClient, calibrationVerdict, modelledStepMs, type CalibrateOptions, type CalibrationPass, type ClientCalibration } from './calibrate/calibrate';

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
export { openTarget, checkVisibleFlags, type LessonTarget, type OpenTargetOptions, type TargetMode } from './lesson/open-target';
export { launchVllm, LaunchError, type LaunchVllmOptions, type LaunchedVllm } from './vllm/launcher';
export { recordEffectiveConfig, type EffectiveConfig, type ModelCard } from './observe/effective-config';
export { parseServeArgs, toServeArgs, SERVE_FLAGS, DEFAULT_MODEL } from './vllm/flags';
export { parsePrometheus, pickValue, type MetricFamily } from './observe/prometheus';
export { startMetricsSampler, type MetricsSampler } from './observe/sampler';
export { startGpuSampler, type GpuSampler } from './observe/gpu';
export { counterDeltas, counterRates, counterIncrease, prefixHitRates } from './stats/counters';
export { toMetricsSample, cacheConfigInfo, summarizeCacheConfig } from './observe/vllm-metrics';

// the simulator
export { startSim, type SimHandle, type StartSimOptions } from './sim/start';
export type { ServerFlags } from './vllm/flag-types';
export { DEFAULT_PROFILE, RTX4090_QWEN25_7B_GPTQ_INT4, kvBytesPerToken, type Profile } from './sim/engine/profile';
export { resolveEngineConfig, kvCacheTokens, maxConcurrency } from './sim/engine/config';
export { stepTimeMs, stepBreakdown } from './sim/engine/cost';
export { faultArgs, FAULT_KINDS, type FaultSettings, type FaultKind } from './sim/http/faults';

// plots and tables
export * from './view/index';
