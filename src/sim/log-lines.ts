/**
 * The simulator's log lines in vLLM's form: the `INFO 12-02 11:05:01 [file.py:123]` prefix and the
 * periodic `Engine 000:` stats line, with the simulator's own step lateness beside vLLM's figures.
 */
import type { EngineClock, EngineStats, SimEngine } from './engine/types';

/** Step lateness p99 above which the simulator warns that it is falling behind real time, ms. */
export const LATENESS_WARN_MS = 2;

/** vLLM's log prefix: `INFO 12-02 11:05:01 [file.py:123]`. */
export function prefix(level: 'INFO' | 'WARNING' | 'ERROR', where: string): string {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  return `${level} ${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())} [${where}]`;
}

/** p99 by linear interpolation at (n−1)·0.99 (numpy's default). */
function p99(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * 0.99;
  const lo = Math.floor(pos);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (pos - lo);
}

/**
 * vLLM's periodic `Engine 000:` stats line every `intervalS` seconds (none while idle), with the
 * simulator's step lateness p99 (`lateness` is drained each time); warns past `LATENESS_WARN_MS`.
 */
export function startStatsLine(
  engine: SimEngine,
  clock: EngineClock,
  lateness: number[],
  log: (line: string) => void,
  intervalS: number,
): NodeJS.Timeout {
  let prev: EngineStats = engine.stats();
  let prevMs = clock.now();
  let wasIdle = true;
  const timer = setInterval(() => {
    const s = engine.stats();
    const dt = Math.max(1e-9, (clock.now() - prevMs) / 1000);
    const promptTps = (s.promptTokens - prev.promptTokens) / dt;
    const genTps = (s.generationTokens - prev.generationTokens) / dt;
    const preempt = s.numPreemptions - prev.numPreemptions;
    const late = p99(lateness.splice(0));
    const idle = promptTps === 0 && genTps === 0 && s.running === 0 && s.waiting === 0;
    prev = s;
    prevMs = clock.now();
    if (idle && wasIdle) return; // like vLLM: no repeated lines while idle
    wasIdle = idle;
    // Since start (vLLM: over the last 1000 requests; the same until then).
    const hit = s.prefixCacheQueries > 0 ? (100 * s.prefixCacheHits) / s.prefixCacheQueries : 0;
    log(
      `${prefix('INFO', 'loggers.py:1')} Engine 000: Avg prompt throughput: ${promptTps.toFixed(1)} tokens/s, Avg generation throughput: ${genTps.toFixed(1)} tokens/s, ` +
        `Running: ${s.running} reqs, Waiting: ${s.waiting} reqs, Preemptions: ${preempt}, GPU KV cache usage: ${(100 * s.kvUsage).toFixed(1)}%, ` +
        `Prefix cache hit rate: ${hit.toFixed(1)}% | sim step lateness p99: ${late.toFixed(2)} ms`,
    );
    if (late > LATENESS_WARN_MS) {
      log(
        `${prefix('WARNING', 'sim.py:2')} simulator is falling behind real time: step lateness p99 ${late.toFixed(2)} ms > ${LATENESS_WARN_MS} ms, so timing numbers are less faithful (close busy programs or lower the load).`,
      );
    }
  }, intervalS * 1000);
  timer.unref();
  return timer;
}
