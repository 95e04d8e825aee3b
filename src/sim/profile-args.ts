/**
 * The simulator's LoadLab-only profile flags, kept apart from the `vllm serve` vocabulary
 * (`src/vllm/flags.ts`), since no vLLM has them: `--profile NAME|FILE` picks the GPU + model profile
 * (`profiles/*.json`), `--print-profile [NAME|FILE]` prints one and exits.
 */
import { DEFAULT_PROFILE_NAME, listProfiles } from './engine/profile-file';

/** `argv` split into the profile flags and the rest (`vllm serve` flags for `parseServeArgs`). */
export interface ProfileArgs {
  /** `--profile` value; undefined = the default profile. */
  profile?: string;
  /** `--print-profile`: `true` without a value (print `profile`, or the default), else the NAME|FILE given. */
  printProfile?: string | true;
  /** Every other argument, in order. */
  rest: string[];
}

/**
 * Take `--profile NAME|FILE` (or `--profile=…`) and `--print-profile [NAME|FILE]` out of `argv`. The last
 * `--profile` wins, as argparse does. Throws, naming the fix, when `--profile` has no value.
 */
export function splitProfileArgs(argv: readonly string[]): ProfileArgs {
  const out: ProfileArgs = { rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=')
        ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
        : [arg, undefined];
    if (name === '--profile') {
      const v = inline ?? argv[++i];
      if (v === undefined || v === '' || (inline === undefined && v.startsWith('-'))) {
        throw new Error(
          `--profile needs a NAME or FILE, e.g. --profile ${DEFAULT_PROFILE_NAME} (\`loadlab sim --help\` lists them all)`,
        );
      }
      out.profile = v;
    } else if (name === '--print-profile') {
      const next = argv[i + 1];
      if (inline !== undefined) out.printProfile = inline;
      else if (next !== undefined && !next.startsWith('-')) out.printProfile = argv[++i];
      else out.printProfile = true;
    } else {
      out.rest.push(arg);
    }
  }
  return out;
}

/** The help section of the profile flags, with the shipped profile names. */
export function profileFlagsHelp(): string {
  return [
    'LoadLab-only flags (not `vllm serve` flags; a real vLLM has no profile):',
    `  ${'--profile NAME|FILE'.padEnd(46)} GPU + model the simulator models: a file stem under profiles/ or a JSON file (default $LOADLAB_SIM_PROFILE, else ${DEFAULT_PROFILE_NAME}).`,
    `  ${'--print-profile [NAME|FILE]'.padEnd(46)} Print that profile's JSON (default: the --profile one, else the default) and exit.`,
    '',
    'Shipped profiles (spec-derived, not calibrated):',
    ...listProfiles().map((p) => `  ${p}`),
  ].join('\n');
}
