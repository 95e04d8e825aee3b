/**
 * What this server will show, said before a lesson measures (issue #12): given the opened target
 * (simulated or real, engine V0/V1/unknown from `src/observe/engine.ts`, version, effective config)
 * and a lesson's topic, the Simplified-Chinese sentences that say which scheduling rules apply.
 * Every sentence about vLLM names the vLLM source file it rests on:
 * - V1: `vllm/v1/core/sched/scheduler.py` (`schedule()`, `_preempt_request`), `vllm/engine/arg_utils.py`
 *   (defaults), `vllm/v1/core/kv_cache_utils.py` (block hashes), `vllm/v1/metrics/loggers.py` (series).
 * - V0 (0.6.x): `vllm/core/scheduler.py` (`_schedule_default`, `_schedule_chunked_prefill`, `_preempt`,
 *   `_swap_out`), `vllm/engine/arg_utils.py` of 0.6.x (`EngineArgs`: `swap_space` 4, `preemption_mode`
 *   None, `enable_prefix_caching` False, later None → `bool(envs.VLLM_USE_V1)`; `create_engine_config`:
 *   chunked prefill by default only for `max_model_len > 32768`), `vllm/engine/metrics.py` (V0's series).
 * - The simulator schedules by V1's rules whatever `--vllm-version` it emulates (`src/sim/http/generation.ts`).
 * Pure: no I/O; the target's facts in, sentences out.
 */
import type { EffectiveConfig } from '../observe/effective-config';
import type { ServerFlags } from '../vllm/flag-types';
import { versionParts } from '../sim/http/generation';

/** A lesson topic whose phenomenon depends on the engine. */
export type EngineTopic = 'chunked-prefill' | 'preemption' | 'prefix-caching';

/** What `engineNote` reads of a target (a `LessonTarget` fits; tests build it directly). */
export interface EngineNoteTarget {
  /** The numbers come from LoadLab's simulator. */
  simulated: boolean;
  /** Flags the lesson asked for (default none). */
  flags?: ServerFlags;
  /** What the server reported: engine, evidence, version, `vllm:cache_config_info` labels, model cards. */
  config: Pick<EffectiveConfig, 'engine' | 'engineEvidence' | 'version' | 'cacheConfig' | 'models'>;
}

/** The note for one topic. */
export interface EngineNote {
  topic: EngineTopic;
  /** Whose rules the server schedules by: `V1` (also the simulator), `V0`, or `unknown`. */
  rules: 'V0' | 'V1' | 'unknown';
  /** From LoadLab's simulator. */
  simulated: boolean;
  /** Simplified-Chinese sentences, each naming the vLLM source file it rests on; `say(note.sentences)` shows them. */
  sentences: string[];
}

const TOPICS: readonly EngineTopic[] = ['chunked-prefill', 'preemption', 'prefix-caching'];

/** `engine.ts`'s evidence, in Chinese. */
function evidenceZh(evidence: string, version: string | undefined): string {
  const known: Record<string, string> = {
    'V0-only metrics present':
      '`/metrics` 里有只有 V0 才注册的 `vllm:num_requests_swapped` / `vllm:cpu_cache_usage_perc`（V0 的 `vllm/engine/metrics.py`）',
    'metrics carry an engine label': '`/metrics` 的序列带 V1 才加的 `engine` 标签（`vllm/v1/metrics/loggers.py`）',
    'vLLM ≥ 0.11 has no V0': `版本 ${version} ≥ 0.11，而 V0 已从 vLLM 删除（vLLM PR #25033）`,
    'vLLM < 0.8 has no V1 by default': `版本 ${version} < 0.8，那时默认引擎还是 V0（vLLM PR #15064）`,
    'no telling metrics': `\`/metrics\` 里没有能区分 V0/V1 的序列，版本 ${version ?? '未知'} 也定不下来：vLLM 0.8–0.10 默认 V1，设了 \`VLLM_USE_V1=0\` 或遇到 V1 不支持的功能时退回 V0（\`vllm/engine/arg_utils.py\`）`,
    'not a vLLM server': '它不像 vLLM：没有 `vllm:` 指标，`/v1/models` 也没有 `owned_by: vllm`',
    'not read': '没有读到 `/metrics` 和 `/version`',
  };
  return known[evidence] ?? `\`${evidence}\``;
}

/** The opening sentence: which server this is and whose rules it follows. */
function header(t: EngineNoteTarget): string {
  const v = t.config.version;
  if (t.simulated) {
    const parts = v ? versionParts(v) : undefined;
    const wire = parts && parts[0] === 0 && parts[1] < 8 ? 'V0' : 'V1';
    return (
      `这是 LoadLab 的**模拟**服务器：接口和 \`/metrics\` 的名字模拟 vLLM ${v ?? '（版本未报告）'}（${wire}），` +
      '但调度**始终按 V1 的规则**（`vllm/v1/core/sched/scheduler.py`；这个偏差写在 `src/sim/http/generation.ts`）。下面按 V1 说，数字都是模拟的。'
    );
  }
  const e = t.config.engine;
  const why = evidenceZh(t.config.engineEvidence, v);
  if (e === 'unknown')
    return `无法判断这个服务器是 V0 还是 V1：${why}。下面把两种引擎的规则都列出来，测到的结果会告诉你是哪一种。`;
  return `这个服务器是 vLLM ${v ?? '（版本未报告）'}，引擎 **${e}**（依据：${why}；判断规则见 \`src/observe/engine.ts\`）。`;
}

function maxModelLen(t: EngineNoteTarget): number | undefined {
  return t.flags?.maxModelLen ?? t.config.models[0]?.maxModelLen;
}

function chunkedV1(): string[] {
  return [
    'V1 默认**开启**分块预填充：不给 `--enable-chunked-prefill` 时按模型是否支持来定（生成模型为开），`--no-enable-chunked-prefill` 可以关掉，vLLM 只打印一条警告（`vllm/engine/arg_utils.py`）。',
    'V1 每一步先给 RUNNING 里的请求分预算（解码拿 1 个 token，没算完的预填充接着拿下一块），剩下的才接纳 WAITING 的新请求；预填充和解码同在一步里（`vllm/v1/core/sched/scheduler.py` 的 `schedule()`）。`--long-prefill-token-threshold` 限制单个请求每步的预填充份额，默认 0 即不限（`vllm/config/scheduler.py`）。',
  ];
}

function chunkedV0(t: EngineNoteTarget): string[] {
  const len = maxModelLen(t);
  const asked = t.flags?.enableChunkedPrefill;
  const now =
    asked !== undefined
      ? `本课这一点要求${asked ? '打开' : '关闭'}分块。`
      : len === undefined
        ? '这个服务器没有报告 `max_model_len`，所以默认是开是关定不下来。'
        : `这个服务器 \`max_model_len\` = ${len}，${len > 32768 ? '超过 32768，默认会打开（若其余条件都满足）' : '不超过 32768，所以默认**关闭**'}。`;
  return [
    'V0（0.6.x）默认**不**分块：不给 `--enable-chunked-prefill` 时，只有 `max_model_len > 32768` 时才自动打开（还要满足几个条件，如在 CUDA GPU 上、没有滑动窗口和投机解码）' +
      `（\`vllm/engine/arg_utils.py\`：0.6.x 的 \`create_engine_config\`，0.8–0.10 的 \`_set_default_args_v0\`）。${now}`,
    '不分块时 V0 用 `_schedule_default`（`vllm/core/scheduler.py`）：先尽量接纳新请求的整段预填充，**这一步只要排了预填充就不排解码**，所以一个长 prompt 的预填充会让所有正在出字的请求停一整步。',
    '打开分块后 V0 用 `vllm/core/scheduler.py` 的 `_schedule_chunked_prefill`：先排解码，再排没算完的分块预填充，再换入被 swap 的请求，最后接纳新请求——和 V1 一样先 RUNNING、后 WAITING。',
    '较老的 vLLM 可能没有 `--long-prefill-token-threshold`：LoadLab 启动 vLLM 前会按 `vllm serve --help=all` 检查，缺的参数在加载模型之前就被拒绝（`src/vllm/serve-help-check.ts`）。',
  ];
}

function preemptionV1(): string[] {
  return [
    'V1 的抢占**只有重算（recompute）**：KV 块用完时，调度器抢占 RUNNING 里最后进来的请求，释放它的全部块、把已计算的 token 数归零、放回 WAITING 队头，恢复时重新预填充（`vllm/v1/core/sched/scheduler.py` 的 `_preempt_request`）。',
    'V1 没有 swap：`--swap-space`、`--preemption-mode` 在 V1 里不起作用，后来被删除（`vllm/engine/arg_utils.py`；vLLM PR #36216），所以在真实的 V1 上 swap 那一点跳过。抢占看 `vllm:num_preemptions_total`；V1 的 `/metrics` 没有 `vllm:num_requests_swapped`（`vllm/v1/metrics/loggers.py`）。',
  ];
}

function preemptionV0(t: EngineNoteTarget): string[] {
  const mode = t.flags?.preemptionMode;
  return [
    'V0 的 `_preempt`（`vllm/core/scheduler.py`）：没给 `--preemption-mode` 时，单序列请求（`n=1`，本课的请求都是）用**重算**，多序列（`n>1`、beam search）才 swap；给了 `--preemption-mode swap` 就一律 swap。' +
      (mode
        ? `这一点要求 \`--preemption-mode ${mode}\`${t.flags?.swapSpace !== undefined ? ` \`--swap-space ${t.flags.swapSpace}\`` : ''}。`
        : ''),
    'swap 把被抢占请求的 KV 块经 PCIe 搬到 CPU 内存，容量由 `--swap-space` 决定（默认 4 GiB，`vllm/engine/arg_utils.py`）；CPU 上放不下时 V0 报错 “Aborted due to the lack of CPU swap space” 并停下整个引擎（`_swap_out`）。被换出的请求优先于新请求换回（`_schedule_default` / `_schedule_chunked_prefill`）。',
    '换出的请求数在 `vllm:num_requests_swapped`，CPU 块的占用在 `vllm:cpu_cache_usage_perc`（V0 的 `vllm/engine/metrics.py`）；抢占次数在 `vllm:num_preemptions_total`。',
  ];
}

function preemptionSim(): string[] {
  return [
    '模拟器另有 swap 模式（`--preemption-mode swap --swap-space 4`，仿 V0 显式要求 swap 时的路径），只在模拟器上测、标为模拟；一处偏差：CPU 块不够时它退回重算，而 V0 会报错（`vllm/core/scheduler.py` 的 `_swap_out`）。' +
      '换出、换入的块数在 `loadlab:sim_swap_out_blocks_total` / `loadlab:sim_swap_in_blocks_total`；`/metrics` 带有换出请求数（V0 的 `vllm:num_requests_swapped`）时，时间线会画出它。',
  ];
}

function cacheShown(t: EngineNoteTarget): string[] {
  const v = t.config.cacheConfig?.enable_prefix_caching;
  return v === undefined ? [] : [`这个服务器的 \`vllm:cache_config_info\` 显示 \`enable_prefix_caching=${v}\`。`];
}

function prefixV1(): string[] {
  return [
    'V1 默认**开启**自动前缀缓存：不给 `--enable-prefix-caching` 时按模型是否支持来定（`vllm/engine/arg_utils.py`）；只缓存完整的 16-token 块，按“父块哈希 + 本块 token”的链式哈希匹配（`vllm/v1/core/kv_cache_utils.py`）。',
    '命中率看两个计数器 `vllm:prefix_cache_queries_total` / `vllm:prefix_cache_hits_total`，单位都是 token（`vllm/v1/metrics/loggers.py`）。',
  ];
}

function prefixV0(): string[] {
  return [
    'V0（0.6.x）默认**关闭**前缀缓存：不给 `--enable-prefix-caching` 时为假（`vllm/engine/arg_utils.py` 的 `EngineArgs`：早期 0.6 的默认值就是 False，后来在 `__post_init__` 里取 `bool(envs.VLLM_USE_V1)`，V0 下仍为假）；要看到命中，必须显式加 `--enable-prefix-caching`。',
    'V0 的 `/metrics` 只有命中率仪表 `vllm:gpu_prefix_cache_hit_rate`（V0 的 `vllm/engine/metrics.py`），没有 V1 的 token 计数器 `vllm:prefix_cache_queries_total` / `hits_total`；LoadLab 只读计数器，所以在 V0 上按计数器算的命中率是空的（—），只能看 TTFT。',
  ];
}

function v1Sentences(topic: EngineTopic): string[] {
  return topic === 'chunked-prefill' ? chunkedV1() : topic === 'preemption' ? preemptionV1() : prefixV1();
}

function v0Sentences(topic: EngineTopic, t: EngineNoteTarget): string[] {
  return topic === 'chunked-prefill' ? chunkedV0(t) : topic === 'preemption' ? preemptionV0(t) : prefixV0();
}

/**
 * The note for `topic` on `target`: an opening sentence (which server, whose rules, and why),
 * then what this server will show, each sentence with its vLLM source file. A simulated target is
 * described by V1's rules (plus its swap mode for `preemption`); an `unknown` engine gets both
 * V1's and V0's rules, each marked. Throws, naming the topics, on an unknown topic.
 */
export function engineNote(target: EngineNoteTarget, topic: EngineTopic): EngineNote {
  if (!TOPICS.includes(topic)) throw new TypeError(`topic must be one of ${TOPICS.join(', ')}, got ${JSON.stringify(topic)}`);
  const rules: EngineNote['rules'] = target.simulated ? 'V1' : target.config.engine;
  const body =
    rules === 'V1'
      ? [...v1Sentences(topic), ...(target.simulated && topic === 'preemption' ? preemptionSim() : [])]
      : rules === 'V0'
        ? v0Sentences(topic, target)
        : [...v1Sentences(topic).map((s) => `若是 V1：${s}`), ...v0Sentences(topic, target).map((s) => `若是 V0：${s}`)];
  const shown = topic === 'prefix-caching' ? cacheShown(target) : [];
  return { topic, rules, simulated: target.simulated, sentences: [header(target), ...body, ...shown] };
}

/** Whether a lesson can measure swap preemption on `target`, and why (Chinese, with its vLLM source). */
export interface SwapPlan {
  /** True on the simulator (its swap mode) and on a real V0 vLLM (`--preemption-mode swap`). */
  measurable: boolean;
  /** `simulated`, `V0`, or undefined when not measurable. */
  how?: 'simulated' | 'V0';
  /** One Chinese sentence: what will be measured, or why the point is skipped. */
  reason: string;
}

/**
 * Can swap preemption be measured here? On the simulator: its swap mode (labelled simulated). On a
 * real V0 vLLM: for real, with `--swap-space` and `--preemption-mode swap` (`vllm/core/scheduler.py`
 * `_preempt`). On V1 or an undecided engine: no (V1 preempts by recompute only).
 */
export function swapPlan(target: EngineNoteTarget): SwapPlan {
  if (target.simulated)
    return {
      measurable: true,
      how: 'simulated',
      reason: '模拟器的 swap 模式：仿 V0 的 `--preemption-mode swap`，数字是模拟的。',
    };
  if (target.config.engine === 'V0')
    return {
      measurable: true,
      how: 'V0',
      reason:
        '这是真实的 vLLM V0：用 `--swap-space 4 --preemption-mode swap` 重启后真实地测 swap（`vllm/core/scheduler.py` 的 `_preempt`）。',
    };
  const why =
    target.config.engine === 'V1'
      ? 'vLLM V1 只有重算（`vllm/v1/core/sched/scheduler.py` 的 `_preempt_request`），`--swap-space` / `--preemption-mode` 在 V1 里不起作用、后来被删除（`vllm/engine/arg_utils.py`）'
      : `无法判断这个服务器是 V0 还是 V1（${evidenceZh(target.config.engineEvidence, target.config.version)}），而在 V1 上这两个参数不起作用，测出来的只会是重算`;
  return { measurable: false, reason: `跳过 swap：${why}。` };
}
