/**
 * The vLLM generations the simulator can emulate on the wire (`--vllm-version`): the release
 * `GET /version` reports, the engine (V0 or V1) whose `/metrics` names it serves, and the id of
 * its conformance fixtures under `test/fixtures/vllm-wire/`. Scheduling always follows V1's rules
 * (`vllm/v1/core/sched/scheduler.py`); emulating 0.6 changes what the server says, not how it
 * schedules — a named deviation (V0's scheduler, `vllm/core/scheduler.py`, admitted differently).
 */

/** One emulated vLLM generation. */
export interface Generation {
  /** Fixture and table id: `v0.6`, `v0.10`, `v0.19`. */
  id: 'v0.6' | 'v0.10' | 'v0.19';
  /** The release reported by `GET /version`, e.g. `0.19.0`. */
  version: string;
  /** The engine whose metric names `/metrics` serves. V1 is the default from vLLM 0.8.0. */
  engine: 'V0' | 'V1';
}

/** Supported generations, oldest first. The last is the default. */
export const GENERATIONS: readonly Generation[] = [
  { id: 'v0.6', version: '0.6.6', engine: 'V0' },
  { id: 'v0.10', version: '0.10.2', engine: 'V1' },
  { id: 'v0.19', version: '0.19.0', engine: 'V1' },
];

/** The generation emulated without `--vllm-version`. */
export const DEFAULT_GENERATION: Generation = GENERATIONS[GENERATIONS.length - 1];

/** Numeric `[major, minor, patch]` of a version such as `0.10.2` or `0.6.6.post1`; undefined if not one. */
export function versionParts(version: string): [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : undefined;
}

/** True when `version` is at least `min` (both `X.Y[.Z]`); false when `version` does not parse. */
export function versionAtLeast(version: string, min: string): boolean {
  const a = versionParts(version);
  const b = versionParts(min);
  if (!a || !b) return false;
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return true;
}

/**
 * The generation for `--vllm-version` (undefined = the default). `0.6`, `0.6.3` and `0.6.6.post1`
 * all pick `v0.6` and `/version` then reports the version as given (without `v`); a version of
 * another minor release throws, naming the supported ones.
 */
export function resolveGeneration(version?: string): Generation {
  if (version === undefined) return DEFAULT_GENERATION;
  const parts = versionParts(version);
  const gen = parts && GENERATIONS.find((g) => versionParts(g.version)?.slice(0, 2).join('.') === `${parts[0]}.${parts[1]}`);
  if (!gen) {
    const known = GENERATIONS.map((g) => `${g.version} (${g.engine})`).join(', ');
    throw new Error(
      `--vllm-version ${version} is not emulated; the simulator speaks ${known}. Give one of those, or a patch release of the same minor version`,
    );
  }
  const given = version.trim().replace(/^v/, '');
  return { ...gen, version: /^\d+\.\d+$/.test(given) ? gen.version : given };
}
