/**
 * The simulator's `/metrics`: the Prometheus series of the emulated vLLM generation (V1 names,
 * labels and buckets from `vllm/v1/metrics/loggers.py` for 0.10 and 0.19, V0's from
 * `vllm/engine/metrics.py` for 0.6; see metric-v1.ts and metric-v0.ts) plus simulator-only
 * `loadlab:` series in every generation. Scheduler gauges and token counters mirror the engine's
 * `stats()` at scrape time; per-request histograms are fed by the HTTP layer; step histograms by
 * the engine's step reports.
 */
import type { FaultKind } from './faults';
import { simOnlySeries, type CounterReader, type GenerationSeries, type SeriesFacts, type SimOnlySeries } from './metric-series';
import { v0Series } from './metric-v0';
import { v1Series } from './metric-v1';
import { PromRegistry, pyFloat } from './prom';
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

/** Per-request facts of a finished request beyond its latencies (for the V1 request histograms). */
export interface FinishFacts {
  /** First scheduled → first token, seconds (`request_prefill_time_seconds`). */
  prefillS?: number;
  /** First scheduled → last token, seconds (`request_inference_time_seconds`). */
  inferenceS?: number;
  /** Prompt tokens served from the prefix cache. */
  cachedTokens?: number;
  /** The request's `max_tokens` if the client set it (`request_params_max_tokens`). */
  maxTokensParam?: number;
  /** The request's `n` (`request_params_n`, V0's `request_params_best_of`). Default 1. */
  n?: number;
}

/** vLLM's metric series of one generation, fed by the HTTP layer and the engine. */
export class SimMetrics {
  private readonly reg: PromRegistry;
  private readonly series: GenerationSeries;
  private readonly counters: CounterReader[];
  private readonly sim: SimOnlySeries;
  private readonly v0: boolean;
  private last = { atMs: Date.now(), prompt: 0, generation: 0 };

  /** Registers every series of `opts.generation` (default `v0.19`) in vLLM's order: the order of the rendered text. */
  constructor(opts: SimMetricsOptions) {
    this.v0 = opts.generation === 'v0.6';
    const reg = this.v0
      ? new PromRegistry({ model_name: opts.modelName }, undefined, false)
      : new PromRegistry({ engine: '0', model_name: opts.modelName });
    this.reg = reg;
    this.series = this.v0 ? v0Series(reg, opts) : v1Series(reg, { ...opts, generation: opts.generation ?? 'v0.19' });
    this.sim = simOnlySeries(reg, opts);
    this.counters = [...this.series.counters, ...this.sim.counters];
  }

  /** A request's first output: TTFT from HTTP arrival, seconds. */
  observeFirstToken(ttftS: number): void {
    this.series.hist.ttft.observe(ttftS);
  }

  /** Time from entering the engine to first being scheduled, seconds (V1 only). */
  observeQueueTime(seconds: number): void {
    this.series.hist.queue?.observe(seconds);
  }

  /** Time between two engine outputs of one request (one sample per output, not per token). */
  observeInterToken(seconds: number): void {
    this.series.hist.itl.observe(seconds);
    this.series.hist.itlOld?.observe(seconds);
  }

  /**
   * A request's prefill completed (its first token): its prompt tokens by source, as vLLM's
   * `PromptTokenStats` (`vllm/v1/metrics/stats.py`): computed locally, or hit in the local
   * prefix cache. The simulator has no KV connector, so `external_kv_transfer` stays 0.
   */
  observePromptSources(promptTokens: number, cachedTokens: number): void {
    const s = this.series.bySource;
    if (!s) return;
    s.localCompute.inc(promptTokens - cachedTokens);
    s.localCacheHit.inc(cachedTokens);
    s.cached.inc(cachedTokens);
  }

  /** A request the engine finished (client-side aborts are not counted, as in vLLM). */
  observeFinish(
    reason: FinishReason,
    e2eS: number,
    decodeS: number,
    promptTokens: number,
    outputTokens: number,
    facts: FinishFacts = {},
  ): void {
    const h = this.series.hist;
    this.series.success[reason]?.inc();
    h.e2e.observe(e2eS);
    h.decode?.observe(decodeS);
    if (facts.prefillS !== undefined) h.prefill?.observe(facts.prefillS);
    if (facts.inferenceS !== undefined) h.inference?.observe(facts.inferenceS);
    h.tpotRequest?.observe(outputTokens > 1 ? decodeS / (outputTokens - 1) : 0);
    h.kvComputed?.observe(promptTokens - Math.max(0, facts.cachedTokens ?? 0));
    h.promptLen.observe(promptTokens);
    h.genLen.observe(outputTokens);
    h.maxGeneration?.observe(outputTokens);
    h.paramsN?.observe(facts.n ?? 1);
    h.bestOf?.observe(facts.n ?? 1);
    if (facts.maxTokensParam) h.paramsMaxTokens?.observe(facts.maxTokensParam);
  }

  /** One injected fault (`loadlab:sim_faults_injected_total{kind}`). */
  observeFault(kind: FaultKind): void {
    this.sim.faults[kind].inc();
  }

  /** One engine step: iteration tokens and the simulator's lateness. */
  observeStep(info: StepInfo): void {
    if (info.iterationTokens > 0) this.series.hist.iteration?.observe(info.iterationTokens);
    this.sim.lateness.observe(Math.max(0, info.latenessMs) / 1000);
    this.sim.lateSteps?.observe(info.latenessMs, info.sleptLateMs);
  }

  /** Prometheus text with gauges and counters taken from `stats` (the engine's current state). */
  render(stats: EngineStats): string {
    const g = this.series.gauges;
    g.running.set(stats.running);
    // V0 counts swapped requests apart (`num_requests_swapped`); V1 has no swapped queue.
    g.waiting.set(this.v0 ? stats.waiting - stats.swapped : stats.waiting);
    g.waitingCapacity?.set(stats.waiting);
    g.waitingDeferred?.set(0);
    g.kvUsage?.set(stats.kvUsage);
    g.gpuUsage?.set(stats.kvUsage);
    g.swapped?.set(stats.swapped);
    g.cpuUsage?.set(stats.cpuKvUsage);
    if (g.promptThroughput && g.generationThroughput) this.throughput(stats, g.promptThroughput, g.generationThroughput);
    for (const [counter, read] of this.counters) counter.set(read(stats));
    return this.reg.render() + processMemoryText();
  }

  /** V0's average throughput gauges: tokens per second since the previous scrape (V0 logged them per 5 s interval). */
  private throughput(stats: EngineStats, prompt: GenerationSeries['gauges']['running'], gen: typeof prompt): void {
    const nowMs = Date.now();
    const dt = (nowMs - this.last.atMs) / 1000;
    if (dt <= 0) return;
    prompt.set((stats.promptTokens - this.last.prompt) / dt);
    gen.set((stats.generationTokens - this.last.generation) / dt);
    this.last = { atMs: nowMs, prompt: stats.promptTokens, generation: stats.generationTokens };
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
