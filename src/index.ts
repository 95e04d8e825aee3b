/**
 * LoadLab's public API, grouped by what a lesson does: open a target, build a workload, shape the
 * load, measure, summarize, plot. Notebooks import this file (`import * as ll from './src/index'`;
 * tslab cannot import folders). It only re-exports; anything not listed here is internal and may
 * change. workload → load shape → client → records (on disk as they finish) → stats → tables and plots.
 */

// The vocabulary: requests, records, summaries, error codes.
export {
  ERROR_CODES,
  type Api,
  type ChatMessage,
  type Distribution,
  type ErrorCode,
  type GpuSample,
  type MetricsSample,
  type RequestError,
  type RequestRecord,
  type RequestSpec,
  type RunSummary,
  type Slo,
  type TurnSummary,
} from './types';
export { seededRng, randExp, randGamma, randInt, type Rng } from './rng';
export { packageRoot, fromRoot } from './paths';

// 1. The lesson layer: a server to measure, one measured point, and the notebook helpers.
export { openTarget, checkVisibleFlags, type LessonTarget, type OpenTargetOptions, type TargetMode } from './lesson/open-target';
export { measure, type MeasureOptions, type MeasureResult } from './lesson/measure';
export { say, sayMarkdown, f0, f1, lesson, makeUseFlags, type LessonPaths, type UseFlagsResult } from './lesson/helpers';
export { checkLessonFits, type LessonFit, type FitTarget } from './lesson/lesson-check';
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
} from './lesson/verdict';
export {
  tableReading,
  tradeoffVerdict,
  trendVerdict,
  type TableReading,
  type TradeoffVerdict,
  type TrendVerdict,
} from './lesson/verdict-reading';
export { queueVerdict, type QueueVerdict } from './lesson/verdict-queue';
export { circularityNote, type CircularityTarget } from './lesson/circularity';
export {
  engineNote,
  swapPlan,
  type EngineNote,
  type EngineNoteTarget,
  type EngineTopic,
  type SwapPlan,
} from './lesson/engine-note';
export { doctor, showReport, type Check, type DoctorOptions, type DoctorReport } from './cli/doctor';

// 2. The server: `vllm serve` flags, the simulator, a real vLLM, and what a server reports.
export type { ServerFlags, FaultSettings } from './vllm/flag-types';
export { parseServeArgs, toServeArgs, SERVE_FLAGS, DEFAULT_MODEL } from './vllm/flags';
export { compareFlags, serveLine, type FlagCheck, type ReportedConfig } from './vllm/flag-check';
export { serverRoot, resolveApiKey } from './client/url';
export { launchVllm, LaunchError, type LaunchVllmOptions, type LaunchedVllm } from './vllm/launcher';
export { readServeHelp } from './vllm/serve-help';
export { detectEngine, type ServerEngine } from './observe/engine';
export { startSim, type SimHandle, type StartSimOptions } from './sim/start';
export { faultArgs, FAULT_KINDS, type FaultKind } from './sim/http/faults';
export { recordEffectiveConfig, type EffectiveConfig, type ModelCard } from './observe/effective-config';
export { parsePrometheus, pickValue, type MetricFamily } from './observe/prometheus';
export { startMetricsSampler, type MetricsSampler } from './observe/sampler';
export { startGpuSampler, type GpuSampler } from './observe/gpu';
export { toMetricsSample, cacheConfigInfo, summarizeCacheConfig } from './observe/vllm-metrics';

export {
  loadProfileFile,
  listProfiles,
  defaultProfileName,
  DEFAULT_PROFILE_NAME,
  type LoadedProfile,
} from './sim/engine/profile-file';
export type { ProfileDocument, SourcedNumber } from './sim/engine/profile-schema';

// 3. Predictions from first principles: the hardware/model profile and the engine's cost model.
export { DEFAULT_PROFILE, RTX4090_QWEN25_7B_GPTQ_INT4, kvBytesPerToken, type Profile } from './sim/engine/profile';
export { resolveEngineConfig, kvCacheTokens, maxConcurrency } from './sim/engine/config';
export { stepTimeMs, stepBreakdown } from './sim/engine/cost';

// 4. What is sent: prompts and workloads.
export {
  CHALLENGES_PROMPT,
  HELLO_PROMPT,
  LITHOGRAPHY_PROMPT,
  LITHOGRAPHY_SENTENCE,
  LONG_PROMPT,
  LONG_PROMPT_SENTENCE,
  TOKENS_PER_CJK_CHAR,
  TOKENS_PER_EN_WORD,
  estimateTokens,
  promptOfTokens,
  tokenizeCount,
  type PromptOfTokensOptions,
  type SizedPrompt,
} from './workload/prompts';
export {
  FOLLOW_UP_QUESTIONS,
  longPlusShort,
  makeRequest,
  repeatRequest,
  sharedPrefixRequests,
  shortLongMix,
  uniquePrefixRequests,
  type LongPlusShortOptions,
  type MixOptions,
  type PrefixOptions,
  type SpecOptions,
} from './workload/workload';
export { loadDataset, DATASET_NAMES, DatasetError } from './workload/datasets/index';
export type { LoadDatasetOptions, LoadedDataset, DatasetName } from './workload/datasets/index';

// 5. When it is sent: load shapes.
export { burst, closedLoop, openLoop, timeline, describeShape, validateShape } from './schedule/shapes';
export type { BurstShape, ClosedShape, LoadShape, OpenShape, TimelineEntry, TimelineShape } from './schedule/shapes';
export { sessions, turnSpec, type SessionScript, type SessionsShape } from './schedule/sessions';
export { runSessions, type SessionsReport } from './schedule/session-driver';
export { sessionScripts, sessionScriptOf } from './workload/datasets/sharegpt';

// 6. One measured run (what `measure` drives), and measuring the measurer.
export { runLoad, type RunLoadOptions, type RunResult } from './runner/runner';
export type { DurationStopRule } from './runner/runner-stop';
export { formatProgress, type Progress } from './runner/progress';
export { assessClientHealth, type ClientHealth } from './runner/health';
export type { ClientStall, StallCause } from './client-stall';
export {
  calibrateClient,
  calibrationVerdict,
  modelledStepMs,
  type CalibrateOptions,
  type CalibrationPass,
  type ClientCalibration,
} from './calibrate/calibrate';

// Fitting the simulator to a server (`loadlab calibrate`), and predicting with the fitted profile.
export {
  calibrate as calibrateProfile,
  type CalibrationResult,
  type CalibrateOptions as CalibrateProfileOptions,
} from './fit/calibration';
export { calibratedDocument } from './fit/profile-doc';
export { hiddenProfile } from './fit/hidden-profile';
export { predictClosedLoop, predictTtftMix } from './fit/predict';

// Sweeps: one run per load point, the knee, saturation and capacity under SLOs.
export { runSweep, type RunSweepOptions, type PointJob } from './sweep/run-sweep';
export { readSweepFile, analyseSweep, type SweepFile } from './sweep/sweep-file';
export type { SweepPoint } from './sweep/point';

// Reports and comparisons of saved runs (no server needed).
export { writeReport, reportHtml, type WriteReportOptions, type WrittenReport } from './report/write-report';
export { readReportInput, readReportRun, type ReportInput, type ReportRun } from './report/report-input';
export { compareRuns, type RunsComparison, type CompareRunsOptions, type CompareDiff } from './report/compare';
export { formatComparison } from './report/compare-text';

// 7. Run files: saved as they finish, read back later.
export { createRun, abortOpenRuns, type RunWriter, type CreateRunOptions } from './run/store';
export { isRunComplete } from './run/folder';
export { loadRun, listRuns, type LoadedRun, type RunListing } from './run/loader';
export { recordsToDataFrame, type RecordRow } from './view/frame';
export type { RunManifest, RunTarget, RunStatus, SimProfileRef } from './run/manifest';
export { importVllmResult, type ImportVllmOptions } from './exchange/import-vllm';
export { vllmResultOf, writeVllmResult, type VllmResultOptions } from './exchange/vllm-result';
export { readVllmResult, VllmResultError } from './exchange/vllm-result-file';

// 8. Summaries: percentiles, run summaries, confidence intervals, server counters.
export { percentile, percentiles, summarizeLatency, mean, type LatencySummary } from './stats/percentile';
export { summarizeRun, meetsSlo } from './stats/summary';
export { parseGoodput, formatGoodput, goodputOf } from './stats/goodput';
export { summarizeTurns } from './stats/turns';
export { bootstrapPercentileCI, bootstrapDiffCI, type BootstrapCI, type BootstrapOptions } from './stats/bootstrap';
export { bootstrapClusterDiffCI, bootstrapClusterPercentileCI, type Groups, itlByRequest } from './stats/cluster-bootstrap';
export { counterDeltas, counterRates, counterIncrease, prefixHitRates } from './stats/counters';

// 9. Tables and charts.
export {
  table,
  summaryTable,
  compareTable,
  DEFAULT_COMPARE_METRICS,
  type CompareMetric,
  type TableOptions,
  type SummaryTableOptions,
} from './view/tables';
export { show, saveFigure, figureHtml, plotlyJsPath, type ShowOptions, type SaveOptions } from './view/render';
export {
  provenanceOf,
  provenanceSuffix,
  runSimulated,
  runServerLabel,
  runImported,
  type Provenance,
  type RunLike,
} from './view/provenance';
export { chartTitle, type Figure, type Trace, type Layout, type ChartOptions } from './view/figure';
export {
  latencyCdf,
  percentileBars,
  abComparison,
  type AbItem,
  type AbOptions,
  type CdfOptions,
  type LatencyMetric,
  type PercentileBarsOptions,
} from './view/charts-latency';
export {
  scalingPoints,
  throughputVsConcurrency,
  latencyThroughputTradeoff,
  findSaturation,
  scalingTitle,
  type ScalingLatencyKey,
  type ScalingPoint,
  type ThroughputVsConcurrencyOptions,
  type TradeoffOptions,
} from './view/charts-scaling';
export { requestGantt, itlTimeSeries, timeRangeS, type GanttOptions, type ItlOptions } from './view/charts-timeline';
export { bannerHtml, healthBannerLines } from './view/banner';
export { tagColors } from './view/palette';
export { countWaves, wavesLabel, type WavesOptions } from './view/waves';
export { hasSwapped, serverTimeline, type ServerTimelineOptions } from './view/charts-server';

// 10. Anatomy of one request (lesson 00/01 take the client apart): bodies, headers, derived metrics, the pool.
export { createClient, type Client, type ClientOptions } from './client/client';
export type { ChunkStamp } from './client/chunk-stamp';
export { buildRequestBody, buildHeaders } from './client/body';
export { StreamTimer, type RecordMeta } from './client/timing';
export { deriveMetrics, type DerivedMetrics } from './client/metrics';
export { errorCodeOf } from './client/errors';
export { createPool, type Pool } from './schedule/pool';
