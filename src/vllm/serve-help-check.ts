/**
 * The flags of the installed `vllm serve`, read from its help text, and the check of a command
 * line against them. Pure: help text in, flag names out; argv in, refusals out.
 *
 * vLLM's help is argparse's, grouped by config class (`vllm/utils/argparse_utils.py`,
 * `FlexibleArgumentParser.format_help` and `SortedHelpFormatter`): inside each group an option line
 * starts with exactly two spaces, then its option strings separated by `, ` (e.g.
 * `  --enable-prefix-caching, --no-enable-prefix-caching`, `  -tp TENSOR_PARALLEL_SIZE, --tensor-parallel-size …`).
 * Epilog lines (the JSON tip) are indented by three spaces and descriptions by more, so they are
 * not taken for options.
 */

/** A flag this vLLM once had, and what to do instead, with the vLLM source the advice rests on. */
export interface RetiredFlag {
  /** What to do instead. */
  advice: string;
  /** The vLLM source or PR it rests on. */
  source: string;
}

/** Flags vLLM removed, with the alternative. Keys are long flag names. */
export const RETIRED_FLAGS: Readonly<Record<string, RetiredFlag>> = {
  '--swap-space': {
    advice: 'V1 preempts by recompute only (no CPU swap), so the flag did nothing in V1 and was removed; remove it',
    source: 'vllm/v1/core/sched/scheduler.py (_preempt_request); vLLM PR #36216',
  },
  '--preemption-mode': {
    advice: "V1 always preempts by recompute; the swap/recompute choice was V0's; remove it",
    source: 'vllm/v1/core/sched/scheduler.py (_preempt_request)',
  },
  '--num-scheduler-steps': {
    advice: 'multi-step scheduling was V0-only and was removed; remove it (V1 schedules every step)',
    source: 'vllm/engine/arg_utils.py; vLLM PRs #22138, #22779',
  },
  '--disable-log-requests': {
    advice: 'request logging is off by default now and the switch is --enable-log-requests; remove it',
    source: 'vllm/engine/arg_utils.py; vLLM PR #21739',
  },
  '--task': {
    advice: 'use --runner pooling (and --convert embed|classify|reward) for pooling models; remove it for a chat model',
    source: 'vllm/utils/argparse_utils.py (FlexibleArgumentParser.error)',
  },
};

/**
 * The option strings (`--x`, `--no-x`, `-tp` …) listed in `vllm serve` help text. Empty when the
 * text lists none (e.g. only vLLM's "Config Groups" summary of a plain `--help`).
 */
export function parseServeHelp(text: string): Set<string> {
  const flags = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /^ {2}(-{1,2}[A-Za-z0-9].*)$/.exec(line);
    if (!m) continue;
    const invocation = m[1].split(/ {2,}/)[0]; // the help text starts after two spaces
    for (const part of invocation.split(', ')) {
      const name = /^-{1,2}[A-Za-z0-9][\w.-]*/.exec(part.trim())?.[0];
      if (name) flags.add(name);
    }
  }
  return flags;
}

/** `--max_num_seqs=8` → `--max-num-seqs`; `--compilation-config.level` → `--compilation-config`. */
export function normalizeFlag(arg: string): string {
  const name = arg.split('=')[0].split('.')[0];
  return name.startsWith('--') ? `--${name.slice(2).replace(/_/g, '-')}` : name;
}

/** One flag of the command line that this vLLM does not list. */
export interface UnknownFlag {
  /** As written on the command line. */
  flag: string;
  /** What to do, when the flag is known to be retired. */
  retired?: RetiredFlag;
}

/**
 * The long flags of `args` (what follows `serve <model>`) that `known` does not list. A flag is
 * accepted as written, with `_` for `-` (FlexibleArgumentParser rewrites them), as `--x.key`
 * (vLLM's JSON dot syntax) or as a unique prefix (argparse's `allow_abbrev`, which vLLM keeps).
 * Short flags (`-tp 2`, `-O3`) and values are not checked.
 */
export function unknownFlags(args: readonly string[], known: ReadonlySet<string>): UnknownFlag[] {
  const out: UnknownFlag[] = [];
  for (const arg of args) {
    if (arg === '--') break;
    if (!arg.startsWith('--')) continue;
    const name = normalizeFlag(arg);
    if (known.has(name)) continue;
    const prefixed = [...known].filter((k) => k.startsWith(name));
    if (prefixed.length === 1) continue;
    const retired = RETIRED_FLAGS[name];
    out.push(retired ? { flag: arg, retired } : { flag: arg });
  }
  return out;
}

/** The refusal message for `unknown` flags of vLLM `version`, each with its alternative when one is known. */
export function unknownFlagsMessage(unknown: readonly UnknownFlag[], version: string | undefined): string {
  const lines = unknown.map((u) =>
    u.retired
      ? `  ${u.flag}: ${u.retired.advice} (${u.retired.source})`
      : `  ${u.flag}: not in this vLLM's \`vllm serve --help=all\`; check the spelling, or upgrade vLLM (\`pip install -U vllm\`) if a newer one has it`,
  );
  return [
    `vLLM ${version ?? '(version unknown)'} does not have ${unknown.length === 1 ? 'this flag' : 'these flags'}, so it would refuse to start:`,
    ...lines,
    'Nothing was started. Remove or replace the flag(s) and launch again.',
  ].join('\n');
}
