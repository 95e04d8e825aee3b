/**
 * Why did `vllm serve` die before it became healthy? Recognises the common causes in its log
 * and says what to do, for a reader who is learning. Pure: log lines in, a diagnosis out.
 * The patterns are the messages vLLM, PyTorch, argparse and huggingface_hub print.
 */

/** Which kind of failure the log shows. */
export type LaunchFailureKind =
  | 'bad_flag'
  | 'bad_value'
  | 'gpu_busy'
  | 'oom'
  | 'kv_too_small'
  | 'model_not_found'
  | 'download_failed'
  | 'port_in_use'
  | 'no_gpu'
  | 'not_found'
  | 'unknown';

/** A recognised cause and the advice for it. */
export interface LaunchDiagnosis {
  kind: LaunchFailureKind;
  /** One or two sentences: what happened and what to do. */
  advice: string;
  /** The log line that gave it away, when there is one. */
  evidence?: string;
}

/** What was launched, for the advice. */
export interface LaunchContext {
  model: string;
  port: number;
  /** Exit code (127 = command not found) or undefined if killed by a signal. */
  exitCode?: number | null;
}

interface Rule {
  kind: LaunchFailureKind;
  re: RegExp;
  advice: (m: RegExpMatchArray, ctx: LaunchContext) => string;
}

const FREE_GPU = 'Check `nvidia-smi` for other processes on the GPU (an old vLLM? `pkill -f "vllm serve"`).';

const RULES: Rule[] = [
  {
    kind: 'bad_flag',
    re: /unrecognized arguments: (.+)$/,
    advice: (m) =>
      `this vLLM version rejects flag ${m[1].trim()}: it is not in this vLLM's \`vllm serve --help\` (renamed, removed, or newer than the installed vLLM). Drop it from the flags, or check \`vllm --version\` against the flag table in src/vllm/flags.ts.`,
  },
  {
    kind: 'bad_flag',
    re: /error: ambiguous option: (\S+)/,
    advice: (m) =>
      `this vLLM version rejects flag ${m[1]}: it is ambiguous (a prefix of several flags). Write the full flag name.`,
  },
  {
    kind: 'bad_flag',
    re: /unknown flag (--[\w-]+)/,
    advice: (m) => `this server (LoadLab's simulator) rejects flag ${m[1]}; \`loadlab sim --help\` lists the flags it knows.`,
  },
  {
    kind: 'bad_value',
    re: /error: argument (--[\w-]+)[^:]*: (.+)$/,
    advice: (m) => `vLLM rejected the value of ${m[1]}: ${m[2].trim()}.`,
  },
  {
    kind: 'gpu_busy',
    re: /Free memory on device.*less than desired GPU memory utilization/i,
    advice: () =>
      `the GPU does not have the free memory --gpu-memory-utilization asks for: something else holds GPU memory. ${FREE_GPU} Or lower --gpu-memory-utilization.`,
  },
  {
    kind: 'kv_too_small',
    re: /(larger than the maximum number of tokens that can be stored in KV cache|No available memory for the cache blocks|KV cache is needed, which is larger than the available KV cache memory)/i,
    advice: () =>
      'after loading the weights, the KV cache is too small for even one request of --max-model-len tokens. Lower --max-model-len (e.g. 8192) or raise --gpu-memory-utilization.',
  },
  {
    kind: 'oom',
    re: /(CUDA out of memory|OutOfMemoryError|CUDA error: out of memory)/,
    advice: () =>
      `CUDA out of memory while loading or profiling the model. Lower --gpu-memory-utilization, --max-model-len or --max-num-seqs, or use a smaller/quantised model. ${FREE_GPU}`,
  },
  {
    kind: 'port_in_use',
    re: /(Address already in use|\[Errno 98\])/,
    advice: (_m, c) =>
      `port ${c.port} was taken by another process as vLLM started. Stop the old server (\`pkill -f "vllm serve"\`) or choose another port.`,
  },
  {
    kind: 'no_gpu',
    re: /(No CUDA GPUs are available|Found no NVIDIA driver|Failed to infer device type|libcuda\.so[^\n]*(cannot open|not found)|CUDA driver version is insufficient)/i,
    advice: () =>
      'vLLM found no usable NVIDIA GPU/driver. On AutoDL, make sure the instance was started with its GPU (not in "no-GPU mode"); on a machine without a GPU use the simulator (`startSim`).',
  },
  {
    kind: 'download_failed',
    re: /(MaxRetryError|LocalEntryNotFoundError|couldn't connect to 'https:\/\/huggingface\.co'|Network is unreachable|ConnectTimeout|ReadTimeout.*huggingface|Temporary failure in name resolution)/i,
    advice: (_m, c) =>
      `vLLM could not download '${c.model}' (huggingface.co is often unreachable from AutoDL). Set env HF_ENDPOINT=https://hf-mirror.com, or enable AutoDL's network acceleration (\`source /etc/network_turbo\`), or download the model once and pass its local path.`,
  },
  {
    kind: 'model_not_found',
    re: /(HFValidationError|Repo id must be|Repository Not Found|RepositoryNotFoundError|Invalid repository ID or local directory|is not a local folder and is not a valid model identifier|does not appear to have a file named config\.json|No such file or directory[^\n]*config\.json|GatedRepoError|401 Client Error)/,
    advice: (_m, c) =>
      `vLLM could not find model '${c.model}'. Give an existing local folder (with config.json and weights) or a Hugging Face id such as Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4; check the spelling.`,
  },
];

/**
 * The most specific known cause found in `lines` (the last lines of the log; later lines win
 * over earlier ones for the same rule order), or `unknown` with the exit code.
 */
export function diagnoseLaunchFailure(lines: readonly string[], ctx: LaunchContext): LaunchDiagnosis {
  for (const rule of RULES) {
    for (let i = lines.length - 1; i >= 0; i--) {
      const m = lines[i].match(rule.re);
      if (m) return { kind: rule.kind, advice: rule.advice(m, ctx), evidence: lines[i].trim() };
    }
  }
  if (ctx.exitCode === 127) {
    return {
      kind: 'not_found',
      advice:
        'the vllm command (or something it runs) was not found (exit code 127). Activate the Python environment that has vLLM, or set LOADLAB_VLLM_BIN.',
    };
  }
  const how = ctx.exitCode === undefined || ctx.exitCode === null ? 'was killed' : `exited with code ${ctx.exitCode}`;
  return { kind: 'unknown', advice: `vLLM ${how} before it became healthy; read the log lines below for the cause.` };
}
