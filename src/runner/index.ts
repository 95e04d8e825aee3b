/** Load generation: shapes, arrivals, pool, pacer, workloads and the runner. */
export { runLoad, type RunLoadOptions, type RunResult } from './runner';
export {
  burst,
  closedLoop,
  describeShape,
  openLoop,
  timeline,
  validateShape,
  type BurstShape,
  type ClosedShape,
  type LoadShape,
  type OpenShape,
  type TimelineEntry,
  type TimelineShape,
} from '../schedule/shapes';
export { arrivalOffsets, burstOffsets, closedLoopStarts, gapsOf, openLoopOffsets } from '../schedule/arrivals';
export { createPool, type Pool } from '../schedule/pool';
export { sleepFor, sleepUntil, type SleepUntilOptions } from '../schedule/pacer';
export { dispatchLoad, type DispatchOptions, type DispatchReport } from '../schedule/dispatch';
export { createProgress, formatProgress, type Progress, type ProgressSink, type ProgressTracker } from './progress';
export {
  CHALLENGES_PROMPT,
  COURSE_PROMPTS,
  estimateTokens,
  HELLO_PROMPT,
  LITHOGRAPHY_PROMPT,
  LITHOGRAPHY_SENTENCE,
  LONG_PROMPT,
  LONG_PROMPT_SENTENCE,
  promptOfTokens,
  tokenizeCount,
  TOKENS_PER_CJK_CHAR,
  TOKENS_PER_EN_WORD,
  type PromptOfTokensOptions,
  type SizedPrompt,
} from '../workload/prompts';
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
} from '../workload/workload';
export { checkBaseUrl, resolveTarget, type ResolvedTarget } from './target';
export {
  assessClientHealth,
  assessSimLateness,
  startClientHealth,
  startSimLatenessWatch,
  DEFAULT_HEALTH_THRESHOLDS,
  SIM_LATENESS_THRESHOLD_MS,
  type ClientHealth,
  type SimLatenessVerdict,
} from './health';
