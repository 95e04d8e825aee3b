/**
 * The shared vocabulary of the simulator's `/metrics`: bucket bounds, the handles SimMetrics feeds,
 * the `cache_config_info` series and the simulator-only `loadlab:` series. Which vLLM series exist,
 * in which order, is per generation: `metric-v1.ts` (V1 engine: 0.10 and 0.19, names, help texts,
 * labels and buckets as in `vllm/v1/metrics/loggers.py`) and `metric-v0.ts` (V0 engine, 0.6,
 * `vllm/engine/metrics.py`). Registration order is the order of the rendered text.
 */
import { SIM_CPU_SERIES, SIM_LATE_STEP_SERIES, SIM_RESYNC_SERIES, SIM_STEPS_SERIES } from '../../wire/sim-series';
import { freshenThreadCpu, hostCpu, sharedThreadSchedReader, type ThreadSchedReader } from '../../proc/cpu-times';
import { FAULT_KINDS, type FaultKind } from './faults';
import { createLateSteps } from './late-steps';
import type { Generation } from './generation';
import type { Histogram, PromRegistry, Scalar } from './prom';
import type { EngineConfig, EngineStats } from '../engine/types';

/** vLLM's TTFT buckets, seconds. */
export const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560,
];
/** vLLM's inter-token latency buckets, seconds. */
export const ITL_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80];
/** vLLM's request latency buckets (e2e, queue, decode), seconds. */
export const LAT_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
/** vLLM's `iteration_tokens_total` buckets, tokens per step. */
export const ITERATION_TOKEN_BUCKETS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
/** Step-lateness buckets of the simulator's own clock discipline, seconds. */
export const LATENESS_BUCKETS = [0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.02, 0.05, 0.1];

/** vLLM's 1-2-5 buckets up to `max` (`build_1_2_5_buckets`). */
export function buckets125(max: number): number[] {
  const out: number[] = [];
  for (let e = 1; ; e *= 10) {
    for (const m of [1, 2, 5]) {
      if (m * e > max) return out;
      out.push(m * e);
    }
  }
}

/** A generation id: `v0.6`, `v0.10`, `v0.19`. */
export type GenerationId = Generation['id'];

/** A cumulative counter and how to read its value from the engine's `stats()` at scrape time. */
export type CounterReader = [Scalar, (s: EngineStats) => number];

/** Gauges set from the engine's `stats()` at scrape time; a generation leaves out what it lacks. */
export interface SchedulerGauges {
  running: Scalar;
  waiting: Scalar;
  /** V1 `kv_cache_usage_perc`. */
  kvUsage?: Scalar;
  /** `gpu_cache_usage_perc`: V0's name, kept by V1 until 0.12 (#29330). */
  gpuUsage?: Scalar;
  /** 0.19 `num_requests_waiting_by_reason{reason}`. */
  waitingCapacity?: Scalar;
  waitingDeferred?: Scalar;
  /** V0 only: `num_requests_swapped`, `cpu_cache_usage_perc`, the average throughput gauges. */
  swapped?: Scalar;
  cpuUsage?: Scalar;
  promptThroughput?: Scalar;
  generationThroughput?: Scalar;
}

/** The per-request histograms fed by the HTTP layer (and `iteration` by the engine's steps); absent = not in this generation. */
export interface RequestHistograms {
  ttft: Histogram;
  /** One sample per engine output after the first: V1 `inter_token_latency_seconds`, V0 `time_per_output_token_seconds`. */
  itl: Histogram;
  /** 0.10's deprecated `time_per_output_token_seconds`, fed the same samples as `itl`. */
  itlOld?: Histogram;
  e2e: Histogram;
  promptLen: Histogram;
  genLen: Histogram;
  queue?: Histogram;
  prefill?: Histogram;
  inference?: Histogram;
  decode?: Histogram;
  /** 0.19 `request_time_per_output_token_seconds`: decode time / (output tokens − 1), else 0. */
  tpotRequest?: Histogram;
  /** 0.19 `request_prefill_kv_computed_tokens`: prompt − cached tokens. */
  kvComputed?: Histogram;
  iteration?: Histogram;
  maxGeneration?: Histogram;
  paramsN?: Histogram;
  paramsMaxTokens?: Histogram;
  /** V0 `request_params_best_of`. */
  bestOf?: Histogram;
}

/** Prompt-token counters by source (0.19), fed when a request's first token arrives. */
export interface PromptSourceCounters {
  localCompute: Scalar;
  localCacheHit: Scalar;
  externalKvTransfer: Scalar;
  /** `prompt_tokens_cached_total`: local + external cache hits. */
  cached: Scalar;
}

/** Every vLLM series of one generation, as SimMetrics feeds them. */
export interface GenerationSeries {
  gauges: SchedulerGauges;
  /** Counters read from `stats()` at scrape time. */
  counters: CounterReader[];
  /** `request_success_total{finished_reason}` by reason. */
  success: Record<string, Scalar>;
  hist: RequestHistograms;
  bySource?: PromptSourceCounters;
}

/** The simulator-only series (`loadlab:` prefix). */
export interface SimOnlySeries {
  lateness: Histogram;
  /** Why late steps were late (./late-steps); absent where the engine thread's schedstat is unreadable. */
  lateSteps?: { observe(latenessMs: number, sleptLateMs?: number): void };
  counters: CounterReader[];
  faults: Record<FaultKind, Scalar>;
}

/** Facts of the server the info series carry. */
export interface SeriesFacts {
  /** The engine's configuration (block size, KV blocks, prefix caching, preemption mode, max_model_len). */
  config: EngineConfig;
  /** `--gpu-memory-utilization` in effect (a `cache_config_info` label). */
  gpuMemoryUtilization: number;
  /** Hardware/model profile name (`loadlab:sim_info`). */
  profile: string;
  /** Emulated vLLM version (`loadlab:sim_info`). */
  vllmVersion: string;
  /** `--swap-space` in GiB (V0's `swap_space_bytes` label); default 4, V0's default. */
  swapSpaceGiB?: number;
  /** Emulated generation (`--vllm-version`): which vLLM series exist. Default `v0.19`. */
  generation?: GenerationId;
}

/** `True`/`False`, as Python's `str(bool)`. */
export function pyBool(b: boolean): string {
  return b ? 'True' : 'False';
}

/** The thread's CPU time brought up to now: a thread's own otherwise lags by up to a scheduler tick. */
function freshCpuMs(thread: ThreadSchedReader): number | undefined {
  freshenThreadCpu();
  return thread.read()?.cpuMs;
}

/**
 * Where the engine thread's time went, read at each scrape (src/proc/cpu-times.ts), so a client can
 * tell why steps ended late: the thread's own CPU, its wait for a core, and the whole machine's CPU
 * and the part its hypervisor took (steal). A series whose source is unreadable here (not Linux) is
 * left out, never shown as 0.
 */
function cpuTimeSeries(reg: PromRegistry): CounterReader[] {
  const thread = sharedThreadSchedReader();
  const host = hostCpu() ? hostCpu : undefined;
  const series: Array<[name: string, help: string, ms: (() => number | undefined) | undefined]> = [
    [SIM_CPU_SERIES.threadCpu, "CPU time of the engine's thread.", thread && (() => freshCpuMs(thread))],
    [
      SIM_CPU_SERIES.threadWait,
      "time the engine's thread was runnable but waited for a CPU.",
      thread && (() => thread.read()?.waitMs),
    ],
    [SIM_CPU_SERIES.hostCpu, "the machine's CPU time, all CPUs.", host && (() => host()?.totalMs)],
    [SIM_CPU_SERIES.hostSteal, "the machine's CPU time its hypervisor took (steal).", host && (() => host()?.stealMs)],
  ];
  return series.flatMap(([name, help, ms]) =>
    ms ? [[reg.counter(name, `Simulator only: ${help}`), () => (ms() ?? 0) / 1000] satisfies CounterReader] : [],
  );
}

/** The `loadlab:` series: step lateness, steps and swapped blocks, CPU times, injected faults by kind, and `sim_info` (value 1). */
export function simOnlySeries(reg: PromRegistry, facts: SeriesFacts): SimOnlySeries {
  const lateness = reg.histogram(
    'loadlab:sim_step_lateness_seconds',
    'Simulator only: how late each engine step ended versus its modelled end time.',
    LATENESS_BUCKETS,
  );
  const counters: CounterReader[] = [
    [reg.counter(SIM_STEPS_SERIES, 'Simulator only: engine steps run.'), (s) => s.steps],
    [
      reg.counter(
        SIM_RESYNC_SERIES,
        'Simulator only: steps that ended later than their own duration; the next step started that late, a gap in every running stream.',
      ),
      (s) => s.resyncs,
    ],
    [
      reg.counter('loadlab:sim_swap_out_blocks', 'Simulator only: KV blocks swapped out to CPU (--preemption-mode swap).'),
      (s) => s.swapOutBlocks,
    ],
    [
      reg.counter('loadlab:sim_swap_in_blocks', 'Simulator only: KV blocks swapped back in (--preemption-mode swap).'),
      (s) => s.swapInBlocks,
    ],
  ];
  counters.push(...cpuTimeSeries(reg));
  const lateSteps = createLateSteps();
  if (lateSteps) {
    const help =
      'Simulator only: lateness of steps more than 1 ms late, by cause (waiting for a CPU, asleep past the deadline: woken late, its own garbage collection, or other: its own work or steal).';
    for (const [cause, key] of [
      ['waiting_for_cpu', 'waitingForCpuS'],
      ['woken_late', 'wokenLateS'],
      ['gc', 'gcS'],
      ['other', 'otherS'],
    ] as const) {
      counters.push([reg.counter(SIM_LATE_STEP_SERIES, help, { cause }), () => lateSteps.totals[key]]);
    }
  }
  const faults = {} as Record<FaultKind, Scalar>;
  for (const k of FAULT_KINDS) {
    faults[k] = reg.counter(
      'loadlab:sim_faults_injected',
      'Simulator only: faults injected (--fault-* flags or POST /loadlab/faults), by kind.',
      { kind: k },
    );
  }
  reg
    .gauge('loadlab:sim_info', 'Simulator only: this server is the LoadLab simulator, not a GPU.', {
      simulated: 'true',
      profile: facts.profile,
      vllm_version: facts.vllmVersion,
      preemption_mode: facts.config.preemptionMode,
    })
    .set(1);
  return { lateness, counters, faults, ...(lateSteps ? { lateSteps } : {}) };
}
