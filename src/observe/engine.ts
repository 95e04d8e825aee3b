/**
 * Which vLLM engine answers, V0 or V1, from what the server shows: its `/metrics` series and its
 * `/version`. One owner: the run manifest (`effective-config.ts` → probe → runner) and
 * `loadlab doctor` both ask this file.
 */
import type { MetricFamily } from './prometheus';

/** The engine generation of a vLLM server; `unknown` when nothing it shows tells. */
export type ServerEngine = 'V0' | 'V1' | 'unknown';

/** The engine and the evidence, in words. */
export interface EngineFinding {
  engine: ServerEngine;
  /** Why, e.g. `metrics carry an engine label`. */
  evidence: string;
}

/** `0.10.1.1` → [0, 10]; undefined for a version that does not start with two numbers. */
function majorMinor(version: string | undefined): [number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(version ?? '');
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/**
 * V0 or V1, in this order of evidence:
 * - LoadLab's simulator follows V1's scheduler (`src/sim/engine/`).
 * - V0-only gauges `vllm:num_requests_swapped` / `vllm:cpu_cache_usage_perc` (registered by V0's
 *   `Metrics`, `vllm/engine/metrics.py`; V1 has no swap, `vllm/v1/metrics/loggers.py` has neither) → V0.
 * - Series labelled `engine` (V1's `PrometheusStatLogger` labels every series with `model_name` and
 *   `engine`, `vllm/v1/metrics/loggers.py`) → V1.
 * - Version ≥ 0.11: V0 was removed (vLLM PR #25033 "Remove LLMEngine", and PR #27784 "V0 code is
 *   removed already") → V1. Version < 0.8: V1 was not the default before 0.8
 *   (`docs/source/getting_started/v1_user_guide.md`, vLLM PR #15064) → V0.
 * - Otherwise (0.8–0.10 without telling metrics: V1 by default, V0 with `VLLM_USE_V1=0` or a
 *   fallback) → unknown.
 */
export function detectEngine(families: readonly MetricFamily[], version: string | undefined, simulated: boolean): EngineFinding {
  if (simulated) return { engine: 'V1', evidence: 'simulated' };
  const names = new Set(families.map((f) => f.name));
  if (names.has('vllm:num_requests_swapped') || names.has('vllm:cpu_cache_usage_perc'))
    return { engine: 'V0', evidence: 'V0-only metrics present' };
  if (families.some((f) => f.name.startsWith('vllm:') && f.samples.some((s) => 'engine' in s.labels)))
    return { engine: 'V1', evidence: 'metrics carry an engine label' };
  const mm = majorMinor(version);
  if (mm && (mm[0] > 0 || mm[1] >= 11)) return { engine: 'V1', evidence: 'vLLM ≥ 0.11 has no V0' };
  if (mm && mm[0] === 0 && mm[1] < 8) return { engine: 'V0', evidence: 'vLLM < 0.8 has no V1 by default' };
  return { engine: 'unknown', evidence: 'no telling metrics' };
}

/** `V1 (metrics carry an engine label)`: the finding in words, as the doctor shows it. */
export function describeEngine(f: EngineFinding): string {
  return `${f.engine} (${f.evidence})`;
}
