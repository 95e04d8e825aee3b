/**
 * The printed table of `calibration-live.ts`: per point the hidden-profile server's measured figure,
 * the calibrated server's, their relative error, the engine-side predictions beside them, and each
 * live run's health flags with the 1-minute load average.
 */

/** One live run's figures and health. */
export interface Live {
  /** Closed loops: steady output tokens/s; the mix: TTFT p50, ms. */
  value: number;
  completed: number;
  failed: number;
  /** Prompt tokens served from the prefix cache (`usage.prompt_tokens_details.cached_tokens`), summed. */
  cachedTokens: number;
  clientBound: boolean;
  simBehind: boolean;
  /** 1-minute load average after the run. */
  load1: number;
}

/** A point measured on both servers, with the engine-side predictions of the same shape. */
export interface LivePoint {
  hidden: Live;
  calibrated: Live;
  /** calibrated / hidden − 1 (a fraction). */
  error: number;
  engineHidden: number;
  engineFitted: number;
  /** engineFitted / engineHidden − 1. */
  engineError: number;
}

/** One seed's figures: closed loops (tokens/s) and the mix (TTFT p50, ms). */
export interface LiveRow {
  seed: number;
  /** s */
  calibrationWallSeconds: number;
  closed: (LivePoint & { c: number })[];
  mix: LivePoint & { requests: number };
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)} %`;
const flags = (l: Live) =>
  [
    l.clientBound ? 'client-bound' : '',
    l.simBehind ? 'sim-behind' : '',
    l.failed ? `${l.failed} failed` : '',
    l.cachedTokens ? `${l.cachedTokens} cached tokens` : '',
  ]
    .filter(Boolean)
    .join(' ') || 'ok';

/** The printed table of one seed: live figures, their error, the engine-side predictions, each run's health. */
export function tableLines(r: LiveRow): string[] {
  const out = [
    `seed ${r.seed}: calibration (quick plan) ${r.calibrationWallSeconds} s`,
    '  point           hidden meas.  calibr. meas.  error     | engine hidden  engine fitted  error    | health hidden / calibr. (load1)',
  ];
  for (const p of r.closed)
    out.push(
      `  tput c=${String(p.c).padEnd(3)} tok/s ${p.hidden.value.toFixed(1).padStart(9)} ${p.calibrated.value.toFixed(1).padStart(14)}  ${pct(p.error).padStart(8)}  | ` +
        `${p.engineHidden.toFixed(1).padStart(13)} ${p.engineFitted.toFixed(1).padStart(14)}  ${pct(p.engineError).padStart(7)}  | ` +
        `${flags(p.hidden)} / ${flags(p.calibrated)} (${p.hidden.load1.toFixed(2)} / ${p.calibrated.load1.toFixed(2)})`,
    );
  const m = r.mix;
  out.push(
    `  mix TTFT p50 ms     ${m.hidden.value.toFixed(1).padStart(9)} ${m.calibrated.value.toFixed(1).padStart(14)}  ${pct(m.error).padStart(8)}  | ` +
      `${m.engineHidden.toFixed(1).padStart(13)} ${m.engineFitted.toFixed(1).padStart(14)}  ${pct(m.engineError).padStart(7)}  | ` +
      `${flags(m.hidden)} / ${flags(m.calibrated)} (${m.hidden.load1.toFixed(2)} / ${m.calibrated.load1.toFixed(2)})`,
  );
  return out;
}
