/**
 * `loadlab doctor`, the checks that need a server or the GPU: the target (the simulator starts,
 * or `LOADLAB_BASE_URL` answers) with its vLLM version, engine and model; whether its
 * `max_model_len` covers the longest lesson request (counted, not assumed); the GPU through
 * `nvidia-smi`; and whether port 8000 is already taken. None throws.
 */
import { spawnSync } from 'node:child_process';
import { parseGpuQueryLine, GPU_QUERY_FIELDS } from '../observe/gpu-parse';
import { httpGet, serverRoot } from '../client/http-get';
import type { TargetMode } from '../lesson/open-target';
import { checkPort } from '../proc/port';
import { parsePrometheus, type MetricFamily } from '../observe/prometheus';
import { recordEffectiveConfig } from '../observe/effective-config';
import { which } from '../proc/which';
import { startSim, type SimHandle } from '../sim/start';
import { loadTokenizer, type ChatMessageIn } from '../sim/http/tokens';
import type { RequestSpec } from '../types';
import { longPlusShort, shortLongMix } from '../workload/workload';
import type { Check } from './doctor-check';

/** What the doctor learnt about the target. */
export interface TargetInfo {
  mode: TargetMode;
  baseUrl?: string;
  model?: string;
  maxModelLen?: number;
  simulated: boolean;
  version?: string;
  /** `V1`, `V0` or `unknown`, with the evidence in words. */
  engine?: string;
  apiKey?: string;
}

/** `max_tokens` of lesson 04's 90/10 mix (notebooks/04-chunked-prefill.ipynb; a test checks the notebook still says so). */
export const LESSON04_MIX_MAX_TOKENS = 64;

/** The longest requests the lessons send (lesson 04's ≈4k-character long prompt), built by the lessons' own builders. */
export function longestLessonRequests(): { what: string; spec: RequestSpec }[] {
  const long = longPlusShort().requests!.find((r) => r.tag === 'long')!;
  const mix = shortLongMix(10, { maxTokens: LESSON04_MIX_MAX_TOKENS, fixedOutput: true }).find((r) => r.tag === 'long')!;
  return [
    { what: 'lesson 04 long prompt (longPlusShort)', spec: long },
    { what: 'lesson 04 90/10 mix, long request (shortLongMix)', spec: mix },
  ];
}

/** V1 or V0 from what the server exposes (vLLM only; the simulator follows V1). */
export function engineOf(families: readonly MetricFamily[], version: string | undefined, simulated: boolean): string {
  if (simulated) return 'V1 (simulated)';
  const names = new Set(families.map((f) => f.name));
  // V0-only gauges (vllm/engine/metrics.py; gone in V1, docs/design/metrics.md).
  if (names.has('vllm:num_requests_swapped') || names.has('vllm:cpu_cache_usage_perc')) return 'V0 (V0-only metrics present)';
  // V1 labels every series with `engine` (vllm/v1/metrics/loggers.py).
  if (families.some((f) => f.name.startsWith('vllm:') && f.samples.some((s) => 'engine' in s.labels))) return 'V1 (metrics carry an engine label)';
  const [major, minor] = (version ?? '').split('.').map(Number);
  if (major === 0 && minor < 8) return 'V0 (vLLM < 0.8 has no V1 by default)';
  return 'unknown (no telling metrics)';
}

/** Open (or, for `launched`, only look for) the target. `stop` stops a simulator it started. */
export async function checkTarget(env: NodeJS.ProcessEnv = process.env): Promise<{ check: Check; info: TargetInfo; stop(): Promise<void> }> {
  const apiKey = env.LOADLAB_API_KEY ?? env.OPENAI_API_KEY;
  const mode: TargetMode = env.LOADLAB_BASE_URL ? 'external' : env.LOADLAB_VLLM_MODEL ? 'launched' : 'sim';
  const name = 'target';
  let sim: SimHandle | undefined;
  const stop = async () => { await sim?.stop(); };
  if (mode === 'launched') {
    const bin = env.LOADLAB_VLLM_BIN ?? 'vllm';
    const found = which(bin, env.PATH);
    return {
      info: { mode, simulated: false }, stop,
      check: found
        ? { name, level: 'required', ok: true, detail: `LoadLab launches ${found} serve ${env.LOADLAB_VLLM_MODEL} when a lesson opens its target (not started by doctor)` }
        : { name, level: 'required', ok: false, detail: `LOADLAB_VLLM_MODEL is set but '${bin}' is not on PATH`, fix: 'pip install vllm  # in the Python env JupyterLab runs from; or export LOADLAB_VLLM_BIN=/path/to/vllm' },
    };
  }
  let baseUrl: string;
  if (mode === 'external') baseUrl = serverRoot(env.LOADLAB_BASE_URL!);
  else {
    try {
      sim = await startSim();
      baseUrl = sim.baseUrl;
    } catch (err) {
      const msg = (err as Error).message.split('\n')[0];
      return { info: { mode, simulated: true }, stop, check: { name, level: 'required', ok: false, detail: `the simulator did not start: ${msg}`, fix: 'npm ci && node bin/loadlab.js sim --port 0' } };
    }
  }
  const cfg = await recordEffectiveConfig(baseUrl, { ...(apiKey ? { apiKey } : {}) });
  if (!cfg.reachable) {
    return {
      info: { mode, baseUrl, simulated: false }, stop,
      check: {
        name, level: 'required', ok: false,
        detail: `LOADLAB_BASE_URL=${baseUrl} does not answer (${cfg.problems[0] ?? 'no answer'})`,
        fix: `vllm serve /root/autodl-tmp/Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4 --port 8000 --max-model-len 8192  # or: unset LOADLAB_BASE_URL to use the simulator`,
      },
    };
  }
  const met = await httpGet(`${baseUrl}/metrics`, { timeoutMs: 5000, ...(apiKey ? { apiKey } : {}) }).catch(() => undefined);
  let families: MetricFamily[] = [];
  try { families = met?.status === 200 ? parsePrometheus(met.text) : []; } catch { /* engine stays unknown */ }
  const card = cfg.models.find((m) => m.id === env.LOADLAB_MODEL) ?? cfg.models[0];
  const info: TargetInfo = {
    mode, baseUrl, simulated: cfg.simulated, engine: engineOf(families, cfg.version, cfg.simulated),
    ...(cfg.version ? { version: cfg.version } : {}), ...(card ? { model: card.id } : {}),
    ...(card?.maxModelLen ? { maxModelLen: card.maxModelLen } : {}), ...(apiKey ? { apiKey } : {}),
  };
  const what = mode === 'sim' ? 'simulator started' : `${baseUrl} answers`;
  return {
    info, stop,
    check: { name, level: 'required', ok: true, detail: `${what}: ${cfg.kind}${cfg.simulated ? ' (simulated)' : ''}, vLLM ${info.version ?? '?'}, engine ${info.engine}, model ${info.model ?? '?'}` },
  };
}

/** Prompt tokens of a chat request, chat template included: the server's `POST /tokenize` (messages form), else LoadLab's Qwen2.5 tokenizer. */
async function chatTokens(spec: RequestSpec, info: TargetInfo): Promise<{ count: number; how: string }> {
  if (info.baseUrl) {
    try {
      const res = await fetch(`${info.baseUrl}/tokenize`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(info.apiKey ? { authorization: `Bearer ${info.apiKey}` } : {}) },
        // vLLM's chat form of /tokenize (vllm/entrypoints/serve/tokenize/protocol.py; vllm/entrypoints/openai/protocol.py in older releases).
        body: JSON.stringify({ model: info.model, messages: spec.messages, add_generation_prompt: true }),
        signal: AbortSignal.timeout(10_000),
      });
      const json = (await res.json()) as { count?: unknown };
      if (res.ok && typeof json.count === 'number') return { count: json.count, how: "the server's /tokenize" };
    } catch { /* fall back below */ }
  }
  const tok = await loadTokenizer();
  return { count: tok.encodeChat(spec.messages as ChatMessageIn[], { addGenerationPrompt: true }).length, how: "LoadLab's Qwen2.5 tokenizer (/tokenize did not answer)" };
}

/** A `--max-model-len` that covers `tokens`: 8192, or the next power of two above it. */
export function recommendedMaxModelLen(tokens: number): number {
  return Math.max(8192, 2 ** Math.ceil(Math.log2(tokens)));
}

/** Whether the target's `max_model_len` covers the longest lesson request (prompt with chat template + max_tokens). */
export async function checkMaxModelLen(info: TargetInfo): Promise<Check> {
  const name = 'max_model_len';
  const sized = await Promise.all(longestLessonRequests().map(async (r) => ({ ...r, ...(await chatTokens(r.spec, info)) })));
  const longest = sized.reduce((a, b) => (b.count + (b.spec.maxTokens ?? 0) > a.count + (a.spec.maxTokens ?? 0) ? b : a));
  const need = longest.count + (longest.spec.maxTokens ?? 0);
  const what = `longest lesson request: ${longest.what}, ${longest.count.toLocaleString('en-US')} prompt tokens (chat template included, counted by ${longest.how}) + max_tokens ${longest.spec.maxTokens} = ${need.toLocaleString('en-US')}`;
  if (info.maxModelLen === undefined) {
    const fine = info.mode === 'launched';
    return { name, level: 'optional', ok: fine, detail: `${what}; the server's max_model_len is unknown${fine ? ' until LoadLab launches vLLM' : ''}`, ...(fine ? {} : { fix: `curl -s ${info.baseUrl}/v1/models  # look for max_model_len` }) };
  }
  const ok = info.maxModelLen >= need;
  return {
    name, level: 'required', ok,
    detail: `${what} ${ok ? '≤' : '>'} max_model_len ${info.maxModelLen.toLocaleString('en-US')}`,
    ...(ok ? {} : { fix: `vllm serve <model path> --port 8000 --max-model-len ${recommendedMaxModelLen(need)}  # restart vLLM` }),
  };
}

/**
 * Fraction of GPU memory vLLM asks to be free at start: `--gpu-memory-utilization`, default 0.92
 * (vllm/config/cache.py; 0.9 in older releases), checked in `Worker.init_device` (vllm/v1/worker/gpu_worker.py).
 */
export const VLLM_DEFAULT_GPU_UTIL = 0.92;

/** `nvidia-smi`: the GPU(s), their free memory, and whether something already holds them. Optional unless LoadLab is to launch vLLM. */
export function checkGpu(mode: TargetMode, bin = 'nvidia-smi', env: NodeJS.ProcessEnv = process.env): Check {
  const name = 'GPU';
  const level = mode === 'launched' ? 'required' : 'optional';
  const exe = which(bin, env.PATH);
  if (!exe) {
    return { name, level, ok: false, detail: `no ${bin} on PATH: no NVIDIA GPU here; the lessons use the simulator`, fix: 'on AutoDL: start the instance with its GPU (not 无卡模式), then open a new terminal' };
  }
  const q = spawnSync(exe, [`--query-gpu=${GPU_QUERY_FIELDS.join(',')}`, '--format=csv,noheader,nounits'], { encoding: 'utf8', timeout: 15_000 });
  const gpus = (q.stdout ?? '').split('\n').map((l) => parseGpuQueryLine(l, 0)).filter((s) => s?.memTotalMiB !== undefined && s.memUsedMiB !== undefined);
  if (q.status !== 0 || !gpus.length) {
    const why = ((q.stdout ?? '') + (q.stderr ?? '')).trim().split('\n')[0] || `exit ${q.status}`;
    return { name, level, ok: false, detail: `${bin} failed: ${why}`, fix: 'nvidia-smi  # read its message; on AutoDL restart the instance with its GPU' };
  }
  const apps = spawnSync(exe, ['--query-compute-apps=pid,process_name,used_memory', '--format=csv,noheader,nounits'], { encoding: 'utf8', timeout: 15_000 });
  const procs = (apps.stdout ?? '').split('\n').map((l) => l.split(',').map((c) => c.trim())).filter((c) => c.length === 3 && /^\d+$/.test(c[0]));
  const parts = gpus.map((g) => `GPU ${g!.gpu}: ${(g!.memTotalMiB! - g!.memUsedMiB!).toLocaleString('en-US')} MiB free of ${g!.memTotalMiB!.toLocaleString('en-US')} MiB`);
  const held = gpus.filter((g) => g!.memTotalMiB! - g!.memUsedMiB! < VLLM_DEFAULT_GPU_UTIL * g!.memTotalMiB!);
  const who = procs.length ? `; processes: ${procs.map((c) => `${c[1]} (pid ${c[0]}, ${c[2]} MiB)`).join(', ')}` : '';
  if (!held.length) return { name, level, ok: true, detail: parts.join('; ') + who };
  const expected = mode === 'external';
  return {
    name, level, ok: expected,
    detail: `${parts.join('; ')}${who}: ${held.map((g) => `${g!.memUsedMiB!.toLocaleString('en-US')} MiB`).join(', ')} already in use` +
      (expected ? ' (expected while your vLLM at LOADLAB_BASE_URL runs)' : `, less free than vLLM's default --gpu-memory-utilization ${VLLM_DEFAULT_GPU_UTIL} needs: another process holds the GPU`),
    ...(expected ? {} : { fix: 'pkill -f "vllm serve"  # or stop what nvidia-smi lists, e.g. a kernel that still runs vLLM' }),
  };
}

/** Whether `port` (default `LOADLAB_VLLM_PORT` or 8000) on 127.0.0.1 is taken, and whether that matters for this mode. */
export async function checkVllmPort(mode: TargetMode, baseUrl?: string, env: NodeJS.ProcessEnv = process.env): Promise<Check> {
  const port = Number(env.LOADLAB_VLLM_PORT ?? 8000);
  const name = `port ${port}`;
  const taken = await checkPort(port, '127.0.0.1').catch(() => ({ inUse: false, how: undefined }));
  if (!taken.inUse) return { name, level: 'optional', ok: true, detail: `free (vllm serve --port ${port} can start)` };
  const how = taken.how === 'listening' ? 'something answers there' : 'a socket is bound to it';
  let ours = false;
  try {
    const u = baseUrl ? new URL(baseUrl) : undefined;
    ours = mode === 'external' && !!u && /^(127\.0\.0\.1|localhost|0\.0\.0\.0|\[::1\])$/.test(u.hostname) && Number(u.port || 80) === port;
  } catch { /* not a URL */ }
  if (ours) return { name, level: 'optional', ok: true, detail: `in use by the server at LOADLAB_BASE_URL (${baseUrl})` };
  return {
    name, level: mode === 'launched' ? 'required' : 'optional', ok: false,
    detail: `already in use (${how})${mode === 'sim' ? ': the simulator does not need it, but a vllm serve on this port would fail' : ''}`,
    fix: `ss -ltnp | grep :${port}  # shows who holds it; stop it, e.g. pkill -f "vllm serve"`,
  };
}
