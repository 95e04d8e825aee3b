/**
 * Server-side timelines recorded alongside a run, on the run's clock: `/metrics` scrapes
 * (`metrics.jsonl`) and `nvidia-smi` samples (`gpu.jsonl`), so a lesson can put what the
 * server saw (queue depth, KV usage, preemptions) under what the client saw. `/metrics` is
 * scraped every 250 ms on average with seeded jitter (see `startMetricsSampler`), so periodic
 * arrivals (e.g. 4 req/s) cannot alias with the scrapes.
 */
import { startGpuSampler } from '../observe/gpu';
import { startMetricsSampler } from '../observe/sampler';
import type { RunWriter } from '../run/store';
import type { GpuSample, MetricsSample } from '../types';

/** Samplers started for one run. `stop()` resolves with whatever was sampled. */
export interface RunSamplers {
  stop(): Promise<{ metrics?: MetricsSample[]; gpu?: GpuSample[] }>;
}

/**
 * Start the samplers `opts` asks for (none by default). `sampleMetrics`: true (mean period 250 ms)
 * or the mean period in ms; gaps are jittered ±50 % with a fixed seed. Scrapes carry `apiKey` and `headers`.
 */
export function startSamplers(
  opts: { sampleMetrics?: boolean | number; sampleGpu?: boolean; apiKey?: string; headers?: Record<string, string> },
  baseUrl: string,
  now: () => number,
  writer: RunWriter | undefined,
): RunSamplers {
  const metrics = opts.sampleMetrics
    ? startMetricsSampler({
        baseUrl,
        now,
        intervalMs: typeof opts.sampleMetrics === 'number' ? opts.sampleMetrics : 250,
        ...(writer ? { file: writer.path('metrics.jsonl') } : {}),
        ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
        ...(opts.headers ? { headers: opts.headers } : {}),
      })
    : undefined;
  const gpu = opts.sampleGpu ? startGpuSampler({ now, ...(writer ? { file: writer.path('gpu.jsonl') } : {}) }) : undefined;
  return {
    async stop() {
      const [m, g] = await Promise.all([metrics?.stop(), gpu?.stop()]);
      return { ...(m ? { metrics: m } : {}), ...(g && gpu?.available ? { gpu: g } : {}) };
    },
  };
}
