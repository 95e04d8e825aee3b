/**
 * `loadlab doctor`, the checks that need a server or the GPU: the target (the simulator starts,
 * or `LOADLAB_BASE_URL` answers) with its vLLM version, engine and model; whether its
 * `max_model_len` covers the longest lesson request (counted, not assumed; in
 * `doctor-max-model-len.ts`); the GPU through `nvidia-smi` and whether port 8000 is already
 * taken (in `doctor-gpu.ts`). The split-out checks are re-exported here. None throws.
 */
import { serverRoot } from '../client/http-get';
import type { TargetMode } from '../lesson/open-target';
import type { MetricFamily } from '../observe/prometheus';
import { recordEffectiveConfig, type EffectiveConfig } from '../observe/effective-config';
import { describeEngine, detectEngine } from '../observe/engine';
import { which } from '../proc/which';
import { startSim, type SimHandle } from '../sim/start';
import type { Check, TargetInfo } from './doctor-check';
import { resolveApiKey } from '../client/url';

/** What the doctor learnt about the target (defined in `doctor-check.ts`, re-exported for existing imports). */
export type { TargetInfo } from './doctor-check';
/** The max_model_len check (defined in `doctor-max-model-len.ts`, re-exported for existing imports). */
export { checkMaxModelLen, LESSON04_MIX_MAX_TOKENS, longestLessonRequests, recommendedMaxModelLen } from './doctor-max-model-len';
/** The GPU and port checks (defined in `doctor-gpu.ts`, re-exported for existing imports). */
export { checkGpu, checkVllmPort, VLLM_DEFAULT_GPU_UTIL } from './doctor-gpu';

/** The target check's outcome, before `checkTarget` adds `stop`. */
interface TargetFound {
  check: Check;
  info: TargetInfo;
}

/** V1 or V0 with the evidence in words, e.g. `V1 (metrics carry an engine label)` (decided by `src/observe/engine.ts`). */
export function engineOf(families: readonly MetricFamily[], version: string | undefined, simulated: boolean): string {
  return describeEngine(detectEngine(families, version, simulated));
}

/** Open (or, for `launched`, only look for) the target. `stop` stops a simulator it started. */
export async function checkTarget(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ check: Check; info: TargetInfo; stop(): Promise<void> }> {
  const apiKey = resolveApiKey(undefined, env);
  const mode: TargetMode = env.LOADLAB_BASE_URL ? 'external' : env.LOADLAB_VLLM_MODEL ? 'launched' : 'sim';
  let sim: SimHandle | undefined;
  const stop = async () => {
    await sim?.stop();
  };
  if (mode === 'launched') {
    const found = launchedTarget(env);
    return { info: found.info, stop, check: found.check };
  }
  let baseUrl: string;
  if (mode === 'external') baseUrl = serverRoot(env.LOADLAB_BASE_URL!);
  else {
    try {
      sim = await startSim();
      baseUrl = sim.baseUrl;
    } catch (err) {
      const msg = (err as Error).message.split('\n')[0];
      return {
        info: { mode, simulated: true },
        stop,
        check: {
          name: 'target',
          level: 'required',
          ok: false,
          detail: `the simulator did not start: ${msg}`,
          fix: 'npm ci && node bin/loadlab.js sim --port 0',
        },
      };
    }
  }
  const found = await describeTarget(mode, baseUrl, apiKey, env);
  return { info: found.info, stop, check: found.check };
}

/** `launched` mode: LoadLab starts vLLM when a lesson opens its target, so the doctor only looks for the `vllm` executable. */
function launchedTarget(env: NodeJS.ProcessEnv): TargetFound {
  const name = 'target';
  const bin = env.LOADLAB_VLLM_BIN ?? 'vllm';
  const found = which(bin, env.PATH);
  return {
    info: { mode: 'launched', simulated: false },
    check: found
      ? {
          name,
          level: 'required',
          ok: true,
          detail: `LoadLab launches ${found} serve ${env.LOADLAB_VLLM_MODEL} when a lesson opens its target (not started by doctor)`,
        }
      : {
          name,
          level: 'required',
          ok: false,
          detail: `LOADLAB_VLLM_MODEL is set but '${bin}' is not on PATH`,
          fix: 'pip install vllm  # in the Python env JupyterLab runs from; or export LOADLAB_VLLM_BIN=/path/to/vllm',
        },
  };
}

/** The target at `baseUrl` answers (or not): its effective config, engine (from /metrics) and model. */
async function describeTarget(
  mode: TargetMode,
  baseUrl: string,
  apiKey: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<TargetFound> {
  const name = 'target';
  const cfg = await recordEffectiveConfig(baseUrl, { ...(apiKey ? { apiKey } : {}) });
  if (!cfg.reachable) {
    return {
      info: { mode, baseUrl, simulated: false },
      check: {
        name,
        level: 'required',
        ok: false,
        detail: `LOADLAB_BASE_URL=${baseUrl} does not answer (${cfg.problems[0] ?? 'no answer'})`,
        fix: `vllm serve /root/autodl-tmp/Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4 --port 8000 --max-model-len 8192  # or: unset LOADLAB_BASE_URL to use the simulator`,
      },
    };
  }
  const info = targetInfo(mode, baseUrl, cfg, apiKey, env);
  const what = mode === 'sim' ? 'simulator started' : `${baseUrl} answers`;
  return {
    info,
    check: {
      name,
      level: 'required',
      ok: true,
      detail: `${what}: ${cfg.kind}${cfg.simulated ? ' (simulated)' : ''}, vLLM ${info.version ?? '?'}, engine ${info.engine}, model ${info.model ?? '?'}`,
    },
  };
}

/** What an answering target is: version, engine (V1/V0, from the effective config), the model card in use and its max_model_len. */
function targetInfo(
  mode: TargetMode,
  baseUrl: string,
  cfg: EffectiveConfig,
  apiKey: string | undefined,
  env: NodeJS.ProcessEnv,
): TargetInfo {
  const card = cfg.models.find((m) => m.id === env.LOADLAB_MODEL) ?? cfg.models[0];
  return {
    mode,
    baseUrl,
    simulated: cfg.simulated,
    // The effective config already read /metrics and decided the engine (observe/engine.ts); no second scrape.
    engine: describeEngine({ engine: cfg.engine, evidence: cfg.engineEvidence }),
    ...(cfg.version ? { version: cfg.version } : {}),
    ...(card ? { model: card.id } : {}),
    ...(card?.maxModelLen ? { maxModelLen: card.maxModelLen } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}
