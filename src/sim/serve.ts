/**
 * Boots the simulated vLLM server in this process: flags → engine config → tokenizer →
 * engine on the real clock → HTTP. Prints vLLM-like startup lines, a SIMULATED banner, the
 * periodic `Engine 000:` stats line, and finally `LOADLAB_SIM_LISTENING <url>` (what
 * `startSim` waits for). Used by `src/sim/main.ts` (process entry) and `loadlab sim`.
 */
import { watchParent } from '../proc/child';
import { pinSimEngine } from '../proc/cpu-split';
import { seededRng } from '../rng';
import { formatFlagsHelp, parseServeArgs, toServeArgs, type ServeArgs } from '../vllm/flags';
import { clockMode, realClock } from './engine/clock';
import { kvCacheTokens, maxConcurrency, resolveEngineConfig, V1_DEFAULTS } from './engine/config';
import { createEngine } from './engine/engine';
import { createFaults, describeFaults, type Faults } from './http/faults';
import { type Generation, resolveGeneration } from './http/generation';
import { createSimServer } from './http/http';
import { SimMetrics } from './http/metrics';
import { DEFAULT_PROFILE, type Profile } from './engine/profile';
import { defaultProfileName, loadProfileFile } from './engine/profile-file';
import { profileFlagsHelp, splitProfileArgs } from './profile-args';
import { QueueTimes } from './engine/queue-time';
import { loadTokenizer } from './http/tokens';
import type { EngineConfig } from './engine/types';
import { prefix, startStatsLine } from './log-lines';

export { LATENESS_WARN_MS } from './log-lines';

/** The line `startSim` waits for; the URL follows after one space. */
export const LISTENING_MARKER = 'LOADLAB_SIM_LISTENING';

/** A running in-process simulator. */
export interface RunningSim {
  url: string;
  port: number;
  /** Stop the engine and the HTTP server. */
  close(): Promise<void>;
}

/** The SIMULATED banner and vLLM's first startup lines. */
function logBanner(log: (line: string) => void, args: ServeArgs, modelPath: string, gen: Generation, profile: Profile): void {
  log('='.repeat(100));
  log(
    `  SIMULATED vLLM (LoadLab) ${gen.version} (${gen.engine} wire and /metrics; V1 scheduling) — no GPU here: an engine model of ${profile.gpu.name} serving ${profile.model.name}`,
  );
  log('  Same HTTP API and /metrics as vLLM; step times, KV cache and scheduling are simulated in real time.');
  log(`  Profile ${profile.id} (${profile.status ?? 'built in code'}); --print-profile shows its numbers and sources.`);
  log('='.repeat(100));
  log(`${prefix('INFO', 'api_server.py:1')} vLLM API server version ${gen.version} (simulated, profile ${profile.id})`);
  log(
    `${prefix('INFO', 'api_server.py:2')} args: ${[modelPath, ...toServeArgs(args.flags), '--host', args.host, '--port', String(args.port)].join(' ')}`,
  );
}

/** KV cache size, maximum concurrency, the effective engine config, the faults switched on, and the engine's CPU. */
function logEngineConfig(log: (line: string) => void, config: EngineConfig, faults: Faults, seed: number, cpu?: string): void {
  log(`${prefix('INFO', 'kv_cache_utils.py:1')} GPU KV cache size: ${kvCacheTokens(config).toLocaleString('en-US')} tokens`);
  log(
    `${prefix('INFO', 'kv_cache_utils.py:2')} Maximum concurrency for ${config.maxModelLen.toLocaleString('en-US')} tokens per request: ${maxConcurrency(config).toFixed(2)}x`,
  );
  log(`${prefix('INFO', 'sim.py:1')} Effective engine config: ${JSON.stringify(config)}`);
  const active = describeFaults(faults.settings());
  if (active)
    log(
      `${prefix('WARNING', 'sim.py:3')} SIMULATED FAULTS on (seed ${seed}): ${active}. GET/POST /loadlab/faults shows or changes them.`,
    );
  if (cpu) log(`${prefix('INFO', 'sim.py:4')} CPU: ${cpu}`);
}

/**
 * Starts the simulator from parsed `vllm serve` args on `profile` (default: the RTX 4090 +
 * Qwen2.5-7B-Instruct-GPTQ-Int4 file). Throws (message names the fix) on a bad configuration.
 * `log` receives each output line (default: stdout); `pin` is the engine thread's CPU (src/proc/cpu-split.ts).
 */
export async function serveSim(
  args: ServeArgs,
  log: (line: string) => void = (l) => console.log(l),
  profile: Profile = DEFAULT_PROFILE,
  pin: { cpu?: number; note?: string } = {},
): Promise<RunningSim> {
  const gen = resolveGeneration(args.vllmVersion);
  const config = resolveEngineConfig(args.flags, profile);
  const modelPath = args.model ?? profile.model.name;
  const served = args.flags.servedModelName ?? modelPath;
  const seed = args.flags.seed ?? 0;
  // Checked first, so bad fault settings fail before the tokenizer loads; faults strike only once serving.
  const faults = createFaults({ settings: args.faults, seed, onInjected: (kind) => metrics.observeFault(kind) });
  logBanner(log, args, modelPath, gen, profile);

  const t0 = performance.now();
  const tok = await loadTokenizer();
  log(`${prefix('INFO', 'tokenizer.py:1')} Loaded Qwen tokenizer in ${((performance.now() - t0) / 1000).toFixed(2)} s`);

  const clock = realClock({ mode: clockMode(process.env.LOADLAB_SIM_CLOCK) });
  const engine = createEngine({ config, profile, clock, seed });
  const metrics = new SimMetrics({
    modelName: served,
    config,
    profile: profile.id,
    vllmVersion: gen.version,
    generation: gen.id,
    swapSpaceGiB: args.flags.swapSpace ?? V1_DEFAULTS.swapSpaceGiB,
    gpuMemoryUtilization: args.flags.gpuMemoryUtilization ?? V1_DEFAULTS.gpuMemoryUtilization,
  });
  const queueTimes = new QueueTimes(
    () => engine.scheduler.running,
    (q) => metrics.observeQueueTime(q),
  );
  const lateness: number[] = [];
  engine.onStep((info) => {
    metrics.observeStep(info);
    queueTimes.onStep(info.startMs);
    lateness.push(info.latenessMs);
  });
  const server = createSimServer({
    engine,
    tok,
    metrics,
    queueTimes,
    servedModelName: served,
    modelPath,
    generation: gen,
    now: () => clock.now(),
    rng: seededRng(seed),
    apiOverheadMs: profile.perf.apiOverheadMs,
    enablePromptTokensDetails: args.enablePromptTokensDetails,
    enableForceIncludeUsage: args.enableForceIncludeUsage,
    streamInterval: args.flags.streamInterval,
    hooks: faults.hooks,
    profile: { id: profile.id, status: profile.status ?? 'built in code', gpu: profile.gpu.name, model: profile.model.name },
    ...(pin.cpu !== undefined ? { engineCpu: pin.cpu } : {}),
  });
  logEngineConfig(log, config, faults, seed, pin.note);

  const port = await server.listen(args.port, args.host);
  const hostForUrl = args.host.includes(':') ? `[${args.host}]` : args.host;
  const url = `http://${hostForUrl}:${port}`;
  log(`${prefix('INFO', 'api_server.py:3')} Starting vLLM API server 0 on ${url}`);
  log(`${prefix('INFO', 'api_server.py:4')} Startup complete in ${((performance.now() - t0) / 1000).toFixed(2)} s (simulated).`);
  log(`${LISTENING_MARKER} ${url}`);
  faults.start();
  const timer = args.statsIntervalS > 0 ? startStatsLine(engine, clock, lateness, log, args.statsIntervalS) : undefined;

  return {
    url,
    port,
    async close() {
      if (timer) clearInterval(timer);
      faults.close();
      engine.close();
      await server.close();
    },
  };
}

/**
 * Runs the simulator as this process's job: parse `argv` (`vllm serve` flags), print help or
 * serve, exit 0 on SIGTERM/SIGINT. A bad flag or configuration prints the reason to stderr
 * and sets exit code 1. Started by `startSim` (src/proc/child.ts), it also exits when its
 * parent goes away (`watchParent`), so the simulator never outlives the process that started it.
 */
export async function runSimProcess(argv: string[]): Promise<void> {
  let sim: RunningSim;
  try {
    const split = splitProfileArgs(argv);
    if (split.printProfile !== undefined) {
      const which = split.printProfile === true ? (split.profile ?? defaultProfileName()) : split.printProfile;
      process.stdout.write(loadProfileFile(which).text);
      return;
    }
    const args = parseServeArgs(split.rest);
    if (args.help) {
      console.log(`${formatFlagsHelp()}\n\n${profileFlagsHelp()}`);
      return;
    }
    const profile = loadProfileFile(split.profile ?? defaultProfileName()).profile;
    sim = await serveSim(args, undefined, profile, pinSimEngine());
  } catch (err) {
    console.error(`ERROR [loadlab-sim] ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
    return;
  }
  let stopping = false;
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`INFO [loadlab-sim] ${why}: shutting down.`);
    setTimeout(() => process.exit(0), 2000).unref();
    sim.close().then(
      () => process.exit(0),
      () => process.exit(0),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  watchParent(stop);
}
