/**
 * The simulator's `/metrics`: vLLM V1's Prometheus series (names, labels and buckets as in
 * `vllm/v1/metrics/loggers.py`) plus simulator-only `loadlab:` series. Scheduler gauges and
 * token counters mirror the engine's `stats()` at scrape time; latency histograms are fed by
 * the HTTP layer per request; step histograms by the engine's step reports.
 */
import type { FaultKind } from './faults';
import {
  cacheConfigInfo,
  engineCounters,
  requestHistograms,
  schedulerGauges,
  simOnlySeries,
  successCounters,
  type CounterReader,
  type RequestHistograms,
  type SchedulerGauges,
  type SeriesFacts,
  type SimOnlySeries,
} from './metric-series';
import { PromRegistry, pyFloat, type Scalar } from './prom';
import type { EngineStats, FinishReason, StepInfo } from '../engine/types';

export {
  buckets125,
  ITERATION_TOKEN_BUCKETS,
  ITL_BUCKETS,
  LAT_BUCKETS,
  LATENESS_BUCKETS,
  TTFT_BUCKETS,
} from './metric-series';

/** What the metrics need to know about the server. */
export interface SimMetricsOptions extends SeriesFacts {
  /** Served model name (`model_name` label). */
  modelName: string;
}

/** vLLM's metric series, fed by the HTTP layer and the engine. */
export class SimMetrics {
  private readonly reg: PromRegistry;
  private readonly gauges: SchedulerGauges;
  private readonly counters: CounterReader[];
  private readonly success: Record<string, Scalar>;
  private readonly hist: RequestHistograms;
  private readonly sim: SimOnlySeries;

  /** Registers every series in vLLM's order (see metric-series.ts): the order of the rendered text. */
  constructor(opts: SimMetricsOptions) {
    const reg = new PromRegistry({ engine: '0', model_name: opts.modelName });
    this.reg = reg;
    this.gauges = schedulerGauges(reg);
    cacheConfigInfo(reg, opts);
    const engine = engineCounters(reg);
    this.success = successCounters(reg);
    this.hist = requestHistograms(reg, opts.config.maxModelLen);
    this.sim = simOnlySeries(reg, opts);
    this.counters = [...engine, ...this.sim.counters];
  }

  /** A request's first output: TTFT from HTTP arrival, seconds. */
  observeFirstToken(ttftS: number): void {
    this.hist.ttft.observe(ttftS);
  }

  /** Time from entering the engine to first being scheduled, seconds. */
  observeQueueTime(seconds: number): void {
    this.hist.queue.observe(seconds);
  }

  /** Time between two engine outputs of one request (one sample per output, not per token). */
  observeInterToken(seconds: number): void {
    this.hist.itl.observe(seconds);
  }

  /** A request the engine finished (client-side aborts are not counted, as in vLLM). */
  observeFinish(reason: FinishReason, e2eS: number, decodeS: number, promptTokens: number, outputTokens: number): void {
    this.success[reason]?.inc();
    this.hist.e2e.observe(e2eS);
    this.hist.decode.observe(decodeS);
    this.hist.promptLen.observe(promptTokens);
    this.hist.genLen.observe(outputTokens);
  }

  /** One injected fault (`loadlab:sim_faults_injected_total{kind}`). */
  observeFault(kind: FaultKind): void {
    this.sim.faults[kind].inc();
  }

  /** One engine step: iteration tokens and the simulator's lateness. */
  observeStep(info: StepInfo): void {
    if (info.iterationTokens > 0) this.hist.iteration.observe(info.iterationTokens);
    this.sim.lateness.observe(Math.max(0, info.latenessMs) / 1000);
  }

  /** Prometheus text with gauges and counters taken from `stats` (the engine's current state). */
  render(stats: EngineStats): string {
    this.gauges.running.set(stats.running);
    this.gauges.waiting.set(stats.waiting);
    this.gauges.kvUsage.set(stats.kvUsage);
    this.gauges.gpuUsage.set(stats.kvUsage);
    for (const [counter, read] of this.counters) counter.set(read(stats));
    return this.reg.render() + processMemoryText();
  }
}

/**
 * The simulator process's resident memory, as vLLM's /metrics shows its own: prometheus_client's
 * default registry includes the process collector (`prometheus_client/process_collector.py`,
 * `process_resident_memory_bytes`, no labels). Read from the OS at each scrape.
 */
export function processMemoryText(): string {
  return (
    '# HELP process_resident_memory_bytes Resident memory size in bytes.\n' +
    '# TYPE process_resident_memory_bytes gauge\n' +
    `process_resident_memory_bytes ${pyFloat(process.memoryUsage.rss())}\n`
  );
}
