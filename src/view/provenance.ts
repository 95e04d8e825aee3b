/**
 * Where a run's numbers come from, read from the run's own manifest (`manifest.target`), never
 * from the server a notebook talks to now: a run measured on the simulator stays labelled
 * "(simulated)" when it is shown again next to, or instead of, runs from a real GPU.
 * A run imported from another tool's result file (`target.kind: 'import'`, src/exchange/) is
 * labelled "imported from vllm bench serve", and its server is "unknown" unless the import was told
 * (`--simulated` / `--real`): an unknown server is never shown as a real GPU.
 */

import { DEFAULT_SIM_PROFILE_ID } from '../paths';

/** Anything that carries a run manifest's `target` (a `RunResult`, `MeasureResult`, `LoadedRun`, or the manifest). */
export type RunLike = { manifest: { target: TargetLike } } | { target: TargetLike };

/** The fields of a manifest's `target` that labels read. */
interface TargetLike {
  simulated?: boolean;
  kind?: string;
  serverVersion?: string;
  /** The simulator's profile (src/sim/engine/profile-file.ts); absent = the default one. */
  simProfile?: { id: string; status: string; gpu?: string; model?: string };
}

/**
 * What a table or chart is labelled from: `true`/`false` (the caller says), one run, or several
 * runs (each labelled from its own manifest).
 */
export type Provenance = boolean | RunLike | readonly RunLike[];

function targetOf(run: RunLike): TargetLike {
  return 'manifest' in run ? run.manifest.target : run.target;
}

/** True when the run's manifest says the simulator measured it. */
export function runSimulated(run: RunLike): boolean {
  return targetOf(run).simulated === true;
}

/** True when the run was imported from another tool's result file (`target.kind: 'import'`). */
export function runImported(run: RunLike): boolean {
  return targetOf(run).kind === 'import';
}

/** An imported run whose file and importer did not say simulated or real. */
function serverUnknown(run: RunLike): boolean {
  const t = targetOf(run);
  return t.kind === 'import' && t.simulated === undefined;
}

function runsOf(p: Provenance): readonly RunLike[] {
  return typeof p === 'boolean' ? [] : Array.isArray(p) ? p : [p as RunLike];
}

/**
 * `, profile <id> (<status>)` when the simulated runs ran on profiles other than the default one
 * (RTX 4090 + Qwen2.5-7B-Instruct-GPTQ-Int4), so a spec-derived L40S run is never read as the 4090; else ''.
 */
function profileWords(runs: readonly RunLike[]): string {
  const ids = [...new Set(runs.filter(runSimulated).map((r) => targetOf(r).simProfile?.id ?? DEFAULT_SIM_PROFILE_ID))];
  if (ids.length === 0 || (ids.length === 1 && ids[0] === DEFAULT_SIM_PROFILE_ID)) return '';
  if (ids.length > 1) return `, profiles ${ids.join(' / ')}`;
  const p = runs.map((r) => targetOf(r).simProfile).find((x) => x?.id === ids[0]);
  return `, profile ${ids[0]}${p?.status ? ` (${p.status})` : ''}`;
}

/**
 * `'simulated'` (every run simulated), `'real'` (every run known not simulated), `'unknown'` (none
 * simulated, but some imported from an unknown server), `'mixed'` (simulated with others), or
 * `undefined` when there is nothing to go on (`undefined`, `false` and an empty list mean "not
 * labelled simulated").
 */
export function provenanceOf(p: Provenance | undefined): 'simulated' | 'real' | 'mixed' | 'unknown' | undefined {
  if (p === undefined) return undefined;
  if (typeof p === 'boolean') return p ? 'simulated' : undefined;
  const runs = runsOf(p);
  if (runs.length === 0) return undefined;
  const sims = runs.filter(runSimulated).length;
  if (sims === runs.length) return 'simulated';
  if (sims > 0) return 'mixed';
  return runs.some(serverUnknown) ? 'unknown' : 'real';
}

/**
 * The suffix a caption or title gets: `' (simulated)'`, `' (simulated and real runs mixed)'`, `''`, or
 * for imported runs e.g. `' (imported from vllm bench serve, server unknown)'`,
 * `' (imported from vllm bench serve, simulated)'`, `' (some imported from vllm bench serve, …)'`.
 */
export function provenanceSuffix(p: Provenance | undefined): string {
  const what = provenanceOf(p);
  const runs = p === undefined ? [] : runsOf(p);
  const unknown = runs.some(serverUnknown);
  const base =
    what === 'simulated'
      ? `simulated${profileWords(runs)}`
      : what === 'mixed'
        ? unknown
          ? 'simulated runs mixed with runs from an unknown server'
          : 'simulated and real runs mixed'
        : what === 'unknown'
          ? runs.every(serverUnknown)
            ? 'server unknown'
            : 'some from an unknown server'
          : '';
  const imported = runs.filter(runImported).length;
  if (imported === 0) return base ? ` (${base})` : '';
  const from = `${imported === runs.length ? '' : 'some '}imported from vllm bench serve`;
  return ` (${from}${base ? `, ${base}` : ''})`;
}

/**
 * Short per-run label for a table column: `simulated 0.19.0`, `vLLM 0.11.0`, the kind, or for an
 * import `imported (server unknown)`, `imported (simulated)`, `imported (real server)`.
 */
export function runServerLabel(run: RunLike): string {
  const t = targetOf(run);
  if (t.kind === 'import') {
    const server = t.simulated === undefined ? 'server unknown' : t.simulated ? 'simulated' : 'real server';
    return `imported (${server}${t.serverVersion ? ` ${t.serverVersion}` : ''})`;
  }
  const what = t.simulated ? 'simulated' : t.kind === 'vllm' ? 'vLLM' : (t.kind ?? 'unknown');
  return t.serverVersion ? `${what} ${t.serverVersion}` : what;
}
