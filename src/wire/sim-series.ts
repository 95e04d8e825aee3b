/**
 * Names of the simulator's own `/metrics` series that the client reads to judge the simulator
 * (src/runner/sim-lateness.ts); the simulator exports them (src/sim/http/metric-series.ts). Real vLLM
 * has none of them.
 */

/**
 * The simulator's CPU-time counters (seconds, exported with `_total`): its engine thread's own CPU and
 * its wait for a core, and the machine's CPU time and the part the hypervisor took (steal).
 */
export const SIM_CPU_SERIES = {
  threadCpu: 'loadlab:sim_thread_cpu_seconds',
  threadWait: 'loadlab:sim_thread_wait_seconds',
  hostCpu: 'loadlab:sim_host_cpu_seconds',
  hostSteal: 'loadlab:sim_host_steal_seconds',
} as const;

/** Lateness of the simulator's steps more than 1 ms late, seconds, by `cause`: `waiting_for_cpu`, `gc` (its engine thread's garbage collection) or `other`. */
export const SIM_LATE_STEP_SERIES = 'loadlab:sim_late_step_seconds';

/** Engine steps launched so far (exported with `_total`); the calibration's decode window reads it (src/fit/decode-window.ts). */
export const SIM_STEPS_SERIES = 'loadlab:sim_steps';

/**
 * Steps that ended later than their own duration (exported with `_total`). After each, the simulator
 * started the next step at the actual time, so every running stream's inter-token latency holds the gap
 * (src/sim/engine/engine-loop.ts); the calibration leaves those steps out (src/fit/decode-window.ts).
 */
export const SIM_RESYNC_SERIES = 'loadlab:sim_resyncs';

/**
 * The simulator's send log (src/sim/http/send-log.ts): `POST` `{"request_ids": [...]}` answers
 * `{"clock": "CLOCK_MONOTONIC ms", "sends": {"<x-request-id>": [ms, …]}}`, the time each token chunk of those
 * streams was written, and forgets them. Real vLLM has no such route (a 404 there).
 */
export const SIM_SEND_LOG_PATH = '/loadlab/send-log';
/** The `clock` the send log's times are on. */
export const SIM_SEND_LOG_CLOCK = 'CLOCK_MONOTONIC ms';
