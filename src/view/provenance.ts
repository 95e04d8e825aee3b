/**
 * Where a run's numbers come from, read from the run's own manifest (`manifest.target`), never
 * from the server a notebook talks to now: a run measured on the simulator stays labelled
 * "(simulated)" when it is shown again next to, or instead of, runs from a real GPU.
 */

/** Anything that carries a run manifest's `target` (a `RunResult`, `MeasureResult`, `LoadedRun`, or the manifest). */
export type RunLike =
  | { manifest: { target: { simulated?: boolean; kind?: string; serverVersion?: string } } }
  | { target: { simulated?: boolean; kind?: string; serverVersion?: string } };

/**
 * What a table or chart is labelled from: `true`/`false` (the caller says), one run, or several
 * runs (each labelled from its own manifest).
 */
export type Provenance = boolean | RunLike | readonly RunLike[];

function targetOf(run: RunLike): { simulated?: boolean; kind?: string; serverVersion?: string } {
  return 'manifest' in run ? run.manifest.target : run.target;
}

/** True when the run's manifest says the simulator measured it. */
export function runSimulated(run: RunLike): boolean {
  return targetOf(run).simulated === true;
}

/**
 * `'simulated'` (every run simulated), `'real'` (none), `'mixed'`, or `undefined` when there is
 * nothing to go on (`undefined`, `false` and an empty list mean "not labelled simulated").
 */
export function provenanceOf(p: Provenance | undefined): 'simulated' | 'real' | 'mixed' | undefined {
  if (p === undefined) return undefined;
  if (typeof p === 'boolean') return p ? 'simulated' : undefined;
  const runs: readonly RunLike[] = Array.isArray(p) ? p : [p as RunLike];
  if (runs.length === 0) return undefined;
  const sims = runs.filter(runSimulated).length;
  return sims === runs.length ? 'simulated' : sims === 0 ? 'real' : 'mixed';
}

/** The suffix a caption or title gets: `' (simulated)'`, `' (simulated and real runs mixed)'`, or `''`. */
export function provenanceSuffix(p: Provenance | undefined): string {
  const what = provenanceOf(p);
  return what === 'simulated' ? ' (simulated)' : what === 'mixed' ? ' (simulated and real runs mixed)' : '';
}

/** Short per-run label for a table column: `simulated 0.19.0`, `vLLM 0.11.0`, or the kind. */
export function runServerLabel(run: RunLike): string {
  const t = targetOf(run);
  const what = t.simulated ? 'simulated' : t.kind === 'vllm' ? 'vLLM' : (t.kind ?? 'unknown');
  return t.serverVersion ? `${what} ${t.serverVersion}` : what;
}
